#include "sylib.h"
float mix(int p0, float p1, int p2, float p3, int p4, float p5, int p6, float p7, int p8, float p9, int p10, float p11, int p12, float p13, int p14, float p15, int p16, float p17, int p18, float p19) {
  int s = p0; s = s + p2 * 2; s = s + p4 * 3; s = s + p6 * 4; s = s + p8 * 5; s = s + p10 * 6; s = s + p12 * 7; s = s + p14 * 8; s = s + p16 * 9; s = s + p18 * 10;
  float t = p1 + 0.0f; t = t + p3 * 2.0f; t = t + p5 * 3.0f; t = t + p7 * 4.0f; t = t + p9 * 5.0f; t = t + p11 * 6.0f; t = t + p13 * 7.0f; t = t + p15 * 8.0f; t = t + p17 * 9.0f; t = t + p19 * 10.0f;
  return (float)s + t; }
int fl(float f0, float f1, float f2, float f3, float f4, float f5, float f6, float f7, float f8, float f9, int a, int b) { float d = f9 - f8; float e = d * f0; float g = e + f7; int h = (int)g; return a*100 + b + h; }
int rec(int r0, int r1, int r2, int r3, int r4, int r5, int r6, int r7, int r8, int r9, int r10, int r11) { if (r0 == 0) return r10 + r11; int v = rec(r0-1, r2, r3, r4, r5, r6, r7, r8, r9, r1, r10 + r1, r11 + r0); return v + r9; }
int main() {
  float a = mix(-7, -1.25f, -4, -0.75f, -1, -0.25f, 2, 0.25f, 5, 0.75f, 8, 1.25f, 11, 1.75f, 14, 2.25f, 17, 2.75f, 20, 3.25f);
  putfloat(a); putch(10);
  int i1 = rec(5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11); putint(i1); putch(10);
  int i2 = fl(0.25f, 1.75f, 3.25f, 4.75f, 6.25f, 7.75f, 9.25f, 10.75f, 12.25f, 13.75f, i1, 7); putint(i2); putch(10);
  float f2 = (float)i2;
  float b = mix(i1, a, i2, f2, i1, a, i2, f2, i1, a, i2, f2, i1, a, i2, f2, i1, a, i2, f2); putfloat(b); putch(10);
  int cc = (int)b; return cc & 255; }
