#include "sylib.h"
int sum(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i]; return s; }
int work(int k) {
  int small[4]; static int mid[2000]; static int big[600000]; float fl[3];
  small[0] = k;
  for (int i = 0; i < 600000; i++) { big[i] = i * 3 + k; mid[i % 2000] = i; }
  putint(big[599999]); putch(10);
  mid[1999] = 77; putint(mid[1999]); putch(10);
  int s1 = sum(&big[300000], 1000); putint(s1); putch(10);
  int s2 = sum(mid, 2000); putint(s2); putch(10);
  fl[2] = 2.5f; int fi = (int)fl[2];
  return small[0] + fi + s1;
}
int main() { int a = work(1); int b = work(a); putint(b); putch(10); return b & 127; }
