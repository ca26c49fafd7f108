// t7: what sets a loop trip's cost with several warps on one SMSP (eq. (LT), docs/models.md).
// One block of W warps on one SM (warp w on sub-partition w % 4), each thread a chain of n
// dependent operations, 8 to a loop trip; per mode and W the SM's cycles per warp trip
// (block span / (trips x W)) and the slowest warp's cycles per trip, fastest of 4 runs.
// Modes differ in the register banks of the chain's operands (sm_90 SASS checked with
// nvdisasm before the run) and in the pipe (FFMA: fma heavy or lite; IMAD: heavy only).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return -1; } } while (0)

struct FfmaAB { template <class T> __device__ static T f(T x, T a, T b) { return x * a + b; } };
struct FfmaXX { template <class T> __device__ static T f(T x, T a, T b) { return x * x + b; } };
struct FfmaBA { template <class T> __device__ static T f(T x, T a, T b) { return a * b + x; } };
struct Fadd { template <class T> __device__ static T f(T x, T a, T b) { return x + a; } };
struct Imul { template <class T> __device__ static T f(T x, T a, T b) { return x * x; } };
struct Fmul { template <class T> __device__ static T f(T x, T a, T b) { return x * a; } };

// MODE: 0 float chain(s), 1 int chain(s); C independent chains, U ops of each a trip
template <class Op, class T, int U, int C>
__global__ void k(int n, const T* p, T* o, long long* cyc) {
  T x[C];
#pragma unroll
  for (int c = 0; c < C; ++c) x[c] = p[0] + (T)c;
  const T a = p[1], b = p[2];
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 1
  for (int kk = 0; kk < n; kk += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int c = 0; c < C; ++c) x[c] = Op::f(x[c], a, b);
    }
  }
  long long t1 = clock64();
  T s = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) s += x[c];
  o[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if ((threadIdx.x & 31) == 0) { cyc[2 * (threadIdx.x >> 5)] = t0; cyc[2 * (threadIdx.x >> 5) + 1] = t1; }
}

template <class Op, class T, int U, int C>
static int time_block(int warps, int n, double* span, double* slowest) {
  T h[3] = {(T)1.5, (T)0.999, (T)0.001};
  if (sizeof(T) == 4 && (T)0.5 == 0) { h[0] = (T)3; h[1] = (T)5; h[2] = (T)7; }
  T *p, *o; long long* c;
  CK(cudaMalloc(&p, sizeof h)); CK(cudaMalloc(&o, 32 * warps * sizeof(T)));
  CK(cudaMalloc(&c, 2 * warps * sizeof(long long)));
  CK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
  long long hc[64];
  *span = -1; *slowest = -1;
  for (int r = 0; r < 5; ++r) {
    k<Op, T, U, C><<<1, 32 * warps>>>(n, p, o, c);
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

template <class Op, class T, int U, int C>
static int sweep(const char* name, int n, bool first) {
  static const int ws[] = {1, 2, 4, 8, 12, 16, 24, 32};
  printf("%s\n\"%s\": {\"ops_per_trip\": %d, \"chains\": %d, \"warps\": {", first ? "" : ",", name, U * C, C);
  for (int i = 0; i < 8; ++i) {
    double span, slowest;
    if (time_block<Op, T, U, C>(ws[i], n, &span, &slowest)) return 1;
    const double trips = (double)n / U;
    printf("%s\"%d\": [%.3f, %.4f]", i ? ", " : "", ws[i], slowest / trips, span / (trips * ws[i]));
  }
  printf("}}");
  return 0;
}


// 8 dependent FFMAs a trip whose operand registers ptxas places differently (V picks which of
// 8 loaded values are a and b; the others stay live): sm_90 SASS of the trips (nvdisasm):
// V=8 FFMA R6,R4,R6,R5; V=23 FFMA R7,R5,R7,R0 (two sources in one bank modulo 2, not modulo
// 4); V=1 FFMA R17,R5,R17,R4; V=34 FFMA R8,R0,R8,R5 (one bank modulo 2 and modulo 4)
template <int V>
__global__ void kv(int n, const float* p, float* o, long long* cyc) {
  float x = p[0];
  float q[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) q[i] = p[i + 1];
  const float a = q[V & 7], b = q[(V >> 3) & 7];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) if (i != (V & 7) && i != ((V >> 3) & 7)) s += q[i] * (float)i;
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 1
  for (int kk = 0; kk < n; kk += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) x = x * a + b;
  }
  long long t1 = clock64();
  o[blockIdx.x * blockDim.x + threadIdx.x] = x + s;
  if ((threadIdx.x & 31) == 0) { cyc[2 * (threadIdx.x >> 5)] = t0; cyc[2 * (threadIdx.x >> 5) + 1] = t1; }
}

typedef void (*KFn)(int, const float*, float*, long long*);

static int time_fn(KFn fn, int warps, int n, double* span, double* slowest) {
  float h[9] = {1.5f, 0.999f, 0.001f, 0.998f, 0.002f, 0.997f, 0.003f, 0.996f, 0.004f};
  float *p, *o; long long* c;
  CK(cudaMalloc(&p, sizeof h)); CK(cudaMalloc(&o, 32 * warps * sizeof(float)));
  CK(cudaMalloc(&c, 2 * warps * sizeof(long long)));
  CK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
  long long hc[64];
  *span = -1; *slowest = -1;
  for (int r = 0; r < 5; ++r) {
    fn<<<1, 32 * warps>>>(n, p, o, c);
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

static int sweep_v(const char* name, KFn fn, int n) {
  static const int ws[] = {1, 2, 4, 8, 12, 16, 24, 32};
  printf(",\n\"%s\": {\"ops_per_trip\": 8, \"chains\": 1, \"warps\": {", name);
  for (int i = 0; i < 8; ++i) {
    double span, slowest;
    if (time_fn(fn, ws[i], n, &span, &slowest)) return 1;
    const double trips = (double)n / 8;
    printf("%s\"%d\": [%.3f, %.4f]", i ? ", " : "", ws[i], slowest / trips, span / (trips * ws[i]));
  }
  printf("}}");
  return 0;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 4096;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) { fprintf(stderr, "no GPU\n"); return 2; }
  printf("{\"gpu\": \"%s\", \"n\": %d, \"value\": \"[slowest warp cycles a trip, SM cycles a warp trip]\", \"modes\": {", prop.name, n);
  int rc = sweep<FfmaAB, float, 8, 1>("ffma_ab_8", n, true)
         | sweep<FfmaXX, float, 8, 1>("ffma_xx_8", n, false)
         | sweep<FfmaBA, float, 8, 1>("fadd_b_8", n, false)
         | sweep<Fadd, float, 8, 1>("fadd_8", n, false)
         | sweep<Fmul, float, 8, 1>("fmul_8", n, false)
         | sweep<FfmaAB, int, 8, 1>("imad_ab_8", n, false)
         | sweep<Imul, int, 8, 1>("imul_8", n, false)
         | sweep<FfmaAB, float, 8, 2>("ffma_ab_8x2", n, false)
         | sweep<FfmaAB, float, 16, 1>("ffma_ab_16", n, false)
         | sweep<FfmaAB, float, 2, 1>("ffma_ab_2", n, false)
         | sweep<FfmaAB, float, 4, 1>("ffma_ab_4", n, false)
         | sweep_v("ffma_v8_R6R4R6R5", kv<8>, n) | sweep_v("ffma_v23_R7R5R7R0", kv<23>, n)
         | sweep_v("ffma_v1_R17R5R17R4", kv<1>, n) | sweep_v("ffma_v34_R8R0R8R5", kv<34>, n);
  printf("}}\n");
  return rc;
}
