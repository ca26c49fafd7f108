/*
 * 3dconv.c -- 3DCONV: 3-D convolution stencil (PolyBench/GPU "3DConvolution", float)
 *
 *   B[i][j][k] = weighted sum of 15 neighbours of A[i][j][k] (the PolyBench/GPU stencil),
 *   for interior points.   A, B: NI x NJ x NK
 *
 * PolyBench/GPU kernel split: the host loops over the planes i = 1 .. NI-2 and launches one
 * 2-D kernel (convolution3D_kernel) per plane, one thread per (j, k).
 * Kernel `conv3d`:  Grid: 2-D (j, k) -- j is the thread y index, k the thread x index;
 *   no per-thread loop; launched NI-2 times, inside the host loop over i.
 *   The CUDA port launches NJ x NK threads and guards the interior; here the thread loops run
 *   over the interior points only.
 * Work size: NI = NJ = NK = 256.   Trace size: 64.
 */
#include <stdio.h>

#ifndef NI
#define NI 256
#endif
#ifndef NJ
#define NJ 256
#endif
#ifndef NK
#define NK 256
#endif

#pragma cgp trace NI=64 NJ=64 NK=64

static float A[NI][NJ][NK];
static float B[NI][NJ][NK];

int main(void)
{
  const float c11 = 2.0f, c21 = 5.0f, c31 = -8.0f;
  const float c12 = -3.0f, c22 = 6.0f, c32 = -9.0f;
  const float c13 = 4.0f, c23 = 7.0f, c33 = 10.0f;

  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      for (int k = 0; k < NK; k++)
        A[i][j][k] = (float)((i * j + k * (i + 1) + 1) % NK) / NK;

  for (int i = 1; i < NI - 1; i++) {
#pragma cgp kernel conv3d grid=2
    for (int j = 1; j < NJ - 1; j++) {
      for (int k = 1; k < NK - 1; k++) {
        B[i][j][k] = c11 * A[i - 1][j - 1][k - 1] + c13 * A[i + 1][j - 1][k - 1] + c21 * A[i - 1][j - 1][k - 1] + c23 * A[i + 1][j - 1][k - 1] + c31 * A[i - 1][j - 1][k - 1] + c33 * A[i + 1][j - 1][k - 1] + c12 * A[i][j - 1][k] + c22 * A[i][j][k] + c32 * A[i][j + 1][k] + c11 * A[i - 1][j - 1][k + 1] + c13 * A[i + 1][j - 1][k + 1] + c21 * A[i - 1][j][k + 1] + c23 * A[i + 1][j][k + 1] + c31 * A[i - 1][j + 1][k + 1] + c33 * A[i + 1][j + 1][k + 1];
      }
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      for (int k = 0; k < NK; k++)
        sum += B[i][j][k];
  printf("checksum B %.6e\n", sum);
  return 0;
}
