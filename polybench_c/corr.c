/*
 * corr.c -- CORR: correlation matrix of M variables over N observations
 *           (PolyBench/GPU "correlation", float; 0-based indexing)
 *
 *   data: N x M (row = observation, column = variable), mean, stddev: M, symmat: M x M
 *
 * PolyBench/GPU kernel split: four kernels.
 * Kernel `corr_mean`:    column means.   Grid: 1-D (j); i is a sequential per-thread loop.
 * Kernel `corr_std`:     Grid: 1-D (j); column standard deviations (sqrtf; values <= EPS
 *                        replaced by 1); i is a sequential per-thread loop.
 * Kernel `corr_reduce`:  Grid: 2-D (i, j) (as the CUDA port's reduce_kernel); centre and
 *                        reduce the data in place; no per-thread loop.
 * Kernel `corr_corr`:    Grid: 1-D (ja) over ja = 0 .. M-2; upper triangle of the correlation
 *                        matrix, mirrored into the lower triangle; jb (triangular, from
 *                        ja + 1) and i are sequential per-thread loops.  symmat[M-1][M-1] = 1
 *                        is set on the host afterwards, as in PolyBench/GPU.
 * Deviation: PolyBench/GPU uses FLOAT_N = 3214212.01 and EPS = 0.005; here FLOAT_N = N and
 * EPS = 0.1 (PolyBench/C), so the result is a real correlation matrix.
 * Work size: M = N = 1024.   Trace size: 128.
 */
#include <math.h>
#include <stdio.h>

#ifndef M
#define M 1024
#endif
#ifndef N
#define N 1024
#endif

#pragma cgp trace M=128 N=128

#define FLOAT_N ((float)N)
#define EPS 0.1f

static float data[N][M];
static float mean[M];
static float stddev[M];
static float symmat[M][M];

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      data[i][j] = (float)((i * j) % M) / M + (float)i / N;

#pragma cgp kernel corr_mean grid=1
  for (int j = 0; j < M; j++) {
    mean[j] = 0.0f;
    for (int i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= FLOAT_N;
  }

#pragma cgp kernel corr_std grid=1
  for (int j = 0; j < M; j++) {
    stddev[j] = 0.0f;
    for (int i = 0; i < N; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= FLOAT_N;
    stddev[j] = sqrtf(stddev[j]);
    if (stddev[j] <= EPS)
      stddev[j] = 1.0f;
  }

#pragma cgp kernel corr_reduce grid=2
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrtf(FLOAT_N) * stddev[j];
    }
  }

#pragma cgp kernel corr_corr grid=1
  for (int ja = 0; ja < M - 1; ja++) {
    symmat[ja][ja] = 1.0f;
    for (int jb = ja + 1; jb < M; jb++) {
      symmat[ja][jb] = 0.0f;
      for (int i = 0; i < N; i++)
        symmat[ja][jb] += data[i][ja] * data[i][jb];
      symmat[jb][ja] = symmat[ja][jb];
    }
  }
  symmat[M - 1][M - 1] = 1.0f;

  double sum = 0.0;
  for (int j = 0; j < M; j++)
    sum += mean[j];
  printf("checksum mean %.6e\n", sum);
  sum = 0.0;
  for (int j = 0; j < M; j++)
    sum += stddev[j];
  printf("checksum stddev %.6e\n", sum);
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
