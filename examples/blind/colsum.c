/*
 * colsum.c -- the column sums of an M x N matrix, one thread per column j: s[j] = sum over i
 * of A[i][j]. Across a warp the loads of one row are contiguous (coalesced), but there are
 * only N threads (2048: 8 blocks of 256, far fewer warps than the GPU holds), each running a
 * long sequential loop of M dependent additions.
 *
 *   A: M x N floats (134 MB); s: N floats.   Work size: M = 16384, N = 2048.
 *   Trace size: M = 256, N = 2048.
 *   Compulsory DRAM traffic: A read once, s written: (M x N + N) x 4 bytes (134 MB).
 */
#include <stdio.h>

#ifndef M
#define M 16384
#endif
#ifndef N
#define N 2048
#endif

#pragma cgp trace M=256 N=2048

static float A[M][N];
static float s[N];

int main(void)
{
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (float)((i * 3 + j * 7) % 31) / 31.0f;

#pragma cgp kernel colsum grid=1
  for (int j = 0; j < N; j++) {
    float acc = 0.0f;
    for (int i = 0; i < M; i++)
      acc += A[i][j];
    s[j] = acc;
  }

  printf("colsum %.6e\n", (double)s[N - 1]);
  return 0;
}
