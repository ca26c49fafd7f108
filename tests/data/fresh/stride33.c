/* stride33.c -- each thread reads a[33*i] (132-byte stride: one sector per lane). */
#include <stdio.h>
#ifndef N
#define N (1 << 20)
#endif
#pragma cgp trace N=16384
static float a[33 * N];
static float y[N];
int main(void)
{
  for (int i = 0; i < 33 * N; i++) a[i] = (float)(i % 17);
#pragma cgp kernel stride33 grid=1
  for (int i = 0; i < N; i++)
    y[i] = a[33 * i] * 3.0f;
  printf("stride33 %.6e\n", (double)y[N - 1]);
  return 0;
}
