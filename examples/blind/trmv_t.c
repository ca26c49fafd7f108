/*
 * trmv_t.c -- y = L^T x for a lower-triangular N x N matrix L: y[j] = sum over i = j .. N-1 of
 * L[i][j] * x[i], one thread per column j. Adjacent threads read adjacent columns of a row
 * (coalesced), but thread j runs N - j iterations: the trip counts shrink along the grid, so
 * the first blocks run ~N iterations and the last ones almost none (load imbalance).
 *
 *   L: N x N floats (268 MB, the lower triangle used); x, y: N floats.
 *   Work size: N = 8192.   Trace size: N = 512.
 *   Compulsory DRAM traffic: the lower triangle of L read once, N (N + 1) / 2 x 4 bytes
 *   (134 MB), plus x read and y written (64 KB).
 */
#include <stdio.h>

#ifndef N
#define N 8192
#endif

#pragma cgp trace N=512

static float L[N][N];
static float x[N];
static float y[N];

int main(void)
{
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      L[i][j] = (float)((i * 3 + j * 7) % 17) / 17.0f;
    x[i] = (float)(i % 11) / 11.0f;
  }

#pragma cgp kernel trmv_t grid=1
  for (int j = 0; j < N; j++) {
    float s = 0.0f;
    for (int i = j; i < N; i++)
      s += L[i][j] * x[i];
    y[j] = s;
  }

  printf("trmv_t %.6e\n", (double)y[N / 2]);
  return 0;
}
