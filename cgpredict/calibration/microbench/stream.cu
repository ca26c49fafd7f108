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

// __launch_bounds__(1024, 2): at most 32 registers, so a 1024-thread block fits the 64 K
// registers a block may use (ptxas gave 128 without it: the launch failed). 32-bit word
// offsets (footprint <= 16 GiB; the power-of-two mask makes the 2^32 wrap-around harmless);
// all UNROLL loads of an iteration issue before the first use.
__global__ void __launch_bounds__(1024, 2)
stream(const unsigned* __restrict__ buf, unsigned long long mask_words, int stride,
       unsigned long long span_words, long long iters, unsigned* sink) {
  unsigned lane = threadIdx.x & 31;
  unsigned gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  unsigned nw = (gridDim.x * blockDim.x) >> 5;
  unsigned mask = (unsigned)mask_words;
  unsigned off = gw * (unsigned)span_words + lane * (unsigned)stride;
  unsigned step = nw * (unsigned)span_words;
  unsigned acc = 0;
#pragma unroll 1
  for (long long i = 0; i < iters; i += UNROLL) {
    unsigned v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) v[k] = ld_cg(buf + ((off + k * step) & mask));
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc += v[k];
    off += UNROLL * step;
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
  if (footprint < 4096 || (footprint & (footprint - 1)) || footprint > (1LL << 34)) {
    fprintf(stderr, "stream: footprint must be a power of two in [4096, 16 GiB]\n");
    return 2;
  }
  int nsm = sm_count();
  // the block size the compiled kernel can launch (registers), and the resident blocks per SM
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, stream));
  int threads = std::min(1024, fa.maxThreadsPerBlock) / 32 * 32;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream, threads, 0));
  if (threads < 32 || per_sm < 1) {
    fprintf(stderr, "stream: kernel cannot launch (%d registers/thread, %d threads/block)\n",
            fa.numRegs, fa.maxThreadsPerBlock);
    return 2;
  }
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
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int r = 0; r < reps; ++r) {
      t.start();
      stream<<<blocks, threads>>>(buf, mask, (int)s, span, iters, sink);
      CK(cudaGetLastError());
      float ms = t.stop_ms();
      if (ms < best) best = ms;
    }
    sectors.push_back(sectors_per_warp((int)s));
    warp_insts.push_back((long long)nw * iters);
    ms_v.push_back(best);
  }
  j.integer("footprint", footprint);
  j.integer("warps", (long long)nw);
  j.integer("threads_per_block", threads);
  j.integer("blocks_per_sm", per_sm);
  j.integer("regs_per_thread", fa.numRegs);
  j.integer("sector_bytes", 32);
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
    CK(cudaGetLastError());
    float ms = t.stop_ms();
    long long n = (long long)(iters * duration_ms / (ms > 0.01 ? ms : 0.01));
    n = std::max(n / UNROLL * UNROLL, (long long)UNROLL);
    long long t0 = wall_ns();
    t.start();
    stream<<<blocks, threads>>>(buf, mask, (int)s, span, n, sink);
    CK(cudaGetLastError());
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
