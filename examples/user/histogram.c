/*
 * histogram.c -- a 256-bin histogram of N bytes, one thread per input element: the
 * increment hist[data[i] & 255]++ is a read-modify-write of a data-dependent bin shared by
 * all threads (a GPU port needs atomics, or per-block private histograms).
 *
 *   data: N ints; hist: 256 ints.   Work size: N = 2^24.   Trace size: N = 2^16.
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif
#define BINS 256

#pragma cgp trace N=65536

static int data[N];
static int hist[BINS];

int main(void)
{
  unsigned int seed = 7u;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    data[i] = (int)(seed >> 16);
  }

#pragma cgp kernel histogram grid=1
  for (int i = 0; i < N; i++)
    hist[data[i] & (BINS - 1)]++;

  long total = 0;
  for (int b = 0; b < BINS; b++)
    total += hist[b];
  printf("histogram %ld\n", total);
  return 0;
}
