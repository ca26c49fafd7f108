/*
 * atax.c -- ATAX: y = A^T * (A * x)   (PolyBench/GPU "atax", float)
 *
 *   A: NX x NY, x: NY, tmp: NX, y: NY
 *
 * PolyBench/GPU kernel split: two kernels.
 * Kernel `atax_k1`:  tmp = A * x.    Grid: 1-D (i), one thread per row; j is a sequential
 *                    per-thread loop (A[i][j] strides by a row across a warp: uncoalesced).
 * Kernel `atax_k2`:  y = A^T * tmp.  Grid: 1-D (j), one thread per column; i is a sequential
 *                    per-thread loop (A[i][j] contiguous across a warp: coalesced).
 * Work size: NX = NY = 4096.   Trace size: 1024.
 */
#include <stdio.h>

#ifndef NX
#define NX 4096
#endif
#ifndef NY
#define NY 4096
#endif

#pragma cgp trace NX=1024 NY=1024

static float A[NX][NY];
static float x[NY];
static float tmp[NX];
static float y[NY];

int main(void)
{
  for (int j = 0; j < NY; j++)
    x[j] = (float)(j % 64) / 64.0f;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      A[i][j] = (float)((i * (j + 1)) % NX) / (5.0f * NX);

#pragma cgp kernel atax_k1 grid=1
  for (int i = 0; i < NX; i++) {
    tmp[i] = 0.0f;
    for (int j = 0; j < NY; j++)
      tmp[i] += A[i][j] * x[j];
  }

#pragma cgp kernel atax_k2 grid=1
  for (int j = 0; j < NY; j++) {
    y[j] = 0.0f;
    for (int i = 0; i < NX; i++)
      y[j] += A[i][j] * tmp[i];
  }

  double sum = 0.0;
  for (int i = 0; i < NX; i++)
    sum += tmp[i];
  printf("checksum tmp %.6e\n", sum);
  sum = 0.0;
  for (int j = 0; j < NY; j++)
    sum += y[j];
  printf("checksum y %.6e\n", sum);
  return 0;
}
