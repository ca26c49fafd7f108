// Dependent-chain latency of one thread's arithmetic (issue 24: compute.SASS_CHAIN and the
// device's fp_latency_cycles / fp64_latency_cycles / sfu_latency_cycles on a thread's
// critical path). One thread (one warp, one block) runs `n` operations each of which needs the
// previous one's result, timed in the kernel with clock64(); cycles per operation:
//   ffma   x = x * a + b                         (FFMA)
//   dfma   x = x * a + b, double                 (DFMA)
//   rsqrt  x = rsqrtf(x)                          (MUFU.RSQ, rsqrt.approx.ftz.f32)
//   fdiv   x = c / x, IEEE                        (MUFU.RCP, 5 FFMA, FCHK, slow-path test)
//   sqrt   x = sqrtf(x) + 1, IEEE                 (MUFU.RSQ, FMUL, FFMA, FFMA, test) + FADD
//   ddiv   x = c / x, double IEEE                 (MUFU.RCP64H, DFMA Newton steps, test)
//   dsqrt  x = sqrt(x) + 1, double IEEE           (MUFU.RSQ64H, DFMA steps, test) + DADD
// Operands stay near 1 (c = 1.0001, sqrt(x) + 1 -> 2.618): the fast path every time.
// Prints one JSON object. Usage: dep_chain [n=4096]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 2; } } while (0)

template <int U, class T, class Op>
__device__ void chain(int n, T x0, Op op, T* out, long long* cycles) {
  T x = x0;
  long long t0 = clock64();
#pragma unroll 1
  for (int k = 0; k < n; k += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) x = op(x);
  }
  long long t1 = clock64();
  out[0] = x;
  cycles[0] = t1 - t0;
}

struct Ffma { float a, b; __device__ float operator()(float x) const { return x * a + b; } };
struct Dfma { double a, b; __device__ double operator()(double x) const { return x * a + b; } };
struct Rsq { __device__ float operator()(float x) const { return rsqrtf(x); } };
struct Fdiv { float c; __device__ float operator()(float x) const { return c / x; } };
struct Fsqrt { __device__ float operator()(float x) const { return sqrtf(x) + 1.0f; } };
struct Ddiv { double c; __device__ double operator()(double x) const { return c / x; } };
struct Dsqrt { __device__ double operator()(double x) const { return sqrt(x) + 1.0; } };

// the operands come from memory so nvcc cannot fold the chain
template <int U> __global__ void k_ffma(int n, const float* p, float* o, long long* c) { chain<U>(n, p[0], Ffma{p[1], p[2]}, o, c); }
template <int U> __global__ void k_dfma(int n, const double* p, double* o, long long* c) { chain<U>(n, p[0], Dfma{p[1], p[2]}, o, c); }
template <int U> __global__ void k_rsqrt(int n, const float* p, float* o, long long* c) { chain<U>(n, p[0], Rsq{}, o, c); }
template <int U> __global__ void k_fdiv(int n, const float* p, float* o, long long* c) { chain<U>(n, p[0], Fdiv{p[3]}, o, c); }
template <int U> __global__ void k_sqrt(int n, const float* p, float* o, long long* c) { chain<U>(n, p[0], Fsqrt{}, o, c); }
template <int U> __global__ void k_ddiv(int n, const double* p, double* o, long long* c) { chain<U>(n, p[0], Ddiv{p[3]}, o, c); }
template <int U> __global__ void k_dsqrt(int n, const double* p, double* o, long long* c) { chain<U>(n, p[0], Dsqrt{}, o, c); }

static int g_n = 4096;  // operations a chain

// One chain of n operations, U to a loop trip; the fastest of 4 runs after a warm-up.
template <class T, class K>
static double cycles_per_op(K kern, int n) {
  T h[4] = {(T)1.5, (T)0.999, (T)0.001, (T)1.0001};
  T *p, *o;
  long long* c;
  CK(cudaMalloc(&p, sizeof h)); CK(cudaMalloc(&o, sizeof(T))); CK(cudaMalloc(&c, sizeof(long long)));
  CK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
  long long best = -1;
  for (int r = 0; r < 5; ++r) {  // the first run loads the module and warms the caches
    kern<<<1, 1>>>(n, p, o, c);
    CK(cudaDeviceSynchronize());
    long long cyc;
    CK(cudaMemcpy(&cyc, c, sizeof cyc, cudaMemcpyDeviceToHost));
    if (r > 0 && (best < 0 || cyc < best)) best = cyc;
  }
  cudaFree(p); cudaFree(o); cudaFree(c);
  return (double)best / n;
}

// Unrolled 8 to a trip, the loop's own cost (a trip's branch and counter: about 25 cycles for
// one warp on the H100) is an eighth; the one-op trip gives op latency + that cost.
template <class T, template <int> class W>
static int run(const char* name, bool first) {
  const double u8 = cycles_per_op<T>(W<8>::k, g_n), u1 = cycles_per_op<T>(W<1>::k, g_n);
  printf("%s\"%s\": {\"cycles_per_op\": %.3f, \"cycles_per_trip_of_one\": %.3f}",
         first ? "" : ", ", name, u8, u1);
  return u8 < 0 || u1 < 0;
}

#define WRAP(NAME) template <int U> struct W_##NAME { static constexpr auto k = NAME<U>; };
WRAP(k_ffma) WRAP(k_dfma) WRAP(k_rsqrt) WRAP(k_fdiv) WRAP(k_sqrt) WRAP(k_ddiv) WRAP(k_dsqrt)

int main(int argc, char** argv) {
  g_n = argc > 1 ? atoi(argv[1]) : 4096;
  const int n = g_n;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("{\"gpu\": \"%s\", \"n\": %d, \"ops\": {", prop.name, n);
  int rc = run<float, W_k_ffma>("ffma", true) | run<double, W_k_dfma>("dfma", false)
         | run<float, W_k_rsqrt>("rsqrt", false) | run<float, W_k_fdiv>("fdiv", false)
         | run<float, W_k_sqrt>("sqrt", false) | run<double, W_k_ddiv>("ddiv", false)
         | run<double, W_k_dsqrt>("dsqrt", false);
  printf("}}\n");
  return rc;
}
