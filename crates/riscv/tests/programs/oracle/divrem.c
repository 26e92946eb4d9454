#include "sylib.h"
int vals[17] = {0, 1, -1, 7, -7, 100, -100, 2147483647, (int)-2147483648LL, 123456789, -987654321, 65536, -65537, 999, -1000, 4095, -4096};
int main(){ for (int i = 0; i < 17; i++) { int v = vals[i];
  putint(v / (1)); putch(32); putint(v % (1)); putch(32);
  putint(v / (2)); putch(32); putint(v % (2)); putch(32);
  putint(v / (-2)); putch(32); putint(v % (-2)); putch(32);
  putint(v / (4)); putch(32); putint(v % (4)); putch(32);
  putint(v / (8)); putch(32); putint(v % (8)); putch(32);
  putint(v / (-8)); putch(32); putint(v % (-8)); putch(32);
  putint(v / (16)); putch(32); putint(v % (16)); putch(32);
  putint(v / (1024)); putch(32); putint(v % (1024)); putch(32);
  putint(v / (4096)); putch(32); putint(v % (4096)); putch(32);
  putint(v / (3)); putch(32); putint(v % (3)); putch(32);
  putint(v / (5)); putch(32); putint(v % (5)); putch(32);
  putint(v / (6)); putch(32); putint(v % (6)); putch(32);
  putint(v / (7)); putch(32); putint(v % (7)); putch(32);
  putint(v / (-7)); putch(32); putint(v % (-7)); putch(32);
  putint(v / (10)); putch(32); putint(v % (10)); putch(32);
  putint(v / (13)); putch(32); putint(v % (13)); putch(32);
  putint(v / (641)); putch(32); putint(v % (641)); putch(32);
  putint(v / (1000000007)); putch(32); putint(v % (1000000007)); putch(32);
  putint(v / (1073741824)); putch(32); putint(v % (1073741824)); putch(32);
  putint(v / (-1073741824)); putch(32); putint(v % (-1073741824)); putch(32);
  putint(v / (2147483647)); putch(32); putint(v % (2147483647)); putch(32);
  putint(v / (-2147483647)); putch(32); putint(v % (-2147483647)); putch(32);
  putint(v / (25)); putch(32); putint(v % (25)); putch(32);
  putint(v / (125)); putch(32); putint(v % (125)); putch(32);
  int d = vals[(i + 3) % 17]; if (d != 0) { putint(v / d); putch(32); putint(v % d); }
  unsigned u = (unsigned)v; int s = (int)(u*6u + u*(unsigned)-8 + u*7u + u*9u + u*1000u); putch(32); putint(s);
  putch(10); } return 0; }
