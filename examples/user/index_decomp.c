/*
 * index_decomp.c -- a transpose written over a flat index: each thread splits its index
 * into row and column with / and % by the run-time width (read once from a volatile, as a
 * size passed at run time would be), the index decomposition of user code. By a run-time
 * int32 divisor nvcc emits the I2F / MUFU.RCP / IMAD.HI sequence (24 SASS instructions for
 * /, 22 for %, one of them an SFU reciprocal: cgpredict/compute.py SASS_EXPANSION).
 *
 *   in, out: R x C floats, R = C = 2048.   Trace size: R = C = 256.
 */
#include <stdio.h>

#ifndef R
#define R 2048
#endif
#ifndef C
#define C 2048
#endif

#pragma cgp trace R=256 C=256

static float in[R * C];
static float out[C * R];
static volatile int width_rt = C;

int main(void)
{
  for (int i = 0; i < R * C; i++)
    in[i] = (float)(i % 31);
  int width = width_rt;

#pragma cgp kernel index_decomp grid=1
  for (int idx = 0; idx < R * C; idx++) {
    int r = idx / width;
    int c = idx % width;
    out[c * R + r] = in[idx];
  }

  printf("index_decomp %.6e\n", (double)out[R * C - 1]);
  return 0;
}
