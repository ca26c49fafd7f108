/*
 * mvt.c -- MVT: x1 = x1 + A * y_1,  x2 = x2 + A^T * y_2   (PolyBench/GPU "mvt", float)
 *
 *   A: N x N, x1, x2, y_1, y_2: N
 *
 * PolyBench/GPU kernel split: two kernels (mvt_kernel1, mvt_kernel2).
 * Kernel `mvt_k1`:  x1 += A * y_1.    Grid: 1-D (i); j is a sequential per-thread loop
 *                   (A[i][j] strides by a row across a warp: uncoalesced).
 * Kernel `mvt_k2`:  x2 += A^T * y_2.  Grid: 1-D (i); j is a sequential per-thread loop
 *                   (A[j][i] contiguous across a warp: coalesced).
 * NOTE: in both kernels the j loop directly follows the i header, so the nest looks like a
 * 2-D grid; it is 1-D (j is a reduction loop into x1[i] / x2[i]).
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
static float y_1[N];
static float y_2[N];

int main(void)
{
  for (int i = 0; i < N; i++) {
    x1[i] = (float)(i % N) / N;
    x2[i] = (float)((i + 1) % N) / N;
    y_1[i] = (float)((i + 3) % N) / N;
    y_2[i] = (float)((i + 4) % N) / N;
    for (int j = 0; j < N; j++)
      A[i][j] = (float)((i * j) % N) / N;
  }

#pragma cgp kernel mvt_k1 grid=1
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x1[i] += A[i][j] * y_1[j];
  }

#pragma cgp kernel mvt_k2 grid=1
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x2[i] += A[j][i] * y_2[j];
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
