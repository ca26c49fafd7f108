/*
 * dct1d.c -- DCT1D: 1-D discrete cosine transform (DCT-II) of a length-N signal, as a
 *            matrix-vector product with a precomputed cosine table (float).
 *
 *   Y[k] = sum_n C[k][n] * X[n],  C[k][n] = cos(pi / N * (n + 1/2) * k)
 *   C: N x N (filled on the host in main, so the kernel has no transcendental call), X, Y: N
 *
 * Kernel split: one kernel, one thread per output coefficient k (not part of PolyBench/GPU;
 * used for the GPU-vs-FPGA comparison).
 * Kernel `dct1d`:  Grid: 1-D (k); n is a sequential per-thread loop
 *                  (C[k][n] strides by a row across a warp: uncoalesced; X[n] constant).
 * Work size: N = 1024.   Trace size: 1024.
 */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N 1024
#endif

#pragma cgp trace N=1024

#define CGP_PI 3.14159265358979323846

static float C[N][N];
static float X[N];
static float Y[N];

int main(void)
{
  for (int k = 0; k < N; k++)
    for (int n = 0; n < N; n++)
      C[k][n] = (float)cos(CGP_PI / N * (n + 0.5) * k);
  for (int n = 0; n < N; n++)
    X[n] = (float)((n * 7 + 3) % 64) / 64.0f;

#pragma cgp kernel dct1d grid=1
  for (int k = 0; k < N; k++) {
    Y[k] = 0.0f;
    for (int n = 0; n < N; n++)
      Y[k] += C[k][n] * X[n];
  }

  double sum = 0.0;
  for (int k = 0; k < N; k++)
    sum += Y[k];
  printf("checksum Y %.6e\n", sum);
  return 0;
}
