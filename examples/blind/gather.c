/*
 * gather.c -- y[i] = w[i] * x[idx[i]], one thread per element: idx is a random permutation
 * of 0..N-1 (a Fisher-Yates shuffle driven by a linear congruential generator, built on the
 * host), so x[idx[i]] is a gather with no locality (nearly every lane of a warp in its own
 * sector).
 *
 *   w, x, y: N floats; idx: N ints.   Work size: N = 2^24.   Trace size: N = 2^16.
 *   Compulsory DRAM traffic: w, idx and x read, y written: 4 x N x 4 bytes (268 MB).
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif

#pragma cgp trace N=65536

static float w[N];
static float x[N];
static float y[N];
static int idx[N];

int main(void)
{
  unsigned int seed = 2024u;
  for (int i = 0; i < N; i++) {
    w[i] = (float)(i % 7) * 0.5f;
    x[i] = (float)(i % 13);
    idx[i] = i;
  }
  for (int i = N - 1; i > 0; i--) {
    seed = seed * 1664525u + 1013904223u;
    int j = (int)((seed >> 8) % (unsigned int)(i + 1));
    int t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }

#pragma cgp kernel gather grid=1
  for (int i = 0; i < N; i++)
    y[i] = w[i] * x[idx[i]];

  double sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += y[i];
  printf("gather %.6e\n", sum);
  return 0;
}
