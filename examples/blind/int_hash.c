/*
 * int_hash.c -- out[i] = ROUNDS = 16 rounds of MurmurHash3's 32-bit finalizer (fmix32:
 * xor-shift, multiply, xor-shift, multiply, xor-shift) of in[i] ^ i, one thread per
 * element. Unsigned 32-bit integer arithmetic only: 3 shifts, 3 xors and 2 multiplies a
 * round, 128 integer operations an element for 8 bytes of DRAM traffic.
 *
 *   in, out: N unsigned ints.   Work size: N = 2^24.   Trace size: N = 2^16.
 *   Compulsory DRAM traffic: in read, out written: 2 x N x 4 bytes (134 MB).
 */
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif
#define ROUNDS 16

#pragma cgp trace N=65536

static unsigned int in[N];
static unsigned int out[N];

int main(void)
{
  unsigned int seed = 99u;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    in[i] = seed;
  }

#pragma cgp kernel int_hash grid=1
  for (int i = 0; i < N; i++) {
    unsigned int h = in[i] ^ (unsigned int)i;
    for (int r = 0; r < ROUNDS; r++) {
      h ^= h >> 16;
      h *= 0x85ebca6bu;
      h ^= h >> 13;
      h *= 0xc2b2ae35u;
      h ^= h >> 16;
    }
    out[i] = h;
  }

  unsigned int acc = 0u;
  for (int i = 0; i < N; i++)
    acc ^= out[i];
  printf("int_hash %u\n", acc);
  return 0;
}
