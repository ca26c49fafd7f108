// dram_random.cu -- DRAM read rate for random pieces of G bytes (task t1, the random gather).
//
// One thread reads one float of x (1 GiB, 20x the H100's 50 MB L2): thread i reads word
// (i mod G/4) of piece perm(i / (G/4)), perm a bijective hash of the piece index, so every
// word is read exactly once and consecutive pieces lie far apart in memory. Nothing is
// written (a value never present in x guards the only store). Modes:
//   seq      G = x: the identity (a plain stream; reference rate)
//   rand G   G = 32, 64, 128, 256, 512, 1024, 4096: pieces in random order
//   half G   G = 64, 128: pieces of G in random order, only the first 32 B of each read
//            (the buddy sector never asked for: what a miss fetches beyond its sector)
// Per mode: the best and median of 7 timed launches after a warm-up (cudaEvent), the bytes
// the threads ask for, and the rate of asked bytes. Output: one JSON line per mode.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__device__ __forceinline__ unsigned perm(unsigned c, unsigned mask, int bits) {
  // bijective on [0, 2^bits): odd multiplies and xor-shifts, masked
  c = (c * 0x9E3779B1u) & mask;
  c ^= c >> (bits / 2 + 1);
  c = (c * 0x85EBCA77u) & mask;
  c ^= c >> (bits / 3 + 1);
  c = (c * 0xC2B2AE3Du) & mask;
  return c;
}

// words: words of a piece (G/4); used: words read of each piece (words or 8)
__global__ void gather_pieces(const float *__restrict__ x, float *out, unsigned n_threads,
                              unsigned words, unsigned used, int shift_used, unsigned mask,
                              int bits, int identity) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_threads) return;
  unsigned piece = i >> shift_used, off = i & (used - 1);
  unsigned p = identity ? piece : perm(piece, mask, bits);
  float v = x[(size_t)p * words + off];
  if (v == -1.0f) out[0] = v;  // never true: keeps the load
}

static int lg(unsigned v) { int b = 0; while ((1u << b) < v) b++; return b; }

int main() {
  const size_t n = (size_t)1 << 28;  // 1 GiB of floats
  float *x, *out;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&out, 4));
  CK(cudaMemset(x, 0, n * 4));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  struct Mode { const char *name; unsigned g; unsigned used_bytes; int identity; };
  std::vector<Mode> modes = {
    {"seq", 4096, 4096, 1}, {"rand", 32, 32, 0}, {"rand", 64, 64, 0}, {"rand", 128, 128, 0},
    {"rand", 256, 256, 0}, {"rand", 512, 512, 0}, {"rand", 1024, 1024, 0},
    {"rand", 4096, 4096, 0}, {"half", 64, 32, 0}, {"half", 128, 32, 0}, {"seq", 4096, 4096, 1},
  };
  for (const Mode &m : modes) {
    unsigned words = m.g / 4, used = m.used_bytes / 4;
    unsigned pieces = (unsigned)(n / words);
    unsigned n_threads = pieces * used;
    int bits = lg(pieces);
    unsigned mask = pieces - 1;
    unsigned blocks = (n_threads + 255) / 256;
    std::vector<float> ms;
    for (int r = 0; r < 8; r++) {
      CK(cudaEventRecord(a));
      gather_pieces<<<blocks, 256>>>(x, out, n_threads, words, used, lg(used), mask, bits,
                                     m.identity);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      CK(cudaGetLastError());
      float t;
      CK(cudaEventElapsedTime(&t, a, b));
      if (r) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double asked = (double)n_threads * 4.0;
    printf("{\"mode\": \"%s\", \"piece_bytes\": %u, \"read_bytes_of_piece\": %u, "
           "\"asked_bytes\": %.0f, \"best_ms\": %.5f, \"median_ms\": %.5f, "
           "\"asked_gbps_best\": %.1f}\n", m.name, m.g, m.used_bytes, asked, ms[0],
           ms[ms.size() / 2], asked / (ms[0] * 1e6));
    fflush(stdout);
  }
  return 0;
}
