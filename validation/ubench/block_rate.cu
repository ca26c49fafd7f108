// How fast the GPU starts thread blocks (the block dispatch rate: a bound on a launch of many
// small blocks, eq. (BD) of docs/models.md). Kernels that do (almost) nothing, launched with
// B blocks of T threads, each launch timed by a cudaEvent pair (median of 9 after a warm-up):
//   empty  - no instruction but EXIT (a block is dispatched, runs, retires);
//   store  - each thread stores one int (the least work a data-parallel kernel does);
//   empty with D bytes of dynamic shared memory a block (1 or 2 blocks an SM at a time: the
//          per-SM turnover of one block when blocks cannot overlap).
// The slope of time over B at a fixed T is the GPU-wide cost of one block; its change with T
// says whether the cost is per block or per warp. Prints one JSON object.
// Usage: block_rate
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return -1; } } while (0)

__global__ void k_empty() {}

__global__ void k_store(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

extern __shared__ int smem_dyn[];
__global__ void k_empty_smem(int* out) {
  if (threadIdx.x == 1023) out[0] = smem_dyn[0];  // never taken: keeps the smem request
}

// median ms of 9 timed launches (after 2 untimed), or -1 on an error
template <class F>
static double time_ms(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  launch(); launch();
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  std::vector<float> ms;
  for (int r = 0; r < 9; ++r) {
    cudaEventRecord(a); launch(); cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0; cudaEventElapsedTime(&t, a, b); ms.push_back(t);
  }
  cudaEventDestroy(a); cudaEventDestroy(b);
  if (cudaGetLastError() != cudaSuccess) return -1;
  std::sort(ms.begin(), ms.end());
  return ms[4];
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int* out;
  const size_t max_threads = size_t(1) << 26;
  CK(cudaMalloc(&out, max_threads * sizeof(int)));
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  printf("{\"gpu\": \"%s\", \"sms\": %d, \"clock_khz\": %d, \"rows\": [\n", prop.name,
         prop.multiProcessorCount, clock_khz);
  bool first = true;
  auto row = [&](const char* k, int t, long b, int smem, double ms) {
    printf("%s {\"kernel\": \"%s\", \"threads\": %d, \"blocks\": %ld, \"smem\": %d, \"ms\": %.6f}",
           first ? "" : ",\n", k, t, b, smem, ms);
    first = false;
  };
  const int threads[] = {32, 64, 128, 256, 1024};
  for (int t : threads) {
    for (long b = 1024; b <= (1L << 20); b *= 4) {
      if (size_t(b) * t > max_threads) break;
      row("empty", t, b, 0, time_ms([&] { k_empty<<<b, t>>>(); }));
      row("store", t, b, 0, time_ms([&] { k_store<<<b, t>>>(out); }));
    }
  }
  // one block an SM at a time (D just over half the SM's shared memory), then two
  int big = int(prop.sharedMemPerMultiprocessor / 2 + 1024);
  int two = int(prop.sharedMemPerMultiprocessor / 2 - 4096);
  CK(cudaFuncSetAttribute(k_empty_smem, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          int(prop.sharedMemPerBlockOptin)));
  for (int smem : {big, two}) {
    for (long b = 132; b <= 132L * 256; b *= 4) {
      row("empty_smem", 32, b, smem, time_ms([&] { k_empty_smem<<<b, 32, smem>>>(out); }));
    }
  }
  printf("\n]}\n");
  return 0;
}
