// Pointer chasing (one thread): latency of L1, L2 and DRAM, cache capacities and line/sector
// sizes. A chain of 8-byte pointers with a fixed stride over a footprint; each load depends on
// the previous one, so cycles / access = the latency of the level that serves the access.
//
//   sweep=footprint values=F1,F2,...  stride=S   cyclic chain over each footprint, one full
//        warm-up pass (loads with `warm` caching), then `accesses` timed loads continuing the
//        chain: the latency plateaus give the levels, the footprint where a plateau ends the
//        capacity.
//   sweep=stride values=S1,S2,... footprint=F    first touch of a chain with stride S (no
//        warm-up; warm=cg pre-loads the footprint into L2 only, flush=B evicts L2 first):
//        cycles/access grows with S until S reaches the fetch granularity (line or sector).
//   mode=ca|cg  ld.global.ca (L1 and L2) or ld.global.cg (L2 only) for the timed loads.
#include "common.cuh"

#define UNROLL 16

template <int CG>
__device__ __forceinline__ char* ld_ptr(char* p) {
  char* r;
  if (CG)
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
  else
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
  return r;
}

__global__ void init_chain(char* buf, long long n, long long stride) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    *(char**)(buf + i * stride) = buf + ((i + 1) % n) * stride;
}

__global__ void flush_l2(const int4* buf, long long n, int* sink) {
  int acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    acc ^= buf[i].x;
  if (acc == 0x7fffabcd) sink[0] = acc;
}

// WARM: 0 none, 1 ca, 2 cg.
template <int WARM, int CG>
__global__ void chase(char* start, long long warm_steps, long long steps, long long* out,
                      char** sink) {
  char* p = start;
  if (WARM)
    for (long long i = 0; i < warm_steps; ++i) p = WARM == 2 ? ld_ptr<1>(p) : ld_ptr<0>(p);
  long long t0 = clock64();
  for (long long i = 0; i < steps; i += UNROLL) {
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) p = ld_ptr<CG>(p);
  }
  long long t1 = clock64();
  out[0] = t1 - t0;
  sink[0] = p;
}

typedef void (*chase_fn)(char*, long long, long long, long long*, char**);

static chase_fn pick(int warm, int cg) {
  if (cg) return warm == 0 ? chase<0, 1> : warm == 1 ? chase<1, 1> : chase<2, 1>;
  return warm == 0 ? chase<0, 0> : warm == 1 ? chase<1, 0> : chase<2, 0>;
}

int main(int argc, char** argv) {
  const char* sweep = arg_str(argc, argv, "sweep", "footprint");
  std::string mode = arg_str(argc, argv, "mode", "cg");
  std::string warm_s = arg_str(argc, argv, "warm", std::string(sweep) == "footprint" ? mode.c_str() : "none");
  std::vector<long long> values = arg_list(argc, argv, "values", "4096,8192");
  long long stride = arg_int(argc, argv, "stride", 128);
  long long footprint = arg_int(argc, argv, "footprint", 1 << 24);
  long long accesses = arg_int(argc, argv, "accesses", 4096);
  long long flush = arg_int(argc, argv, "flush", 0);
  accesses = (accesses + UNROLL - 1) / UNROLL * UNROLL;
  int cg = mode == "cg";
  int warm = warm_s == "ca" ? 1 : warm_s == "cg" ? 2 : 0;
  bool by_footprint = std::string(sweep) == "footprint";

  long long max_bytes = 0;
  for (long long v : values) {
    long long need = by_footprint ? v : std::max(footprint, v * accesses);
    if (need > max_bytes) max_bytes = need;
  }
  Json j;
  common_fields(j, "pchase");
  char* buf;
  long long* d_out;
  char** d_sink;
  int4* fbuf = nullptr;
  int* isink;
  CK(cudaMalloc(&buf, max_bytes + 4096));
  CK(cudaMalloc(&d_out, sizeof(long long)));
  CK(cudaMalloc(&d_sink, sizeof(char*)));
  CK(cudaMalloc(&isink, sizeof(int)));
  if (flush > 0) CK(cudaMalloc(&fbuf, flush));
  for (int w = 0; w < 3; ++w)
    for (int c = 0; c < 2; ++c)  // as much L1 as possible: no shared-memory carve-out
      CK(cudaFuncSetAttribute(pick(w, c), cudaFuncAttributePreferredSharedMemoryCarveout, 0));

  std::vector<double> cycles_per_access;
  std::vector<long long> steps_used;
  int nsm = sm_count();
  for (long long v : values) {
    long long s = by_footprint ? stride : v;
    long long f = by_footprint ? v : std::max(footprint, v * accesses);
    long long n = f / s;
    if (n < 1) n = 1;
    init_chain<<<nsm * 4, 256>>>(buf, n, s);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (flush > 0) {
      flush_l2<<<nsm * 4, 256>>>(fbuf, flush / 16, isink);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
    }
    long long warm_steps = warm ? n : 0;
    long long steps = accesses;
    if (!by_footprint && steps > n) steps = n / UNROLL * UNROLL;
    if (!by_footprint && warm) {  // pre-load the footprint, then time a fresh first touch
      pick(warm, cg)<<<1, 1>>>(buf, n, UNROLL, d_out, d_sink);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      warm_steps = 0;
      pick(0, cg)<<<1, 1>>>(buf, 0, steps, d_out, d_sink);
      CK(cudaGetLastError());
    } else {
      pick(warm, cg)<<<1, 1>>>(buf, warm_steps, steps, d_out, d_sink);
      CK(cudaGetLastError());
    }
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    long long cyc = 0;
    CK(cudaMemcpy(&cyc, d_out, sizeof cyc, cudaMemcpyDeviceToHost));
    cycles_per_access.push_back(steps ? (double)cyc / steps : 0.0);
    steps_used.push_back(steps);
  }
  j.str("sweep", sweep);
  j.str("mode", mode.c_str());
  j.str("warm", warm_s.c_str());
  j.integer("stride", stride);
  j.integer("footprint", footprint);
  j.ints("values", values);
  j.ints("accesses", steps_used);
  j.nums("cycles_per_access", cycles_per_access);
  // Accuracy (SPEC 6): timed loads over all instructions of the timed loop, per unrolled
  // iteration UNROLL loads + ~3 loop instructions (add, compare, branch).
  j.integer("pure_insts", UNROLL);
  j.integer("total_insts", UNROLL + 3);
  j.print();
  return 0;
}
