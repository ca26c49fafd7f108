/*
 * spmv_csr.c -- y = A * x for a sparse A in CSR form, one thread per row (the scalar CSR
 * kernel). Every row holds NNZ_ROW entries in random columns (a linear congruential
 * generator), so x[col[k]] is a gather with no locality.
 *
 *   rowptr: NR + 1 ints; col, val: NR x NNZ_ROW; x: NC floats; y: NR floats.
 *   Work size: NR = NC = 2^20, 16 entries a row.   Trace size: NR = NC = 16384.
 */
#include <stdio.h>

#ifndef NR
#define NR (1 << 20)
#endif
#ifndef NC
#define NC (1 << 20)
#endif
#define NNZ_ROW 16

#pragma cgp trace NR=16384 NC=16384

static int rowptr[NR + 1];
static int col[NR * NNZ_ROW];
static float val[NR * NNZ_ROW];
static float x[NC];
static float y[NR];

int main(void)
{
  unsigned int seed = 12345u;
  for (int r = 0; r <= NR; r++)
    rowptr[r] = r * NNZ_ROW;
  for (int k = 0; k < NR * NNZ_ROW; k++) {
    seed = seed * 1664525u + 1013904223u;
    col[k] = (int)((seed >> 8) % NC);
    val[k] = (float)(k % 11) / 11.0f;
  }
  for (int c = 0; c < NC; c++)
    x[c] = (float)(c % 5);

#pragma cgp kernel spmv grid=1
  for (int r = 0; r < NR; r++) {
    float s = 0.0f;
    for (int k = rowptr[r]; k < rowptr[r + 1]; k++)
      s += val[k] * x[col[k]];
    y[r] = s;
  }

  printf("spmv %.6e\n", (double)y[NR / 2]);
  return 0;
}
