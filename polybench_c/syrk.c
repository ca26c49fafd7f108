/*
 * syrk.c -- SYRK: symmetric rank-k update  C = alpha * A * A^T + beta * C
 *           (PolyBench/GPU "syrk", float; the GPU version computes the full NI x NI matrix)
 *
 *   A: NI x NJ, C: NI x NI
 *
 * PolyBench/GPU kernel split: one kernel (syrk_kernel), one thread per C[i][j].
 * Kernel `syrk`:  Grid: 2-D (i, j); k is a sequential per-thread loop.
 *   A[i][k] is the same for all threads of a warp (constant), A[j][k] strides by a row
 *   between adjacent threads (uncoalesced) -- see syrk_transposed.c for the fix.
 * Work size: NI = NJ = 1024.   Trace size: 128.
 */
#include <stdio.h>

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

#pragma cgp trace NI=128 NJ=128

static float A[NI][NJ];
static float C[NI][NI];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++)
      A[i][k] = (float)((i * k + 1) % NI) / NI;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i][j] = (float)((i * j + 2) % NJ) / NJ;

#pragma cgp kernel syrk grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < NJ; k++)
        C[i][j] += alpha * A[i][k] * A[j][k];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
