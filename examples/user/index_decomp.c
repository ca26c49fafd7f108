/*
 * index_decomp.c -- a transpose written over a flat index: each thread splits its index
 * into row and column with / and % by the run-time width (read once from a volatile, as a
 * size passed at run time would be), the index decomposition of user code. By a run-time
 * int32 divisor nvcc emits the I2F / MUFU.RCP / IMAD.HI sequence for / (24 SASS
 * instructions, one SFU reciprocal) and computes % from the quotient, idx - r * width (3
 * more: cgpredict/compute.py SASS_EXPANSION, validation/results/sass-check-user.md).
 *
 *   in, out: NE floats, rows of W = 2048.   Work size: NE = 2^22.   Trace size: NE = 2^16.
 */
#include <stdio.h>

#ifndef NE
#define NE (1 << 22)
#endif
#ifndef W
#define W 2048
#endif

#pragma cgp trace NE=65536

static float in[NE];
static float out[NE];
static volatile int width_rt = W;

int main(void)
{
  for (int i = 0; i < NE; i++)
    in[i] = (float)(i % 31);
  int width = width_rt;
  int rows = NE / width;

#pragma cgp kernel index_decomp grid=1
  for (int idx = 0; idx < NE; idx++) {
    int r = idx / width;
    int c = idx % width;
    out[c * rows + r] = in[idx];
  }

  printf("index_decomp %.6e\n", (double)out[NE - 1]);
  return 0;
}
