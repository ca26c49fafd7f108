/*
 * dot_reduce.c -- a single-precision dot product written the way a C programmer does: one
 * accumulator s updated by every iteration of the loop a GPU port maps to threads (a
 * reduction: the port needs warp shuffles and one atomic per warp or block, or two passes).
 *
 *   x, y: N floats; s: one float.   Work size: N = 2^24.   Trace size: N = 2^16.
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif

#pragma cgp trace N=65536

static float x[N];
static float y[N];
static float s;

int main(void)
{
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13) / 13.0f;
    y[i] = (float)(i % 7) / 7.0f;
  }

#pragma cgp kernel dot grid=1
  for (int i = 0; i < N; i++)
    s += x[i] * y[i];

  printf("dot %.6e\n", (double)s);
  return 0;
}
