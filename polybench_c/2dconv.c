/*
 * 2dconv.c -- 2DCONV: 3x3 2-D convolution (PolyBench/GPU "2DConvolution", float)
 *
 *   B[i][j] = sum of the 9 weighted neighbours A[i+di][j+dj], for interior points
 *   A, B: NI x NJ
 *
 * PolyBench/GPU kernel split: one kernel (Convolution2D_kernel), one thread per B[i][j].
 * Kernel `conv2d`:  Grid: 2-D (i, j); no per-thread loop.
 *   The CUDA port launches NI x NJ threads and guards 0 < i < NI-1, 0 < j < NJ-1; here the
 *   thread loops run over the interior points only (no boundary threads).
 * Work size: NI = NJ = 4096.   Trace size: 512.
 */
#include <stdio.h>

#ifndef NI
#define NI 4096
#endif
#ifndef NJ
#define NJ 4096
#endif

#pragma cgp trace NI=512 NJ=512

static float A[NI][NJ];
static float B[NI][NJ];

int main(void)
{
  const float c11 = 0.2f, c21 = 0.5f, c31 = -0.8f;
  const float c12 = -0.3f, c22 = 0.6f, c32 = -0.9f;
  const float c13 = 0.4f, c23 = 0.7f, c33 = 0.1f;

  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      A[i][j] = (float)((i * (j + 1) + 1) % NI) / NI;

#pragma cgp kernel conv2d grid=2
  for (int i = 1; i < NI - 1; i++) {
    for (int j = 1; j < NJ - 1; j++) {
      B[i][j] = c11 * A[i - 1][j - 1] + c21 * A[i - 1][j] + c31 * A[i - 1][j + 1] + c12 * A[i][j - 1] + c22 * A[i][j] + c32 * A[i][j + 1] + c13 * A[i + 1][j - 1] + c23 * A[i + 1][j] + c33 * A[i + 1][j + 1];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += B[i][j];
  printf("checksum B %.6e\n", sum);
  return 0;
}
