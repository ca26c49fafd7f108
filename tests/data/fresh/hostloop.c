/* hostloop.c -- a host loop of T=1000 short launches, each 4096 threads scaling an array. */
#include <stdio.h>
#ifndef N
#define N 4096
#endif
#ifndef T
#define T 1000
#endif
#pragma cgp trace N=4096 T=8
static float a[N];
int main(void)
{
  for (int i = 0; i < N; i++) a[i] = 1.0f;
  for (int t = 0; t < T; t++) {
#pragma cgp kernel bump grid=1
    for (int i = 0; i < N; i++)
      a[i] = a[i] * 1.0001f + 0.001f;
  }
  printf("hostloop %.6e\n", (double)a[7]);
  return 0;
}
