/*
 * gemm.c -- GEMM: C = alpha * A * B + beta * C   (PolyBench/GPU "gemm", float)
 *
 *   A: NI x NK, B: NK x NJ, C: NI x NJ
 *
 * PolyBench/GPU kernel split: one kernel (gemm_kernel), one thread per C[i][j].
 * Kernel `gemm`:  Grid: 2-D (i, j)  -- i is the thread y index, j the thread x index;
 *                 the k loop is a sequential per-thread loop.
 * Work size: NI = NJ = NK = 1024.   Trace size: 128.
 */
#include <stdio.h>

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif
#ifndef NK
#define NK 1024
#endif

#pragma cgp trace NI=128 NJ=128 NK=128

static float A[NI][NK];
static float B[NK][NJ];
static float C[NI][NJ];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i][k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k][j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      C[i][j] = (float)((i * (j + 2)) % NK) / NK;

#pragma cgp kernel gemm grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < NK; k++)
        C[i][j] += alpha * A[i][k] * B[k][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
