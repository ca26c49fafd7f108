/*
 * 2mm.c -- 2MM: two chained matrix products (PolyBench/GPU "2mm", float)
 *
 *   C = A * B        A: NI x NK, B: NK x NJ, C: NI x NJ
 *   E = C * D        D: NJ x NL, E: NI x NL
 *
 * PolyBench/GPU kernel split: two kernels (mm2_kernel1, mm2_kernel2), one thread per output
 * element.
 * Kernel `mm2_k1`:  Grid: 2-D (i, j) over C; k is a sequential per-thread loop.
 * Kernel `mm2_k2`:  Grid: 2-D (i, j) over E; k is a sequential per-thread loop.
 * Work size: NI = NJ = NK = NL = 4096.   Trace size: 128.
 */
#include <stdio.h>

#ifndef NI
#define NI 4096
#endif
#ifndef NJ
#define NJ 4096
#endif
#ifndef NK
#define NK 4096
#endif
#ifndef NL
#define NL 4096
#endif

#pragma cgp trace NI=128 NJ=128 NK=128 NL=128

static float A[NI][NK];
static float B[NK][NJ];
static float C[NI][NJ];
static float D[NJ][NL];
static float E[NI][NL];

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i][k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k][j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int j = 0; j < NJ; j++)
    for (int l = 0; l < NL; l++)
      D[j][l] = (float)((j * (l + 3) + 1) % NL) / NL;

#pragma cgp kernel mm2_k1 grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      C[i][j] = 0.0f;
      for (int k = 0; k < NK; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
  }

#pragma cgp kernel mm2_k2 grid=2
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      E[i][j] = 0.0f;
      for (int k = 0; k < NJ; k++)
        E[i][j] += C[i][k] * D[k][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NL; j++)
      sum += E[i][j];
  printf("checksum E %.6e\n", sum);
  return 0;
}
