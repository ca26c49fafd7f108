// DRAM bandwidth one launch reaches on k SMs (t7, 2026-11-27, eq. (3a)): a grid-stride sum of
// a 512 MiB float array by k blocks (k <= 132: one block an SM) of T threads, each thread
// summing float4 loads, one store a thread. Prints: T k us GB_per_s (median of 5 after one
// warm-up, cudaEvent pair around one launch).
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

__global__ void gs_sum(const float4 *__restrict__ a, size_t n4, float *out) {
  float s = 0.f;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = a[i];
    s += v.x + v.y + v.z + v.w;
  }
  out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
  const size_t n4 = ((size_t)512 << 20) / 16;
  float4 *a; float *out;
  if (cudaMalloc(&a, n4 * 16) != cudaSuccess || cudaMalloc(&out, 132 * 1024 * 4) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n"); return 1;
  }
  cudaMemset(a, 0, n4 * 16);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  printf("T k us GB_per_s\n");
  for (int T : {256, 1024})
    for (int k : {1, 8, 16, 32, 48, 64, 96, 132}) {
      std::vector<float> v;
      for (int rep = 0; rep < 6; ++rep) {
        cudaEventRecord(e0);
        gs_sum<<<k, T>>>(a, n4, out);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1);
        if (rep) v.push_back(ms);
      }
      std::sort(v.begin(), v.end());
      float ms = v[v.size() / 2];
      printf("%d %d %.2f %.1f\n", T, k, ms * 1e3f, n4 * 16 / (ms * 1e-3) / 1e9);
    }
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  return 0;
}
