/*
 * 2mm_tiled.c -- 2MM with 32x32 shared-memory tiling (PolyBench/GPU "2mm", float)
 *
 *   C = A * B        A: NI x NK, B: NK x NJ, C: NI x NJ
 *   E = C * D        D: NJ x NL, E: NI x NL
 *
 * PolyBench/GPU kernel split: two kernels (mm2_kernel1, mm2_kernel2), one thread per output
 * element.
 * Tiled variant of 2mm.c, the tiled CUDA kernel's register accumulator (checksums agree to float rounding): in each kernel the
 * reduction loop k is strip-mined by 32 (kk) and a 32x32 thread block stages one 32x32 tile
 * of each input matrix in shared memory per kk step (pragmas `cgp shared`).
 * Kernel `mm2_k1_tiled`:  Grid: 2-D (i, j) over C; shared A, B; kk / k sequential per thread.
 * Kernel `mm2_k2_tiled`:  Grid: 2-D (i, j) over E; shared C, D; kk / k sequential per thread.
 * Work size: NI = NJ = NK = NL = 4096.   Trace size: 128.
 * All sizes must be multiples of 32.
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

#if (NI % 32) || (NJ % 32) || (NK % 32) || (NL % 32)
#error "2mm_tiled.c: NI, NJ, NK and NL must be multiples of 32"
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

#pragma cgp kernel mm2_k1_tiled grid=2
#pragma cgp shared A tile 32x32
#pragma cgp shared B tile 32x32
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      float acc = 0.0f;                   /* a register accumulator, as the tiled CUDA */
      for (int kk = 0; kk < NK; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += A[i][k] * B[k][j];
      C[i][j] = acc;
    }
  }

#pragma cgp kernel mm2_k2_tiled grid=2
#pragma cgp shared C tile 32x32
#pragma cgp shared D tile 32x32
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      float acc = 0.0f;                   /* a register accumulator, as the tiled CUDA */
      for (int kk = 0; kk < NJ; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += C[i][k] * D[k][j];
      E[i][j] = acc;
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
