// Atomic throughput on the L2 (issue 24: the atomic bound of models/bounds.py).
//   1. one address: every warp's lane 0 adds to one float (the reduction port's pattern), and
//      to one int: operations per second -> core cycles per operation on one address;
//   2. a footprint sweep: every lane adds 1 to bins[h(i) % nbins] (the histogram's pattern),
//      nbins = 32 .. 4M ints, pseudo-random bins: operations per second against the footprint.
// Prints one JSON object. Usage: atomics [ops=16777216]
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 2; } } while (0)

__global__ void one_addr_f(int n, float* s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (threadIdx.x & 31) == 0) atomicAdd(s, 1.0f);
}
__global__ void one_addr_i(int n, int* s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (threadIdx.x & 31) == 0) atomicAdd(s, 1);
}
__global__ void bins_i(int n, unsigned mask, int* bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 15;
    atomicAdd(&bins[h & mask], 1);
  }
}

template <class F> static float time_ms(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  f();  // warm-up
  cudaDeviceSynchronize();
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  return best;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1] + (argv[1][0] == 'o' ? 4 : 0)) : 16777216;
  int clk_khz = 0, dev = 0;
  CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, dev));
  float* sf; int* si; int* bins;
  const int max_bins = 1 << 22;
  CK(cudaMalloc(&sf, 4)); CK(cudaMalloc(&si, 4)); CK(cudaMalloc(&bins, 4 * max_bins));
  CK(cudaMemset(bins, 0, 4 * max_bins));
  int grid = (n + 255) / 256;
  float tf = time_ms([&] { one_addr_f<<<grid, 256>>>(n, sf); });
  float ti = time_ms([&] { one_addr_i<<<grid, 256>>>(n, si); });
  CK(cudaGetLastError());
  printf("{\"bench\": \"atomics\", \"clock_khz\": %d, \"ops_one_address\": %d, "
         "\"one_address_float_ms\": %.6g, \"one_address_int_ms\": %.6g, \"sweep\": [",
         clk_khz, n / 32, tf, ti);
  for (int nb = 32, first = 1; nb <= max_bins; nb *= 2, first = 0) {
    float t = time_ms([&] { bins_i<<<grid, 256>>>(n, (unsigned)nb - 1, bins); });
    printf("%s{\"bins\": %d, \"ops\": %d, \"ms\": %.6g}", first ? "" : ", ", nb, n, t);
  }
  CK(cudaGetLastError());
  printf("]}\n");
  return 0;
}
