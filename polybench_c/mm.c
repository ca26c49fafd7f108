/*
 * mm.c -- MM: plain matrix multiply  C = A * B  (float), for the GPU-vs-FPGA comparison.
 *
 *   A, B, C: N x N
 *
 * Kernel split: one kernel, one thread per C[i][j] (the naive CUDA matrix multiply).
 * Kernel `mm`:  Grid: 2-D (i, j); k is a sequential per-thread loop.
 * Work size: N = 1024.   Trace size: 128.
 */
#include <stdio.h>

#ifndef N
#define N 1024
#endif

#pragma cgp trace N=128

static float A[N][N];
static float B[N][N];
static float C[N][N];

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (float)((i * j + 1) % N) / N;
      B[i][j] = (float)((i * (j + 1) + 2) % N) / N;
    }

#pragma cgp kernel mm grid=2
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      C[i][j] = 0.0f;
      for (int k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
