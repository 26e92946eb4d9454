#include "sylib.h"
/* What ../i64.ir computes. Wrapping 64-bit arithmetic is done in unsigned long long;
   (int) of a long long keeps the low 32 bits (gcc). */
typedef long long ll;
typedef unsigned long long ull;
int mulmod(int a, int b, int m) { return (int)(((ll)a * (ll)b) % (ll)m); }
void show(int h, int l) { putint(h); putch(32); putint(l); putch(10); }
int main() {
  int a = getint(); int b = getint(); int m = getint(); float x = getfloat(); int n = getint();
  int r1 = mulmod(a, a, m); int r2 = mulmod(a, b, m); show(r1, r2);
  ll g = 1000000000;
  ll wa = a;
  int s = (int)((unsigned)a + (unsigned)a);
  ll wm = m;
  ll prod = (ll)((ull)(ll)s * (ull)wm);
  show((int)(prod / g), (int)(prod % g));
  ll sq = (ll)((ull)wa * (ull)wa);
  ll w = (ll)((ull)sq * 3ull);
  int t = (int)w;
  show(t / 7, t < 0);
  show((int)((ll)t / 65536), (int)((w / 65536) % g));
  ll min = (ll)(1ull << 63);
  ll minq = min; /* i64::MIN / -1 is i64::MIN in the IR (RISC-V div) */
  ll minr = 0;   /* and i64::MIN % -1 is 0 */
  show((int)(minq / 3), (int)minr);
  union { float f; int i; } u; u.f = x; int fb = u.i; u.f = -0.0f; int fz = u.i;
  show(fb, fz);
  show((int)((ll)fb / 65536), (int)((ll)s / 65536));
  ll v[14];
  for (int k = 0; k < 14; k++) v[k] = (ll)((ull)(ll)getint() * (ull)wm);
  putch(10);
  ull acc = (ull)v[0] + (ull)g;
  for (int k = 1; k < 14; k++) { ull e = (ull)v[k] * (ull)(k + 1); if (k % 2) acc -= e; else acc += e; }
  for (int k = 0; k < 14; k++) show((int)(v[k] / g), (int)(v[k] % g));
  show((int)((ll)acc / g), (int)((ll)acc % g));
  ll c = 1, prev = wa;
  for (int i = 0; i < n; i++) { putch(46); ll next = (ll)((ull)c * 3ull + (ull)(ll)i); prev = c; c = next; }
  putch(10);
  show((int)(c / g), (int)(c % g));
  show((int)(prev / g), (int)(prev % g));
  return r1;
}
