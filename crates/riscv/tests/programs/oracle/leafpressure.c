#include "sylib.h"
static int churn(int *p, int n) {
  unsigned x0 = (unsigned)p[0], x1 = (unsigned)p[1], x2 = (unsigned)p[2], x3 = (unsigned)p[3], x4 = (unsigned)p[4], x5 = (unsigned)p[5], x6 = (unsigned)p[6], x7 = (unsigned)p[7], x8 = (unsigned)p[8], x9 = (unsigned)p[9], x10 = (unsigned)p[10], x11 = (unsigned)p[11], x12 = (unsigned)p[12], x13 = (unsigned)p[13], x14 = (unsigned)p[14], x15 = (unsigned)p[15], x16 = (unsigned)p[16], x17 = (unsigned)p[17], x18 = (unsigned)p[18], x19 = (unsigned)p[19], x20 = (unsigned)p[20], x21 = (unsigned)p[21], x22 = (unsigned)p[22], x23 = (unsigned)p[23], x24 = (unsigned)p[24], x25 = (unsigned)p[25], x26 = (unsigned)p[26];
  for (int i = 0; i < n; i++) {
    unsigned y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15, y16, y17, y18, y19, y20, y21, y22, y23, y24, y25, y26;
    y0 = x0 + x1;
    y1 = x1 ^ x2;
    y2 = x2 - x3 * 3u;
    y3 = x3 + x4;
    y4 = x4 ^ x5;
    y5 = x5 - x6 * 3u;
    y6 = x6 + x7;
    y7 = x7 ^ x8;
    y8 = x8 - x9 * 3u;
    y9 = x9 + x10;
    y10 = x10 ^ x11;
    y11 = x11 - x12 * 3u;
    y12 = x12 + x13;
    y13 = x13 ^ x14;
    y14 = x14 - x15 * 3u;
    y15 = x15 + x16;
    y16 = x16 ^ x17;
    y17 = x17 - x18 * 3u;
    y18 = x18 + x19;
    y19 = x19 ^ x20;
    y20 = x20 - x21 * 3u;
    y21 = x21 + x22;
    y22 = x22 ^ x23;
    y23 = x23 - x24 * 3u;
    y24 = x24 + x25;
    y25 = x25 ^ x26;
    y26 = x26 - x0 * 3u;
    x0 = y0; x1 = y1; x2 = y2; x3 = y3; x4 = y4; x5 = y5; x6 = y6; x7 = y7; x8 = y8; x9 = y9; x10 = y10; x11 = y11; x12 = y12; x13 = y13; x14 = y14; x15 = y15; x16 = y16; x17 = y17; x18 = y18; x19 = y19; x20 = y20; x21 = y21; x22 = y22; x23 = y23; x24 = y24; x25 = y25; x26 = y26;
  }
  unsigned s = x0;
  s = s * 31u + x1;
  s = s * 31u + x2;
  s = s * 31u + x3;
  s = s * 31u + x4;
  s = s * 31u + x5;
  s = s * 31u + x6;
  s = s * 31u + x7;
  s = s * 31u + x8;
  s = s * 31u + x9;
  s = s * 31u + x10;
  s = s * 31u + x11;
  s = s * 31u + x12;
  s = s * 31u + x13;
  s = s * 31u + x14;
  s = s * 31u + x15;
  s = s * 31u + x16;
  s = s * 31u + x17;
  s = s * 31u + x18;
  s = s * 31u + x19;
  s = s * 31u + x20;
  s = s * 31u + x21;
  s = s * 31u + x22;
  s = s * 31u + x23;
  s = s * 31u + x24;
  s = s * 31u + x25;
  s = s * 31u + x26;
  return (int)s;
}
int main() {
  int arr[27];
  for (int k = 0; k < 27; k++) arr[k] = k * 7919 + 13;
  putint(churn(arr, 0)); putch(10);
  putint(churn(arr, 1)); putch(10);
  putint(churn(arr, 5)); putch(10);
  putint(churn(arr, 100)); putch(10);
  putint(churn(arr, 1000)); putch(10);
  return 0;
}
