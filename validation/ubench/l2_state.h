// What the L2-state micro-benchmarks share (launch_state.cu, reset_state.cu, dirty_l2.cu,
// dirty_evict.cu, alloc_state.cu, dram_spread.cu): the blind strided kernel they time
// (out[i] = in[3i] + in[3i + 2]) and a grid-stride read of a scratch array that leaves the L2
// holding its clean lines (whatever was dirty written back). Included from the .cu beside it.
#pragma once
#include <cuda_runtime.h>

__global__ void strided(int n, const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[3 * (size_t)i] + in[3 * (size_t)i + 2];
}

__global__ void read_all(size_t n, const float4* s, float* sink) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    acc += s[i].x + s[i].w;
  if (acc == 12345.678f) *sink = acc;  // never true: keeps the loads
}
