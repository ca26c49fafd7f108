/*
 * syr2k.c -- SYR2K: symmetric rank-2k update  C = alpha * A * B^T + alpha * B * A^T + beta * C
 *            (PolyBench/GPU "syr2k", float; the GPU version computes the full NI x NI matrix)
 *
 *   A, B: NI x NJ, C: NI x NI
 *
 * PolyBench/GPU kernel split: one kernel (syr2k_kernel), one thread per C[i][j].
 * Kernel `syr2k`:  Grid: 2-D (i, j); k is a sequential per-thread loop.
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
static float B[NI][NJ];
static float C[NI][NI];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++) {
      A[i][k] = (float)((i * k + 1) % NI) / NI;
      B[i][k] = (float)((i * (k + 1) + 2) % NJ) / NJ;
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i][j] = (float)((i * j + 3) % NI) / NI;

#pragma cgp kernel syr2k grid=2 bounds=constant
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < NJ; k++)
        C[i][j] += alpha * A[i][k] * B[j][k] + alpha * B[i][k] * A[j][k];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
