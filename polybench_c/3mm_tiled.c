/*
 * 3mm_tiled.c -- 3MM with 32x32 shared-memory tiling (PolyBench/GPU "3mm", float)
 *
 *   E = A * B        A: NI x NK, B: NK x NJ, E: NI x NJ
 *   F = C * D        C: NJ x NM, D: NM x NL, F: NJ x NL
 *   G = E * F        G: NI x NL
 *
 * PolyBench/GPU kernel split: three kernels (mm3_kernel1..3), one thread per output element.
 * Tiled variant of 3mm.c, the tiled CUDA kernel's register accumulator (checksums agree to float rounding): in each kernel the
 * reduction loop k is strip-mined by 32 (kk) and a 32x32 thread block stages one 32x32 tile
 * of each input matrix in shared memory per kk step (pragmas `cgp shared`).
 * Kernel `mm3_k1_tiled` (shared A, B):  Grid: 2-D (i, j) over E.
 * Kernel `mm3_k2_tiled` (shared C, D):  Grid: 2-D (i, j) over F.
 * Kernel `mm3_k3_tiled` (shared E, F):  Grid: 2-D (i, j) over G.
 * Work size: NI = NJ = NK = NL = NM = 2048.   Trace size: 128.
 * All sizes must be multiples of 32.
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

#if (NI % 32) || (NJ % 32) || (NK % 32) || (NL % 32) || (NM % 32)
#error "3mm_tiled.c: NI, NJ, NK, NL and NM must be multiples of 32"
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

#pragma cgp kernel mm3_k1_tiled grid=2
#pragma cgp shared A tile 32x32
#pragma cgp shared B tile 32x32
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      float acc = 0.0f;                   /* a register accumulator, as the tiled CUDA */
      for (int kk = 0; kk < NK; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += A[i][k] * B[k][j];
      E[i][j] = acc;
    }
  }

#pragma cgp kernel mm3_k2_tiled grid=2
#pragma cgp shared C tile 32x32
#pragma cgp shared D tile 32x32
  for (int i = 0; i < NJ; i++) {
    for (int j = 0; j < NL; j++) {
      float acc = 0.0f;                   /* a register accumulator, as the tiled CUDA */
      for (int kk = 0; kk < NM; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += C[i][k] * D[k][j];
      F[i][j] = acc;
    }
  }

#pragma cgp kernel mm3_k3_tiled grid=2
#pragma cgp shared E tile 32x32
#pragma cgp shared F tile 32x32
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      float acc = 0.0f;                   /* a register accumulator, as the tiled CUDA */
      for (int kk = 0; kk < NJ; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += E[i][k] * F[k][j];
      G[i][j] = acc;
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
