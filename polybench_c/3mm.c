/*
 * 3mm.c -- 3MM: three matrix products (PolyBench/GPU "3mm", float)
 *
 *   E = A * B        A: NI x NK, B: NK x NJ, E: NI x NJ
 *   F = C * D        C: NJ x NM, D: NM x NL, F: NJ x NL
 *   G = E * F        G: NI x NL
 *
 * PolyBench/GPU kernel split: three kernels (mm3_kernel1..3), one thread per output element.
 * Kernel `mm3_k1`:  Grid: 2-D (i, j) over E; k is a sequential per-thread loop.
 * Kernel `mm3_k2`:  Grid: 2-D (i, j) over F; k is a sequential per-thread loop.
 * Kernel `mm3_k3`:  Grid: 2-D (i, j) over G; k is a sequential per-thread loop.
 * Work size: NI = NJ = NK = NL = NM = 2048.   Trace size: 128.
 */
#include <stdio.h>

#ifndef NI
#define NI 2048
#endif
#ifndef NJ
#define NJ 2048
#endif
#ifndef NK
#define NK 2048
#endif
#ifndef NL
#define NL 2048
#endif
#ifndef NM
#define NM 2048
#endif

#pragma cgp trace NI=128 NJ=128 NK=128 NL=128 NM=128

static float A[NI][NK];
static float B[NK][NJ];
static float C[NJ][NM];
static float D[NM][NL];
static float E[NI][NJ];
static float F[NJ][NL];
static float G[NI][NL];

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i][k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k][j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int j = 0; j < NJ; j++)
    for (int m = 0; m < NM; m++)
      C[j][m] = (float)((j * (m + 3)) % NL) / NL;
  for (int m = 0; m < NM; m++)
    for (int l = 0; l < NL; l++)
      D[m][l] = (float)((m * (l + 2) + 2) % NK) / NK;

#pragma cgp kernel mm3_k1 grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      E[i][j] = 0.0f;
      for (int k = 0; k < NK; k++)
        E[i][j] += A[i][k] * B[k][j];
    }
  }

#pragma cgp kernel mm3_k2 grid=2
  for (int i = 0; i < NJ; i++) {
    for (int j = 0; j < NL; j++) {
      F[i][j] = 0.0f;
      for (int k = 0; k < NM; k++)
        F[i][j] += C[i][k] * D[k][j];
    }
  }

#pragma cgp kernel mm3_k3 grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      G[i][j] = 0.0f;
      for (int k = 0; k < NJ; k++)
        G[i][j] += E[i][k] * F[k][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += E[i][j];
  printf("checksum E %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NJ; i++)
    for (int j = 0; j < NL; j++)
      sum += F[i][j];
  printf("checksum F %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NL; j++)
      sum += G[i][j];
  printf("checksum G %.6e\n", sum);
  return 0;
}
