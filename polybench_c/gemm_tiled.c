/*
 * gemm_tiled.c -- GEMM with 32x32 shared-memory tiling:
 *   C = alpha * A * B + beta * C   (PolyBench/GPU "gemm", float)
 *
 *   A: NI x NK, B: NK x NJ, C: NI x NJ
 *
 * The textbook tiled kernel (as measured in validation/measured/raw/h100-gemm-tiling.jsonl):
 * the sum of A[i][k] * B[k][j] in a register, C written once (C = alpha * sum + beta * C);
 * the checksum agrees with gemm.c to float rounding.
 * The reduction loop k is strip-mined by 32 (kk); a 32x32 thread block stages one 32x32
 * tile of A and one of B in shared memory per kk step (pragmas `cgp shared`).
 * Kernel `gemm_tiled`:  Grid: 2-D (i, j); kk / k are sequential per-thread loops.
 * Work size: NI = NJ = NK = 1024.   Trace size: 128.
 * All sizes must be multiples of 32.
 */
#include <stdio.h>

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif
#ifndef NK
#define NK 1024
#endif

#if (NI % 32) || (NJ % 32) || (NK % 32)
#error "gemm_tiled.c: NI, NJ and NK must be multiples of 32"
#endif

#pragma cgp trace NI=128 NJ=128 NK=128

static float A[NI][NK];
static float B[NK][NJ];
static float C[NI][NJ];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i][k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k][j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      C[i][j] = (float)((i * (j + 2)) % NK) / NK;

#pragma cgp kernel gemm_tiled grid=2
#pragma cgp shared A tile 32x32
#pragma cgp shared B tile 32x32
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      float acc = 0.0f;                   /* the textbook kernel's register accumulator */
      for (int kk = 0; kk < NK; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += A[i][k] * B[k][j];
      C[i][j] = alpha * acc + beta * C[i][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
