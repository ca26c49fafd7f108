/*
 * syrk_transposed.c -- SYRK with the input stored transposed (coalescing fix):
 *   C = alpha * A * A^T + beta * C   (PolyBench/GPU "syrk", float, full NI x NI matrix)
 *
 *   AT: NJ x NI with AT[k][i] = A[i][k] of syrk.c;  C: NI x NI
 *   C[i][j] = beta * C[i][j] + alpha * sum_k AT[k][i] * AT[k][j]
 *
 * Same values and operation order as syrk.c (checksums agree exactly). With j the thread x
 * index, AT[k][j] is now contiguous across a warp (coalesced) and AT[k][i] is the same for the
 * whole warp (constant), instead of syrk.c's uncoalesced A[j][k].
 * Kernel `syrk_transposed`:  Grid: 2-D (i, j); k is a sequential per-thread loop.
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

static float AT[NJ][NI];
static float C[NI][NI];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++)
      AT[k][i] = (float)((i * k + 1) % NI) / NI;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i][j] = (float)((i * j + 2) % NJ) / NJ;

#pragma cgp kernel syrk_transposed grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < NJ; k++)
        C[i][j] += alpha * AT[k][i] * AT[k][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
