// What the event-pair micro-benchmarks share (launch_state.cu, reset_state.cu): the CUDA
// error check, a one-warp spin kernel to queue a launch behind, one launch timed between a
// cudaEvent pair, and the median of a run of such times. Included from the .cu beside it
// (nvcc finds it in the source's folder).
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

__global__ void spin(long long cycles) {
  long long c0 = clock64();
  while (clock64() - c0 < cycles) {}
}

static cudaEvent_t ev0, ev1;  // created by the including program's main

// one launch of f between the event pair, in ms
template <class F> static float timed(F f) {
  CK(cudaEventRecord(ev0));
  f();
  CK(cudaEventRecord(ev1));
  CK(cudaEventSynchronize(ev1));
  float ms;
  CK(cudaEventElapsedTime(&ms, ev0, ev1));
  return ms;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
