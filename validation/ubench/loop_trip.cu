// A loop trip's cost with several warps on one SM (eq. (LT) of docs/models.md; dep_chain.cu
// measures it for one warp: 29.06 cycles a trip of one FFMA). One block of W warps on one SM,
// every thread a chain of n dependent FFMAs, U to a loop trip (U = 1: the trip's branch and
// counter beside each FFMA; U = 8: an eighth of them). Timed in the kernel with clock64() per
// warp; printed: cycles per trip of the slowest warp, and per trip of the SM (all warps' trips
// over the block's cycles), for W = 1, 2, 4, 8, 16, 32 and 4 warps on each of the 4 SM sub-
// partitions (W = 4 places one warp on each). Also "ilp2": two independent chains a thread.
// Prints one JSON object. Usage: loop_trip [n=4096]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return -1; } } while (0)

template <int U, int C>
__global__ void k_trip(int n, const float* p, float* o, long long* cyc) {
  float x[C];
#pragma unroll
  for (int c = 0; c < C; ++c) x[c] = p[0] + c;
  const float a = p[1], b = p[2];
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 1
  for (int k = 0; k < n; k += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int c = 0; c < C; ++c) x[c] = x[c] * a + b;
    }
  }
  long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) s += x[c];
  o[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if ((threadIdx.x & 31) == 0) {
    cyc[2 * (threadIdx.x >> 5)] = t0;
    cyc[2 * (threadIdx.x >> 5) + 1] = t1;
  }
}

// The block's span (first start to last end) and the slowest warp's own cycles, fastest of 4
// runs after a warm-up; -1 on a CUDA error.
template <int U, int C>
static int time_block(int warps, int n, double* span, double* slowest) {
  float h[3] = {1.5f, 0.999f, 0.001f};
  float *p, *o;
  long long* c;
  CK(cudaMalloc(&p, sizeof h)); CK(cudaMalloc(&o, 32 * warps * sizeof(float)));
  CK(cudaMalloc(&c, 2 * warps * sizeof(long long)));
  CK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
  long long hc[64];
  *span = -1; *slowest = -1;
  for (int r = 0; r < 5; ++r) {
    k_trip<U, C><<<1, 32 * warps>>>(n, p, o, c);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hc, c, 2 * warps * sizeof(long long), cudaMemcpyDeviceToHost));
    long long lo = hc[0], hi = hc[1], worst = 0;
    for (int w = 0; w < warps; ++w) {
      lo = hc[2 * w] < lo ? hc[2 * w] : lo;
      hi = hc[2 * w + 1] > hi ? hc[2 * w + 1] : hi;
      worst = hc[2 * w + 1] - hc[2 * w] > worst ? hc[2 * w + 1] - hc[2 * w] : worst;
    }
    if (r > 0 && (*span < 0 || hi - lo < *span)) { *span = (double)(hi - lo); *slowest = (double)worst; }
  }
  cudaFree(p); cudaFree(o); cudaFree(c);
  return 0;
}

template <int U, int C>
static int sweep(const char* name, int n, bool first) {
  static const int ws[] = {1, 2, 4, 8, 16, 32};
  printf("%s\"%s\": {\"ffma_per_trip\": %d, \"chains\": %d, \"warps\": {", first ? "" : ", ", name, U * C, C);
  for (int i = 0; i < 6; ++i) {
    double span, slowest;
    if (time_block<U, C>(ws[i], n, &span, &slowest)) return 1;
    const double trips = (double)n / U;
    printf("%s\"%d\": {\"cycles_per_trip_slowest_warp\": %.3f, \"cycles_per_trip_sm\": %.4f}",
           i ? ", " : "", ws[i], slowest / trips, span / (trips * ws[i]));
  }
  printf("}}");
  return 0;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 4096;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) { fprintf(stderr, "no GPU\n"); return 2; }
  printf("{\"gpu\": \"%s\", \"n\": %d, \"modes\": {", prop.name, n);
  int rc = sweep<1, 1>("trip1", n, true) | sweep<8, 1>("trip8", n, false)
         | sweep<1, 2>("trip1_ilp2", n, false) | sweep<1, 4>("trip1_ilp4", n, false);
  printf("}}\n");
  return rc;
}
