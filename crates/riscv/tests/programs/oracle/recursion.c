#include "sylib.h"
int ack(int m, int n) { if (m == 0) return n + 1; if (n == 0) return ack(m - 1, 1); return ack(m - 1, ack(m, n - 1)); }
int odd(int n);
int even(int n) { if (n == 0) return 1; return odd(n - 1); }
int odd(int n) { if (n == 0) return 0; return even(n - 1); }
int frames(int n) { int a[8]; if (n <= 0) return 0; for (int i = 0; i < 8; i++) a[i] = i * n; int rest = frames(n - 1); return a[n % 8] + rest; }
int main() { int a = ack(2, 3); putint(a); putch(10); int b = ack(3, 5); putint(b); putch(10);
  putint(even(100000)); putint(odd(77777)); putch(10); putint(frames(1000)); putch(10); return b; }
