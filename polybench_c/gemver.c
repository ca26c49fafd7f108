/*
 * gemver.c -- GEMVER: vector multiplication and matrix addition (PolyBench/GPU "gemver", float)
 *
 *   A = A + u1 * v1^T + u2 * v2^T
 *   x = x + beta * A^T * y + z
 *   w = w + alpha * A * x
 *   A: N x N, u1, v1, u2, v2, x, y, z, w: N
 *
 * PolyBench/GPU kernel split: three kernels (gemver_kernel1..3).
 * Kernel `gemver_k1`:  rank-2 update of A.  Grid: 2-D (i, j); no per-thread loop.
 * Kernel `gemver_k2`:  x = x + beta * A^T * y + z.  Grid: 1-D (i); j is a sequential
 *                      per-thread loop (A[j][i] contiguous across a warp: coalesced).
 * Kernel `gemver_k3`:  w = w + alpha * A * x.  Grid: 1-D (i); j is a sequential per-thread
 *                      loop (A[i][j] strides by a row across a warp: uncoalesced).
 * NOTE: in gemver_k2 and gemver_k3 the j loop directly follows the i header, so the nest looks
 * like a 2-D grid; both are 1-D (j is a reduction loop into x[i] / w[i]).
 * Work size: N = 2048 (GPU-vs-FPGA comparison).   Trace size: 128.
 */
#include <stdio.h>

#ifndef N
#define N 2048
#endif

#pragma cgp trace N=128

static float A[N][N];
static float u1[N];
static float v1[N];
static float u2[N];
static float v2[N];
static float w[N];
static float x[N];
static float y[N];
static float z[N];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < N; i++) {
    u1[i] = (float)(i % N) / N;
    u2[i] = (float)((i + 1) % N) / N / 2.0f;
    v1[i] = (float)((i + 1) % N) / N / 4.0f;
    v2[i] = (float)((i + 1) % N) / N / 6.0f;
    y[i] = (float)((i + 1) % N) / N / 8.0f;
    z[i] = (float)((i + 1) % N) / N / 9.0f;
    x[i] = 0.0f;
    w[i] = 0.0f;
    for (int j = 0; j < N; j++)
      A[i][j] = (float)((i * j) % N) / N;
  }

#pragma cgp kernel gemver_k1 grid=2
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      A[i][j] += u1[i] * v1[j] + u2[i] * v2[j];
    }
  }

#pragma cgp kernel gemver_k2 grid=1
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x[i] += beta * A[j][i] * y[j];
    x[i] += z[i];
  }

#pragma cgp kernel gemver_k3 grid=1
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      w[i] += alpha * A[i][j] * x[j];
  }

  double sum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      sum += A[i][j];
  printf("checksum A %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += x[i];
  printf("checksum x %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += w[i];
  printf("checksum w %.6e\n", sum);
  return 0;
}
