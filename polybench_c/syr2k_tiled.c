/*
 * syr2k_tiled.c -- SYR2K with 32x32 shared-memory tiling:  C = alpha * A * B^T + alpha * B * A^T + beta * C
 *            (PolyBench/GPU "syr2k", float; the GPU version computes the full NI x NI matrix)
 *
 *   A, B: NI x NJ, C: NI x NI
 *
 * Tiled variant of syr2k.c, the tiled CUDA kernel's register accumulator (checksums agree to float rounding). The reduction
 * loop k is strip-mined by 32 (kk); per kk step a 32x32 thread block stages 32x32 tiles of A
 * and of B (rows of the i-block and of the j-block) in shared memory (pragmas `cgp shared`).
 * Kernel `syr2k_tiled`:  Grid: 2-D (i, j); kk / k are sequential per-thread loops.
 * Work size: NI = NJ = 1024.   Trace size: 128.
 * All sizes must be multiples of 32.
 */
#include <stdio.h>

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

#if (NI % 32) || (NJ % 32)
#error "syr2k_tiled.c: NI and NJ must be multiples of 32"
#endif

#pragma cgp trace NI=128 NJ=128

static float A[NI][NJ];
static float B[NI][NJ];
static float C[NI][NI];

static float alpha = 1.5f;
static float beta = 1.2f;

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++) {
      A[i][k] = (float)((i * k + 1) % NI) / NI;
      B[i][k] = (float)((i * (k + 1) + 2) % NJ) / NJ;
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i][j] = (float)((i * j + 3) % NI) / NI;

#pragma cgp kernel syr2k_tiled grid=2
#pragma cgp shared A tile 32x32
#pragma cgp shared B tile 32x32
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      float acc = 0.0f;                   /* a register accumulator, as the tiled CUDA */
      for (int kk = 0; kk < NJ; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          acc += A[i][k] * B[j][k] + B[i][k] * A[j][k];
      C[i][j] = beta * C[i][j] + alpha * acc;
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      sum += C[i][j];
  printf("checksum C %.6e\n", sum);
  return 0;
}
