/*
 * dot_gridstride.c -- a double-precision dot product written as a grid-stride loop, the way
 * a CUDA programmer lays it out: NT threads, thread t sums x[k]*y[k] for k = t, t+NT, ...
 * and writes its partial sum (the partials are summed on the host).
 *
 *   x, y: N doubles; part: NT doubles.   Work size: N = 2^24, NT = 2^16 (256 per thread).
 *   Compulsory DRAM traffic: 2 x N x 8 bytes read (268 MB) + NT x 8 bytes written.
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif
#ifndef NT
#define NT (1 << 16)
#endif

#pragma cgp trace N=262144 NT=4096

static double x[N];
static double y[N];
static double part[NT];

int main(void)
{
  for (int k = 0; k < N; k++) {
    x[k] = (double)(k % 17) / 17.0;
    y[k] = (double)(k % 29) / 29.0;
  }

#pragma cgp kernel dot grid=1
  for (int t = 0; t < NT; t++) {
    double s = 0.0;
    for (int k = t; k < N; k += NT)
      s += x[k] * y[k];
    part[t] = s;
  }

  double sum = 0.0;
  for (int t = 0; t < NT; t++)
    sum += part[t];
  printf("dot %.6e\n", sum);
  return 0;
}
