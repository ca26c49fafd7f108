/* collatz.c -- a data-dependent while loop: the Collatz step count of i+1 per thread. */
#include <stdio.h>
#ifndef N
#define N (1 << 20)
#endif
#pragma cgp trace N=16384
static int steps[N];
int main(void)
{
#pragma cgp kernel collatz grid=1
  for (int i = 0; i < N; i++) {
    unsigned long long v = (unsigned long long)i + 1ull;
    int s = 0;
    while (v != 1ull) {
      v = (v & 1ull) ? 3ull * v + 1ull : v >> 1;
      s++;
    }
    steps[i] = s;
  }
  printf("collatz %d\n", steps[N - 1]);
  return 0;
}
