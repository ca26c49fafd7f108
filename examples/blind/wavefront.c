/*
 * wavefront.c -- a Needleman-Wunsch-style global alignment score: the (N+1) x (N+1) int
 * matrix H is filled anti-diagonal by anti-diagonal (a host loop over d = i + j, one launch
 * per diagonal, 2N - 1 launches), one thread per cell of the diagonal:
 *   H[i][j] = max(H[i-1][j-1] + s(a[i], b[j]), H[i-1][j] - 1, H[i][j-1] - 1),
 * s = +1 on equal, -1 on unequal symbols; row 0 and column 0 hold the gap penalties -j, -i.
 *
 *   H: (N+1) x (N+1) ints (16.8 MB at the work size); a, b: N+1 ints (sequences in 1..N).
 *   Work size: N = 2048 (2N - 1 = 4095 launches of 1 .. N threads: most launches are tiny,
 *   a few microseconds each).   Trace size: N = 256.
 *   Compulsory DRAM traffic: H written once and read (the cells of diagonals d-1 and d-2),
 *   about 2 x (N+1)^2 x 4 bytes (34 MB), mostly served by the L2; the accesses of a diagonal
 *   are strided by N (a row) across a warp.
 */
#include <stdio.h>

#ifndef N
#define N 2048
#endif

#pragma cgp trace N=256

static int H[N + 1][N + 1];
static int a[N + 1];
static int b[N + 1];

int main(void)
{
  unsigned int seed = 2024u;
  for (int i = 1; i <= N; i++) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (int)((seed >> 16) & 3);
    seed = seed * 1103515245u + 12345u;
    b[i] = (int)((seed >> 16) & 3);
  }
  for (int i = 0; i <= N; i++)
    H[i][0] = -i;
  for (int j = 0; j <= N; j++)
    H[0][j] = -j;

  for (int d = 2; d <= 2 * N; d++) {
    int ilo = d - N > 1 ? d - N : 1;
    int ihi = d - 1 < N ? d - 1 : N;
#pragma cgp kernel wavefront grid=1
    for (int i = ilo; i <= ihi; i++) {
      int j = d - i;
      int s = a[i] == b[j] ? 1 : -1;
      int m = H[i - 1][j - 1] + s;
      int up = H[i - 1][j] - 1;
      int left = H[i][j - 1] - 1;
      if (up > m)
        m = up;
      if (left > m)
        m = left;
      H[i][j] = m;
    }
  }

  printf("wavefront %d\n", H[N][N]);
  return 0;
}
