/*
 * transpose.c -- a naive out-of-place transpose, B = A^T, one thread per element (2-D
 * grid: i -> y, j -> x): reads of A are coalesced, writes of B stride by a row.
 *
 *   A, B: N x N floats.   Work size: N = 8192 (268 MB each).   Trace size: N = 512.
 *   Compulsory DRAM traffic: A read, B written: 2 x N x N x 4 bytes (537 MB).
 */
#include <stdio.h>

#ifndef N
#define N 8192
#endif

#pragma cgp trace N=512

static float A[N][N];
static float B[N][N];

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (float)((i * 3 + j) % 19);

#pragma cgp kernel transpose grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      B[j][i] = A[i][j];

  printf("transpose %.6e\n", (double)B[N - 1][1]);
  return 0;
}
