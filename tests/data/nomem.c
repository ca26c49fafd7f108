/* a kernel with no memory access: naïve µ-benchmark — “arithmetic only” */
#include <stdio.h>
#ifndef N
#define N 64
#endif
static float out[N];

int main(void)
{
  float s = 0.0f;
#pragma cgp kernel arith grid=1
  for (int i = 0; i < N; i++) {
    float x = (float)i;
    for (int k = 0; k < 8; k++)
      x = x * 1.0001f + 1.0f;
    s += x;
  }
#pragma cgp kernel fill grid=1
  for (int i = 0; i < N; i++)
    out[i] = s + i;
  printf("%f %f\n", s, out[3]);
  return 0;
}
