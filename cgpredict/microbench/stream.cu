// Many-warp load stream with a controlled coalescing degree: departure delays of L2 and DRAM
// transactions (MWP-CWP dd_L2, dd_dram) and, with duration_ms, an energy run.
//
// Every SM is filled with warps (full occupancy); lane t of a warp loads word
// base + t*stride (ld.global.cg: L2 and below, never L1). stride 0 -> 1 sector per warp
// instruction, 1 -> 4 sectors (coalesced), 2 -> 8, 4 -> 16, 8 -> 32 (fully uncoalesced).
// Consecutive warp instructions of the machine walk through a footprint of `footprint`
// bytes (a power of two): smaller than L2 (after a warm-up pass) -> L2 stream; far larger
// than L2 -> DRAM stream. In a saturated stream, SM cycles per warp instruction =
// a + dd * sectors_per_warp: the slope over the strides is the departure delay.
//   footprint=B strides=0,1,2,4,8 bytes_per_point=B [duration_ms=D: energy, stride 1]
#include "common.cuh"

#define UNROLL 8

__device__ __forceinline__ unsigned ld_cg(const unsigned* p) {
  unsigned r;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
  return r;
}

__global__ void stream(const unsigned* __restrict__ buf, unsigned long long mask_words,
                       int stride, unsigned long long span_words, long long iters,
                       unsigned* sink) {
  unsigned lane = threadIdx.x & 31;
  unsigned long long gw = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) >> 5;
  unsigned long long nw = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
  unsigned long long off = gw * span_words + lane * (unsigned long long)stride;
  unsigned long long step = nw * span_words;
  unsigned acc = 0;
  for (long long i = 0; i < iters; i += UNROLL) {
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      acc += ld_cg(buf + (off & mask_words));
      off += step;
    }
  }
  if (acc == 0x7fffabcdu) sink[0] = acc;
}

// distinct 32-byte sectors touched by one warp instruction (4-byte words)
static int sectors_per_warp(int stride) {
  long long last = -1;
  int n = 0;
  for (int t = 0; t < 32; ++t) {
    long long sec = (long long)t * stride * 4 / 32;
    if (sec != last) ++n;
    last = sec;
  }
  return n;
}

int main(int argc, char** argv) {
  long long footprint = arg_int(argc, argv, "footprint", 1LL << 29);
  std::vector<long long> strides = arg_list(argc, argv, "strides", "0,1,2,4,8");
  long long bytes_per_point = arg_int(argc, argv, "bytes_per_point", 1LL << 30);
  double duration_ms = arg_double(argc, argv, "duration_ms", 0);
  int reps = (int)arg_int(argc, argv, "reps", 3);
  Json j;
  common_fields(j, "stream");
  int nsm = sm_count();
  int threads = 1024;
  int per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor) / threads;
  if (per_sm < 1) per_sm = 1;
  int blocks = nsm * per_sm;
  unsigned long long nw = (unsigned long long)blocks * threads / 32;
  unsigned* buf;
  unsigned* sink;
  CK(cudaMalloc(&buf, footprint));
  CK(cudaMalloc(&sink, sizeof(unsigned)));
  CK(cudaMemset(buf, 1, footprint));
  unsigned long long mask = (unsigned long long)footprint / 4 - 1;
  Timer t;
  std::vector<long long> sectors, warp_insts;
  std::vector<double> ms_v;
  for (long long s : strides) {
    unsigned long long span = s == 0 ? 8 : 32ULL * s;  // words a warp instruction spans
    long long iters = bytes_per_point / (long long)(nw * span * 4);
    iters = std::max(iters / UNROLL * UNROLL, (long long)UNROLL);
    // warm-up: one pass over the footprint (an L2-resident footprint is then hot)
    long long warm = std::max(footprint / (long long)(nw * span * 4), 1LL);
    stream<<<blocks, threads>>>(buf, mask, (int)s, span, (warm + UNROLL - 1) / UNROLL * UNROLL, sink);
    CK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int r = 0; r < reps; ++r) {
      t.start();
      stream<<<blocks, threads>>>(buf, mask, (int)s, span, iters, sink);
      float ms = t.stop_ms();
      if (ms < best) best = ms;
    }
    sectors.push_back(sectors_per_warp((int)s));
    warp_insts.push_back((long long)nw * iters);
    ms_v.push_back(best);
  }
  j.integer("footprint", footprint);
  j.integer("warps", (long long)nw);
  j.ints("strides", strides);
  j.ints("sectors_per_warp", sectors);
  j.ints("warp_insts", warp_insts);
  j.nums("ms", ms_v);
  // per load: LDG + address add, mask (LOP3), offset add, accumulate -> 1 of ~5
  j.integer("pure_insts", UNROLL);
  j.integer("total_insts", UNROLL * 5 + 3);
  if (duration_ms > 0) {
    long long s = 1;
    unsigned long long span = 32;
    long long iters = bytes_per_point / (long long)(nw * span * 4);
    iters = std::max(iters / UNROLL * UNROLL, (long long)UNROLL);
    t.start();
    stream<<<blocks, threads>>>(buf, mask, (int)s, span, iters, sink);
    float ms = t.stop_ms();
    long long n = (long long)(iters * duration_ms / (ms > 0.01 ? ms : 0.01));
    n = std::max(n / UNROLL * UNROLL, (long long)UNROLL);
    long long t0 = wall_ns();
    t.start();
    stream<<<blocks, threads>>>(buf, mask, (int)s, span, n, sink);
    float ms2 = t.stop_ms();
    long long t1 = wall_ns();
    j.integer("energy_t0_ns", t0);
    j.integer("energy_t1_ns", t1);
    j.num("energy_kernel_ms", ms2);
    j.num("energy_sectors", (double)nw * n * sectors_per_warp(1));
    j.num("energy_warp_insts", (double)nw * n);
  }
  j.print();
  return 0;
}
