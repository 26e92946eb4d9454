#include "sylib.h"
int main(){ int n = getint(); float x = (float)n; float h = x / 4.0f;
  putf("int %d, float %f, int %d\n", n, h, -3);
  int m = n * 3; float y = h * -2.5f;
  putf("%d %f %d %f %d %f %d %f %d %f %d\n", 1, h, n, y, 3, 0.125f, m, 1e10f, 5, -0.0f, n);
  putf("%s|%c|%x|%.3f\n", "hello", 65, 255, y);
  return 0; }
