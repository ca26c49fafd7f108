// L2 atomics with the histogram port's data (issue 24, eq. (A2)): atomics.cu's sweep hashes the
// thread index, whose structure sends neighbouring warps to the same bins; the port's bins come
// from a linear congruential generator (validation/cuda/user/histogram.cu). Every lane adds 1 to
// bins[data[i] & (nbins - 1)], 16M updates, 256-thread blocks:
//   1. random: the port's data, nbins = 32 .. 65536, bins at the start of a 2 MB-aligned array;
//   2. placed: the port's data, 256 bins at 0, 256, 512 and 768 B past that start;
//   3. patterns, 256 bins at the start: warp_same (bins[(i / 32) % nbins]: one address a warp
//      instruction, 32 lanes on it), lane_seq (bins[i % nbins]: 32 consecutive addresses a warp
//      instruction, the next warp instruction the next 32), lane_same8 (bins[(i / 4) % nbins]:
//      8 addresses of 4 lanes each a warp instruction).
// Times are the best of 3 after a warm-up (cudaEvent pair). Prints one JSON object.
// Usage: atomics_data            (all)      atomics_data ncu   (two launches to profile: the
// port's data at 256 bins at 0 and at 512 B)
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 2; } } while (0)

__global__ void hist_data(int n, const int* data, unsigned mask, int* bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i] & mask], 1);
}
// mode 0: warp_same, 1: lane_seq, 2: lane_same8
template <int MODE>
__global__ void hist_pattern(int n, unsigned mask, int* bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int b = MODE == 0 ? i >> 5 : MODE == 1 ? i : i >> 2;
  if (i < n) atomicAdd(&bins[b & mask], 1);
}

template <class F> static float best_ms(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  f();
  cudaDeviceSynchronize();
  float best = 1e30f;
  for (int r = 0; r < 3; ++r) {
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  return best;
}

int main(int argc, char** argv) {
  const int n = 1 << 24, grid = (n + 255) / 256;
  std::vector<int> h(n);
  unsigned seed = 7u;
  for (int i = 0; i < n; i++) { seed = seed * 1103515245u + 12345u; h[i] = (int)(seed >> 16); }
  int* data; char* arena;
  CK(cudaMalloc(&data, sizeof(int) * n));
  CK(cudaMalloc(&arena, 4u << 20));
  CK(cudaMemcpy(data, h.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
  CK(cudaMemset(arena, 0, 4u << 20));
  auto bins_at = [&](size_t off) { return reinterpret_cast<int*>(arena + off); };
  if (argc > 1 && !strcmp(argv[1], "ncu")) {
    hist_data<<<grid, 256>>>(n, data, 255u, bins_at(0));
    hist_data<<<grid, 256>>>(n, data, 255u, bins_at(512));
    CK(cudaDeviceSynchronize());
    printf("{\"bench\": \"atomics_data\", \"mode\": \"ncu\", \"arena\": %llu}\n",
           (unsigned long long)(size_t)arena);
    return 0;
  }
  printf("{\"bench\": \"atomics_data\", \"ops\": %d, \"arena\": %llu, \"random\": [", n,
         (unsigned long long)(size_t)arena);
  for (int nb = 32, first = 1; nb <= 65536; nb *= 2, first = 0) {
    const float ms = best_ms([&] { hist_data<<<grid, 256>>>(n, data, nb - 1u, bins_at(0)); });
    printf("%s{\"bins\": %d, \"ms\": %.6g}", first ? "" : ", ", nb, ms);
  }
  printf("], \"placed_256\": [");
  for (int k = 0; k < 4; ++k) {
    const float ms = best_ms([&] { hist_data<<<grid, 256>>>(n, data, 255u, bins_at(256 * k)); });
    printf("%s{\"offset\": %d, \"ms\": %.6g}", k ? ", " : "", 256 * k, ms);
  }
  const float ws = best_ms([&] { hist_pattern<0><<<grid, 256>>>(n, 255u, bins_at(0)); });
  const float ls = best_ms([&] { hist_pattern<1><<<grid, 256>>>(n, 255u, bins_at(0)); });
  const float l8 = best_ms([&] { hist_pattern<2><<<grid, 256>>>(n, 255u, bins_at(0)); });
  CK(cudaGetLastError());
  printf("], \"patterns_256\": {\"warp_same_ms\": %.6g, \"lane_seq_ms\": %.6g, "
         "\"lane_same8_ms\": %.6g}}\n", ws, ls, l8);
  return 0;
}
