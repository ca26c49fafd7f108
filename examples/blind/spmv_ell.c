/*
 * spmv_ell.c -- y = A * x for a sparse A in ELLPACK form stored column-major (entry k of
 * row r at val[k][r], col[k][r]), K entries in every row, one thread per row: a warp's
 * val and col loads are contiguous (coalesced), x[col[k][r]] is a gather. The columns are
 * pseudo-random (a linear congruential generator) within a band of +-BAND around the row,
 * clamped to 0 .. N-1.
 *
 *   val, col: K x N (64 MB each); x, y: N floats.   Work size: N = 2^20, K = 16, BAND = 4096.
 *   Trace size: N = 2^16.
 *   Compulsory DRAM traffic: val, col read once (2 x K x N x 4 bytes), x read (about once:
 *   the band keeps a warp's gathers within 32 KB of x), y written: (2K + 2) x N x 4 bytes
 *   (143 MB).
 */
#include <stdio.h>

#ifndef N
#define N (1 << 20)
#endif
#ifndef K
#define K 16
#endif
#define BAND 4096

#pragma cgp trace N=65536

static float val[K][N];
static int col[K][N];
static float x[N];
static float y[N];

int main(void)
{
  unsigned int seed = 4321u;
  for (int k = 0; k < K; k++)
    for (int r = 0; r < N; r++) {
      seed = seed * 1664525u + 1013904223u;
      int c = r + (int)((seed >> 8) % (2 * BAND + 1)) - BAND;
      if (c < 0)
        c = 0;
      if (c > N - 1)
        c = N - 1;
      col[k][r] = c;
      val[k][r] = (float)((k + r) % 11) / 11.0f;
    }
  for (int c = 0; c < N; c++)
    x[c] = (float)(c % 5);

#pragma cgp kernel spmv_ell grid=1
  for (int r = 0; r < N; r++) {
    float s = 0.0f;
    for (int k = 0; k < K; k++)
      s += val[k][r] * x[col[k][r]];
    y[r] = s;
  }

  printf("spmv_ell %.6e\n", (double)y[N / 2]);
  return 0;
}
