#include "sylib.h"
int a0 = 5; int counter; int tab[100] = {1, 2, 3, -4}; int huge[1000000]; float fs[4] = {1.5f, -0.25f}; int errno_ = 3;
void bump(int d) { counter = counter + d; }
int t0(int x) { return x * 2; }
int main() { bump(10); bump(-3); putint(counter); putch(10);
  putint(tab[3]); putch(32); putint(tab[50]); putch(10);
  huge[999999] = 42; int n = a0; putint(huge[n + 999994]); putch(10);
  putfloat(fs[1] + fs[3]); putch(10);
  putint(t0(errno_)); putch(10);
  int s = 0; for (int i = 0; i < 100; i++) s += tab[i]; putint(s); putch(10);
  return n; }
