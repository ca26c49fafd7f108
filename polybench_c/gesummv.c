/*
 * gesummv.c -- GESUMMV: y = alpha * A * x + beta * B * x   (PolyBench/GPU "gesummv", float)
 *
 *   A, B: N x N, x, y, tmp: N
 *
 * PolyBench/GPU kernel split: one kernel (gesummv_kernel), one thread per row i.
 * Kernel `gesummv`:  Grid: 1-D (i); j is a sequential per-thread loop.
 * Work size: N = 4096.   Trace size: 1024.
 */
#include <stdio.h>

#ifndef N
#define N 4096
#endif

#pragma cgp trace N=1024

static float A[N][N];
static float B[N][N];
static float x[N];
static float y[N];
static float tmp[N];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % N) / N;
    for (int j = 0; j < N; j++) {
      A[i][j] = (float)((i * j + 1) % N) / N;
      B[i][j] = (float)((i * j + 2) % N) / N;
    }
  }

#pragma cgp kernel gesummv grid=1
  for (int i = 0; i < N; i++) {
    tmp[i] = 0.0f;
    y[i] = 0.0f;
    for (int j = 0; j < N; j++) {
      tmp[i] += A[i][j] * x[j];
      y[i] += B[i][j] * x[j];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }

  double sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += tmp[i];
  printf("checksum tmp %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += y[i];
  printf("checksum y %.6e\n", sum);
  return 0;
}
