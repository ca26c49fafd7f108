/*
 * softmax.c -- a row-wise softmax: one thread per row finds the row's maximum, sums the
 * exponentials, then writes every element of its output row once.
 *
 *   in, out: R x C floats.   Work size: R = 16384, C = 1024.   Trace size: R = 1024, C = 256.
 *   Each row is read three times (max, sum, write pass) and written once; one thread per row
 *   makes every access strided by a row across a warp (uncoalesced).
 */
#include <math.h>
#include <stdio.h>

#ifndef R
#define R 16384
#endif
#ifndef C
#define C 1024
#endif

#pragma cgp trace R=1024 C=256

static float in[R][C];
static float out[R][C];

int main(void)
{
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++)
      in[i][j] = (float)((i * 7 + j * 13) % 101) / 101.0f;

#pragma cgp kernel softmax grid=1
  for (int i = 0; i < R; i++) {
    float m = in[i][0];
    for (int j = 1; j < C; j++)
      m = fmaxf(m, in[i][j]);
    float s = 0.0f;
    for (int j = 0; j < C; j++)
      s += expf(in[i][j] - m);
    for (int j = 0; j < C; j++)
      out[i][j] = expf(in[i][j] - m) / s;
  }

  double sum = 0.0;
  for (int i = 0; i < R; i++)
    sum += out[i][C - 1];
  printf("softmax %.6e\n", sum);
  return 0;
}
