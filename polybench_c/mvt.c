/*
 * mvt.c -- MVT: x1 = x1 + A * y1,  x2 = x2 + A^T * y2   (PolyBench/GPU "mvt", float)
 *
 *   A: N x N, x1, x2, y1, y2: N
 *
 * PolyBench/GPU kernel split: two kernels (mvt_kernel1, mvt_kernel2).
 * Kernel `mvt_k1`:  x1 += A * y1.    Grid: 1-D (i); j is a sequential per-thread loop
 *                   (A[i][j] strides by a row across a warp: uncoalesced).
 * Kernel `mvt_k2`:  x2 += A^T * y2.  Grid: 1-D (i); j is a sequential per-thread loop
 *                   (A[j][i] contiguous across a warp: coalesced).
 * Work size: N = 4096 (N = 2048 for the GPU-vs-FPGA comparison: -D N=2048).
 * Trace size: 1024.
 */
#include <stdio.h>

#ifndef N
#define N 4096
#endif

#pragma cgp trace N=1024

static float A[N][N];
static float x1[N];
static float x2[N];
static float y1[N];
static float y2[N];

int main(void)
{
  for (int i = 0; i < N; i++) {
    x1[i] = (float)(i % N) / N;
    x2[i] = (float)((i + 1) % N) / N;
    y1[i] = (float)((i + 3) % N) / N;
    y2[i] = (float)((i + 4) % N) / N;
    for (int j = 0; j < N; j++)
      A[i][j] = (float)((i * j) % N) / N;
  }

#pragma cgp kernel mvt_k1
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x1[i] += A[i][j] * y1[j];
  }

#pragma cgp kernel mvt_k2
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x2[i] += A[j][i] * y2[j];
  }

  double sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += x1[i];
  printf("checksum x1 %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += x2[i];
  printf("checksum x2 %.6e\n", sum);
  return 0;
}
