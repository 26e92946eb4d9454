#include "sylib.h"
float g = 0.1f;
void show(int x) { putint(x); putch(32); }
int main() {
  float a = getfloat(), b = getfloat();
  float s = a + b, d = a - b, m = a * b, q = a / b;
  putfloat(s); putch(32); putfloat(d); putch(32); putfloat(m); putch(32); putfloat(q); putch(10);
  show((int)q); show((int)(-q)); show((int)-2.75f);
  float i = (float)-7; float j = i * 0.5f; putfloat(j); putch(10);
  float z = -0.0f; putfloat(z); putch(32); show(z == 0.0f);
  volatile float zero = 0.0f; float nan = zero / zero;
  show(nan == nan); show(nan != nan); show(nan < 1.0f); show(nan >= 1.0f); show(a > b); show(a <= b); putch(10);
  float gp = g; float acc = 0.0f; int k = 0;
  for (;;) { acc = acc + gp; k = k + 1; if (!(k < 10)) break; }
  putfloat(acc); putch(10);
  if (acc < 1.0f) show(1); else show(2);
  if (nan != 0.0f) show(3);
  if (a >= 100.0f) show(4);
  g = acc; float big = g * 1e9f; show((int)big); putch(10);
  return 0;
}
