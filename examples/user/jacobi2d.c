/*
 * jacobi2d.c -- a 5-point Jacobi iteration on an N x N grid, TSTEPS sweeps, the two arrays
 * swapped through pointers after every sweep (one kernel launch per sweep, 2-D grid).
 *
 *   a, b: N x N floats (67 MB each at the work size).   Work size: N = 4096, TSTEPS = 10.
 *   Trace size: N = 256, TSTEPS = 4.
 *   Compulsory DRAM traffic per sweep: one grid read, the other written: 2 x N x N x 4 bytes.
 */
#include <stdio.h>

#ifndef N
#define N 4096
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif

#pragma cgp trace N=256 TSTEPS=4

static float a[N][N];
static float b[N][N];

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      a[i][j] = b[i][j] = (float)((i + 2 * j) % 23);

  float (*src)[N] = a;
  float (*dst)[N] = b;
  for (int t = 0; t < TSTEPS; t++) {
#pragma cgp kernel jacobi grid=2
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        dst[i][j] = 0.2f * (src[i][j] + src[i - 1][j] + src[i + 1][j]
                            + src[i][j - 1] + src[i][j + 1]);
    float (*tmp)[N] = src;
    src = dst;
    dst = tmp;
  }

  printf("jacobi %.6e\n", (double)src[N / 2][N / 2]);
  return 0;
}
