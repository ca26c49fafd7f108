/*
 * gramschmidt.c -- GRAMSCHMIDT: QR decomposition by modified Gram-Schmidt
 *                  (PolyBench/GPU "gramschmidt", float)
 *
 *   A: NI x NJ (overwritten), R: NJ x NJ, Q: NI x NJ
 *
 * PolyBench/GPU kernel split: the host loops over the columns k = 0 .. NJ-1 and launches three
 * kernels per column; each region is executed NJ times.
 * Kernel `gs_k1`:  Grid: 1-D (t) over t = 0 .. 255.  Norm of column k,
 *                  R[k][k] = sqrt(sum_i A[i][k]^2).  As in PolyBench/GPU this is a single-block
 *                  launch (one block of 256 threads) in which only thread 0 works: the body is
 *                  guarded by t == 0 and i is a sequential loop of thread 0.  (A one-iteration
 *                  thread loop would be deleted by the compiler at -O1, so the idle threads are
 *                  kept explicitly.)
 * Kernel `gs_k2`:  Q[i][k] = A[i][k] / R[k][k].  Grid: 1-D (i); no per-thread loop.
 * Kernel `gs_k3`:  Grid: 1-D (j) over j = k+1 .. NJ-1.  For the columns j > k:
 *                  R[k][j] = Q[:,k] . A[:,j],  A[:,j] -= Q[:,k] R[k][j]; i is a sequential
 *                  per-thread loop (two of them).
 * Work size: NI = NJ = 8192 (note: the algorithm is O(NI * NJ^2)).   Trace size: 512 (large:
 * the regions are executed 512 times each, about 2 * 10^8 memory accesses in kernel 3).
 */
#include <math.h>
#include <stdio.h>

#ifndef NI
#define NI 8192
#endif
#ifndef NJ
#define NJ 8192
#endif

#pragma cgp trace NI=512 NJ=512

#define GS_K1_THREADS 256

static float A[NI][NJ];
static float R[NJ][NJ];
static float Q[NI][NJ];

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      A[i][j] = (float)((i * j) % NI) / NI + (i == j ? 1.0f : 0.0f) + 0.01f;

  for (int k = 0; k < NJ; k++) {
#pragma cgp kernel gs_k1 grid=1
    for (int t = 0; t < GS_K1_THREADS; t++) {
      if (t == 0) {
        float nrm = 0.0f;
        for (int i = 0; i < NI; i++)
          nrm += A[i][k] * A[i][k];
        R[k][k] = sqrtf(nrm);
      }
    }

#pragma cgp kernel gs_k2 grid=1
    for (int i = 0; i < NI; i++) {
      Q[i][k] = A[i][k] / R[k][k];
    }

#pragma cgp kernel gs_k3 grid=1
    for (int j = k + 1; j < NJ; j++) {
      R[k][j] = 0.0f;
      for (int i = 0; i < NI; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (int i = 0; i < NI; i++)
        A[i][j] -= Q[i][k] * R[k][j];
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += A[i][j];
  printf("checksum A %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NJ; i++)
    for (int j = 0; j < NJ; j++)
      sum += R[i][j];
  printf("checksum R %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      sum += Q[i][j];
  printf("checksum Q %.6e\n", sum);
  return 0;
}
