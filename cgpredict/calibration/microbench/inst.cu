// Instruction throughput and latency per class: int32 (mad.lo.s32 -> IMAD), fp32 (fma.rn.f32
// -> FFMA), fp64 (fma.rn.f64 -> DFMA), sfu (rsqrt.approx.ftz.f32 -> MUFU.RSQ).
//   latency:    one thread, one dependent chain; clock64() cycles / operations.
//   throughput: every SM full of warps, ILP independent chains per thread; warp instructions
//               per SM cycle = thread ops / 32 / (event time x clock x SMs).
//   classes=int32,fp32,fp64,sfu iters=N [duration_ms=D: one long throughput run per class,
//   plus class `idle` (__nanosleep on every SM) for the static power, with its time window]
// Operands are kernel arguments and the ops inline PTX, so nothing folds or disappears.
#include "common.cuh"

#define UNROLL 32
#define ILP 8

struct Sfu { float v; };

__device__ __forceinline__ void op(int& x, int a, int b) {
  asm volatile("mad.lo.s32 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
}
__device__ __forceinline__ void op(float& x, float a, float b) {
  asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
}
__device__ __forceinline__ void op(double& x, double a, double b) {
  asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(x) : "d"(a), "d"(b));
}
__device__ __forceinline__ void op(Sfu& x, Sfu, Sfu) {
  asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x.v));
}
__device__ __forceinline__ void seed(int& x, int i) { x = i + 1; }
__device__ __forceinline__ void seed(float& x, int i) { x = 1.0f + i; }
__device__ __forceinline__ void seed(double& x, int i) { x = 1.0 + i; }
__device__ __forceinline__ void seed(Sfu& x, int i) { x.v = 2.0f + i; }
__device__ __forceinline__ bool odd(int x) { return x == 0x7fffabcd; }
__device__ __forceinline__ bool odd(float x) { return x == -1.2345f; }
__device__ __forceinline__ bool odd(double x) { return x == -1.2345; }
__device__ __forceinline__ bool odd(Sfu x) { return x.v == -1.2345f; }

template <class T, int CHAINS>
__global__ void k_inst(T a, T b, long long iters, long long* cycles, int* sink) {
  T x[CHAINS];
#pragma unroll
  for (int i = 0; i < CHAINS; ++i) seed(x[i], threadIdx.x + i);
  long long t0 = clock64();
  for (long long it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int i = 0; i < CHAINS; ++i) op(x[i], a, b);
  }
  long long t1 = clock64();
  bool any = false;
#pragma unroll
  for (int i = 0; i < CHAINS; ++i) any |= odd(x[i]);
  if (any) sink[0] = 1;
  if (threadIdx.x == 0 && blockIdx.x == 0) cycles[0] = t1 - t0;
}

__global__ void k_idle(long long cycles, long long* out) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) __nanosleep(10000);
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = clock64() - t0;
}

struct Ctx {
  long long* cycles;
  int* sink;
  int blocks, threads;
  Timer t;
};

template <class T>
static void run_class(Ctx& c, Json& j, const char* name, T a, T b, long long iters,
                      double duration_ms) {
  // latency: one thread, one chain
  k_inst<T, 1><<<1, 1>>>(a, b, iters, c.cycles, c.sink);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  long long cyc = 0;
  CK(cudaMemcpy(&cyc, c.cycles, sizeof cyc, cudaMemcpyDeviceToHost));
  std::string k = name;
  j.num((k + "_latency_cycles").c_str(), (double)cyc / (iters * UNROLL));
  // throughput: full machine, ILP chains
  k_inst<T, ILP><<<c.blocks, c.threads>>>(a, b, iters / 4 + 1, c.cycles, c.sink);  // warm
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < 3; ++r) {
    c.t.start();
    k_inst<T, ILP><<<c.blocks, c.threads>>>(a, b, iters, c.cycles, c.sink);
    CK(cudaGetLastError());
    float ms = c.t.stop_ms();
    if (ms < best) best = ms;
  }
  double ops = (double)c.blocks * c.threads * iters * UNROLL * ILP;
  j.num((k + "_thread_ops").c_str(), ops);
  j.num((k + "_ms").c_str(), best);
  if (duration_ms > 0) {
    long long n = (long long)(iters * duration_ms / (best > 0.01 ? best : 0.01));
    n = n < 1 ? 1 : n;
    long long t0 = wall_ns();
    c.t.start();
    k_inst<T, ILP><<<c.blocks, c.threads>>>(a, b, n, c.cycles, c.sink);
    CK(cudaGetLastError());
    float ms = c.t.stop_ms();
    long long t1 = wall_ns();
    j.integer((k + "_energy_t0_ns").c_str(), t0);
    j.integer((k + "_energy_t1_ns").c_str(), t1);
    j.num((k + "_energy_kernel_ms").c_str(), ms);
    j.num((k + "_energy_thread_ops").c_str(), (double)c.blocks * c.threads * n * UNROLL * ILP);
  }
}

int main(int argc, char** argv) {
  std::vector<std::string> classes;
  {
    std::string s = arg_str(argc, argv, "classes", "int32,fp32,fp64,sfu");
    size_t p = 0;
    while (p <= s.size()) {
      size_t q = s.find(',', p);
      if (q == std::string::npos) q = s.size();
      if (q > p) classes.push_back(s.substr(p, q - p));
      p = q + 1;
    }
  }
  long long iters = arg_int(argc, argv, "iters", 4096);
  double duration_ms = arg_double(argc, argv, "duration_ms", 0);
  Json j;
  double mhz = common_fields(j, "inst");
  Ctx c;
  CK(cudaMalloc(&c.cycles, sizeof(long long)));
  CK(cudaMalloc(&c.sink, sizeof(int)));
  c.threads = 256;
  c.blocks = sm_count() * (attr(cudaDevAttrMaxThreadsPerMultiProcessor) / c.threads);
  std::string names;
  for (const std::string& cls : classes) {
    if (cls == "int32") run_class<int>(c, j, "int32", 3, 7, iters, duration_ms);
    else if (cls == "fp32") run_class<float>(c, j, "fp32", 0.999f, 0.5f, iters, duration_ms);
    else if (cls == "fp64") run_class<double>(c, j, "fp64", 0.999, 0.5, iters / 4 + 1, duration_ms);
    else if (cls == "sfu") run_class<Sfu>(c, j, "sfu", Sfu{0}, Sfu{0}, iters, duration_ms);
    else if (cls == "idle") {
      if (duration_ms <= 0) continue;
      long long cyc = (long long)(duration_ms * 1e3 * mhz);
      long long t0 = wall_ns();
      c.t.start();
      k_idle<<<c.blocks, c.threads>>>(cyc, c.cycles);
      CK(cudaGetLastError());
      float ms = c.t.stop_ms();
      long long t1 = wall_ns();
      j.integer("idle_energy_t0_ns", t0);
      j.integer("idle_energy_t1_ns", t1);
      j.num("idle_energy_kernel_ms", ms);
    } else {
      fprintf(stderr, "inst: unknown class %s\n", cls.c_str());
      return 2;
    }
    names += (names.empty() ? "" : ",") + cls;
  }
  j.str("classes", names.c_str());
  j.integer("ilp", ILP);
  j.integer("threads", (long long)c.blocks * c.threads);
  j.integer("pure_insts", UNROLL * ILP);
  j.integer("total_insts", UNROLL * ILP + 3);
  j.print();
  return 0;
}
