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
 * Kernel `covar_covar`:   Grid: 1-D (ja); upper triangle (incl. diagonal) of the covariance
 *                         matrix, mirrored into the lower triangle; jb (triangular, from ja)
 *                         and i are sequential per-thread loops.  NOTE: the jb loop directly
 *                         follows the ja header, so the nest looks like a 2-D grid; it is not.
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

#pragma cgp kernel covar_mean grid=1
  for (int j = 0; j < M; j++) {
    mean[j] = 0.0f;
    for (int i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= FLOAT_N;
  }

#pragma cgp kernel covar_reduce grid=2
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++) {
      data[i][j] -= mean[j];
    }
  }

#pragma cgp kernel covar_covar grid=1
  for (int ja = 0; ja < M; ja++) {
    for (int jb = ja; jb < M; jb++) {
      symmat[ja][jb] = 0.0f;
      for (int i = 0; i < N; i++)
        symmat[ja][jb] += data[i][ja] * data[i][jb];
      symmat[jb][ja] = symmat[ja][jb];
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
