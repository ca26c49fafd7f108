/*
 * saxpy.c -- y = a * x + y, one thread per element.
 *
 *   x, y: N floats.   Work size: N = 2^24.   Trace size: N = 2^16.
 *   Compulsory DRAM traffic: x and y read, y written: 3 x N x 4 bytes (201 MB).
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif

#pragma cgp trace N=65536

static float x[N];
static float y[N];

int main(void)
{
  const float a = 2.5f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13);
    y[i] = (float)(i % 7);
  }

#pragma cgp kernel saxpy grid=1
  for (int i = 0; i < N; i++)
    y[i] = a * x[i] + y[i];

  printf("saxpy %.6e\n", (double)y[N - 1]);
  return 0;
}
