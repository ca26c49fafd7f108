/*
 * heat1d.c -- a 3-point 1-D heat (diffusion) stencil, TSTEPS explicit sweeps, the two arrays
 * swapped through pointers after every sweep (one kernel launch per sweep, 1-D grid).
 *
 *   a, b: N floats (256 KB each).   Work size: N = 2^16, TSTEPS = 200.
 *   Trace size: N = 16384, TSTEPS = 4.
 *   Compulsory DRAM traffic per sweep: one array read, the other written: 2 x N x 4 bytes
 *   (512 KB; both arrays fit in L2). Meant to be tiny: each launch is N threads (256 blocks
 *   of 256), so the 200 short launches of the host loop dominate (launch cost).
 */
#include <stdio.h>

#ifndef N
#define N 65536
#endif
#ifndef TSTEPS
#define TSTEPS 200
#endif

#pragma cgp trace N=16384 TSTEPS=4

static float a[N];
static float b[N];

int main(void)
{
  for (int i = 0; i < N; i++)
    a[i] = b[i] = (float)((i * 7) % 19) / 19.0f;

  float *src = a;
  float *dst = b;
  for (int t = 0; t < TSTEPS; t++) {
#pragma cgp kernel heat grid=1
    for (int i = 1; i < N - 1; i++)
      dst[i] = src[i] + 0.25f * (src[i - 1] - 2.0f * src[i] + src[i + 1]);
    float *tmp = src;
    src = dst;
    dst = tmp;
  }

  printf("heat1d %.6e\n", (double)src[N / 2]);
  return 0;
}
