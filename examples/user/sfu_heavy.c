/*
 * sfu_heavy.c -- y = exp(x) / sqrt(x + 1) per element: in the sm_90 SASS an expf is one
 * MUFU.EX2 with five FFMA, an IEEE sqrtf one MUFU.RSQ, an IEEE division one MUFU.RCP with
 * five FFMA (cgpredict/compute.py SASS_EXPANSION): three SFU instructions an element.
 *
 *   x, y: N floats.   Work size: N = 2^22.   Trace size: N = 2^14.
 */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N (1 << 22)
#endif

#pragma cgp trace N=16384

static float x[N];
static float y[N];

int main(void)
{
  for (int i = 0; i < N; i++)
    x[i] = (float)(i % 97) * 0.01f;

#pragma cgp kernel sfu_heavy grid=1
  for (int i = 0; i < N; i++)
    y[i] = expf(x[i]) / sqrtf(x[i] + 1.0f);

  printf("sfu_heavy %.6e\n", (double)y[N - 1]);
  return 0;
}
