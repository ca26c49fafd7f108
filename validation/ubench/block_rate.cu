// Block dispatch rate (t7, 2026-11-27): how long a launch of G blocks of T threads takes when
// each block does (almost) nothing, so that the work distributor's rate of starting blocks
// is what the time measures. Kernels:
//   empty : each thread returns (a never-true branch keeps the pointer live);
//   store : each thread stores one int (a streaming store of G*T*4 bytes);
//   smem  : empty, with dynamic shared memory so that only 1 (or 4) blocks fit an SM.
// Each point: 20 back-to-back launches between one cudaEvent pair (so the host's launch call
// is hidden behind the GPU's work), 5 repetitions, the median per launch printed.
// Output: one line per point: kernel T G smem_bytes us_per_launch ns_per_block.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

__global__ void k_empty(int *out) { if (out == nullptr && threadIdx.x == 12345) out[0] = 1; }
__global__ void k_store(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }
__global__ void k_smem(int *out) {
  extern __shared__ int s[];
  if (out == nullptr && threadIdx.x == 12345) { s[0] = 1; out[0] = s[1]; }
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

static float time_launch(int which, int T, int G, int smem, int *buf, int n) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> v;
  for (int rep = 0; rep < 6; ++rep) {
    cudaEventRecord(a);
    for (int i = 0; i < n; ++i) {
      if (which == 0) k_empty<<<G, T>>>(buf);
      else if (which == 1) k_store<<<G, T>>>(buf);
      else k_smem<<<G, T, smem>>>(buf);
    }
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    if (rep > 0) v.push_back(ms * 1000.f / n);  // first repetition warms up
  }
  std::sort(v.begin(), v.end());
  cudaEventDestroy(a); cudaEventDestroy(b);
  return v[v.size() / 2];
}

int main() {
  int *buf; CK(cudaMalloc(&buf, (size_t)1 << 28));  // 256 MiB: 2^26 ints
  CK(cudaFuncSetAttribute(k_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  const char *names[] = {"empty", "store", "smem"};
  int Ts[] = {32, 64, 128, 256, 512, 1024};
  printf("kernel T G smem_bytes us_per_launch ns_per_block\n");
  for (int which = 0; which < 2; ++which)
    for (int T : Ts)
      for (long threads : {1L << 20, 1L << 22, 1L << 24, 1L << 26}) {
        int G = (int)(threads / T);
        float us = time_launch(which, T, G, 0, buf, 20);
        printf("%s %d %d 0 %.3f %.4f\n", names[which], T, G, us, us * 1000.f / G);
      }
  for (int smem : {0, 48 * 1024, 120 * 1024})
    for (int T : {32, 256})
      for (int G : {132 * 16, 132 * 128}) {
        float us = time_launch(2, T, G, smem, buf, 20);
        printf("smem %d %d %d %.3f %.4f\n", T, G, smem, us, us * 1000.f / G);
      }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  return 0;
}
