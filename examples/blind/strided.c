/*
 * strided.c -- out[i] = in[3i] + in[3i + 2]: the first and third field of an array of
 * 3-float structures (AoS, a point's x and z), one thread per structure. A warp's loads
 * step by 12 bytes: each load instruction touches 384 bytes of which it uses 128.
 *
 *   in: 3 x N floats; out: N floats.   Work size: N = 2^24.   Trace size: N = 2^16.
 *   Compulsory DRAM traffic: in read, out written: 4 x N x 4 bytes (268 MB).
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif

#pragma cgp trace N=65536

static float in[3 * N];
static float out[N];

int main(void)
{
  for (int k = 0; k < 3 * N; k++)
    in[k] = (float)(k % 17);

#pragma cgp kernel strided grid=1
  for (int i = 0; i < N; i++)
    out[i] = in[3 * i] + in[3 * i + 2];

  printf("strided %.6e\n", (double)out[N - 1]);
  return 0;
}
