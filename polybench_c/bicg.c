/*
 * bicg.c -- BICG: the two matrix-vector products of the BiCG solver
 *           s = A^T * r,  q = A * p   (PolyBench/GPU "bicg", float)
 *
 *   A: NX x NY, r: NX, s: NY, p: NY, q: NX
 *
 * PolyBench/GPU kernel split: two kernels.
 * Kernel `bicg_k1`:  s = A^T * r.  Grid: 1-D (j), one thread per column; i is a sequential
 *                    per-thread loop (A[i][j] contiguous across a warp: coalesced).
 * Kernel `bicg_k2`:  q = A * p.    Grid: 1-D (i), one thread per row; j is a sequential
 *                    per-thread loop (A[i][j] strides by a row across a warp: uncoalesced).
 * Work size: NX = NY = 4096.   Trace size: 1024.
 */
#include <stdio.h>

#ifndef NX
#define NX 4096
#endif
#ifndef NY
#define NY 4096
#endif

#pragma cgp trace NX=1024 NY=1024

static float A[NX][NY];
static float r[NX];
static float s[NY];
static float p[NY];
static float q[NX];

int main(void)
{
  for (int i = 0; i < NX; i++)
    r[i] = (float)(i % 64) / 64.0f;
  for (int j = 0; j < NY; j++)
    p[j] = (float)((j + 7) % 64) / 64.0f;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      A[i][j] = (float)((i * (j + 1)) % NX) / NX;

#pragma cgp kernel bicg_k1 grid=1
  for (int j = 0; j < NY; j++) {
    s[j] = 0.0f;
    for (int i = 0; i < NX; i++)
      s[j] += A[i][j] * r[i];
  }

#pragma cgp kernel bicg_k2 grid=1
  for (int i = 0; i < NX; i++) {
    q[i] = 0.0f;
    for (int j = 0; j < NY; j++)
      q[i] += A[i][j] * p[j];
  }

  double sum = 0.0;
  for (int j = 0; j < NY; j++)
    sum += s[j];
  printf("checksum s %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NX; i++)
    sum += q[i];
  printf("checksum q %.6e\n", sum);
  return 0;
}
