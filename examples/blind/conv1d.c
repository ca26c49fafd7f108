/*
 * conv1d.c -- a 17-tap 1-D convolution (FIR filter), one thread per output:
 * out[i] = sum over k < K of c[k] * in[i + k]. The K coefficients are one small array that
 * every thread reads in the same order (the same address across a warp), and neighbouring
 * outputs share 16 of their 17 inputs (reuse through the caches).
 *
 *   in: N + K - 1 floats; c: K floats; out: N floats.   Work size: N = 2^24, K = 17.
 *   Trace size: N = 2^16.
 *   Compulsory DRAM traffic: in read once, out written: 2 x N x 4 bytes (134 MB).
 */
#include <stdio.h>

#ifndef N
#define N 16777216
#endif
#define K 17

#pragma cgp trace N=65536

static float in[N + K - 1];
static float c[K];
static float out[N];

int main(void)
{
  for (int i = 0; i < N + K - 1; i++)
    in[i] = (float)((i * 5) % 23) / 23.0f;
  for (int k = 0; k < K; k++)
    c[k] = (float)(k + 1) / 153.0f;  /* 1 + 2 + ... + 17 = 153 */

#pragma cgp kernel conv1d grid=1
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int k = 0; k < K; k++)
      s += c[k] * in[i + k];
    out[i] = s;
  }

  printf("conv1d %.6e\n", (double)out[N / 2]);
  return 0;
}
