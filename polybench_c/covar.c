/*
 * covar.c -- COVAR: covariance matrix of M variables over N observations
 *            (PolyBench/GPU "covariance", float; 0-based indexing)
 *
 *   data: N x M (row = observation, column = variable), mean: M, symmat: M x M
 *
 * PolyBench/GPU kernel split: three kernels.
 * Kernel `covar_mean`:    column means.  Grid: 1-D (j); i is a sequential per-thread loop.
 * Kernel `covar_reduce`:  centre the data in place.  Grid: 2-D (i, j) (as the CUDA port's
 *                         reduce_kernel); no per-thread loop.
 * Kernel `covar_covar`:   upper triangle (incl. diagonal) of the covariance matrix, mirrored
 *                         into the lower triangle.  Grid: 1-D (j1); j2 (triangular, from j1)
 *                         and i are sequential per-thread loops.
 * As in PolyBench/GPU the sums are not divided by N - 1.  Deviation: FLOAT_N = N here
 * (PolyBench/GPU: 3214212.01).
 * Work size: M = N = 1024.   Trace size: 128.
 */
#include <stdio.h>

#ifndef M
#define M 1024
#endif
#ifndef N
#define N 1024
#endif

#pragma cgp trace M=128 N=128

#define FLOAT_N ((float)N)

static float data[N][M];
static float mean[M];
static float symmat[M][M];

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      data[i][j] = (float)((i * j) % M) / M;

#pragma cgp kernel covar_mean
  for (int j = 0; j < M; j++) {
    mean[j] = 0.0f;
    for (int i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= FLOAT_N;
  }

#pragma cgp kernel covar_reduce
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++) {
      data[i][j] -= mean[j];
    }
  }

#pragma cgp kernel covar_covar
  for (int j1 = 0; j1 < M; j1++) {
    for (int j2 = j1; j2 < M; j2++) {
      symmat[j1][j2] = 0.0f;
      for (int i = 0; i < N; i++)
        symmat[j1][j2] += data[i][j1] * data[i][j2];
      symmat[j2][j1] = symmat[j1][j2];
    }
  }

  double sum = 0.0;
  for (int j = 0; j < M; j++)
    sum += mean[j];
  printf("checksum mean %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      sum += data[i][j];
  printf("checksum data %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      sum += symmat[i][j];
  printf("checksum symmat %.6e\n", sum);
  return 0;
}
