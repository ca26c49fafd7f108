// int_hash.cu -- CUDA port of examples/blind/int_hash.c: out[i] = ROUNDS = 16 rounds of
// MurmurHash3's fmix32 of in[i] ^ i, one thread per element (kernel `int_hash`, 1-D grid over
// i). ROUNDS is the C file's constant (not a size): nvcc unrolls the round loop whole. The
// check compares the hashes exactly.
#include "../user/user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif
#define ROUNDS 16

static const int GRID_DIMS = 1;

__global__ void int_hash(int n, CGP_CONST unsigned int* CGP_RESTRICT in,
                         unsigned int* CGP_RESTRICT out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
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
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<unsigned int> in(N);
  unsigned int seed = 99u;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    in[i] = seed;
  }
  cgp::DevBuf<unsigned int> din(N), dout(N);
  auto reset = [&] { din.upload(in); dout.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("int_hash", [&] { int_hash<<<grid, block>>>(N, din, dout); });
  };
  auto check = [&] {
    std::vector<unsigned int> ref(N);
    for (int i = 0; i < N; i++) {
      unsigned int h = in[i] ^ (unsigned int)i;
      for (int r = 0; r < ROUNDS; r++) {
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
      }
      ref[i] = h;
    }
    return dout.download() == ref ? 0.0 : (double)INFINITY;  // integers: exact
  };
  return cgp::run_bench("int_hash", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
