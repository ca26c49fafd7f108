// user.cuh - what the CUDA ports of the user kernels (examples/user/*.c) share beyond
// common.cuh: the port of a reduction over the threads (a warp's partial sums by shuffles,
// then one atomic per warp: cgpredict/atomics.py, the plain port it predicts) and conversions
// for the --check comparison of integer and double results.
//
// The ports follow the corpus ports (validation/README.md, "The ports"): arrays as pointer
// parameters (plain: float*, restrict: CGP_CONST ... CGP_RESTRICT), loop bounds and guards as
// run-time int parameters, array strides as the C file's size macros, the C file's constants
// as constants, a host loop of launches as written (rec.host_loop).
#pragma once

#include "../common.cuh"

namespace cgp {

// v summed over the 32 lanes of a warp, the sum in lane 0 (5 shuffle + add steps, written
// out: no loop, so the SASS check's `#pragma unroll 1` build adds none). Every lane of the
// warp must call it (full mask): threads past the end contribute 0.
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  v += __shfl_down_sync(0xffffffffu, v, 16);
  v += __shfl_down_sync(0xffffffffu, v, 8);
  v += __shfl_down_sync(0xffffffffu, v, 4);
  v += __shfl_down_sync(0xffffffffu, v, 2);
  v += __shfl_down_sync(0xffffffffu, v, 1);
  return v;
}

// The first lane of its warp (threadIdx.x: every user port is a 1-D or 2-D launch whose
// block width is a multiple of 32, as the reference blocks are).
__device__ __forceinline__ bool first_lane() { return (threadIdx.x & 31u) == 0u; }

// A host vector as floats (rel_err compares floats): int bins, double sums.
template <class T>
std::vector<float> as_float(const std::vector<T>& v) {
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace cgp
