// DRAM read bandwidth: every SM streams 16-byte loads over a buffer many times larger than L2
// (grid-stride loop, full occupancy, 4 independent loads in flight per thread) `passes` times
// in one timed launch (long enough that block ramp-up and tail cost little);
// bytes x passes / best event time of `reps` runs.
//   bytes=B reps=N passes=P
#include "common.cuh"

// __launch_bounds__(512, 4): <= 32 registers, so 4 blocks of 512 threads fill an SM.
__global__ void __launch_bounds__(512, 4)
read_stream(const int4* __restrict__ buf, long long n, int passes, int* sink) {
  int acc = 0;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (int p = 0; p < passes; ++p) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {  // 4 independent loads in flight per thread
      int4 v0 = __ldcg(buf + i), v1 = __ldcg(buf + i + stride);
      int4 v2 = __ldcg(buf + i + 2 * stride), v3 = __ldcg(buf + i + 3 * stride);
      acc ^= v0.x ^ v0.y ^ v0.z ^ v0.w ^ v1.x ^ v1.y ^ v1.z ^ v1.w;
      acc ^= v2.x ^ v2.y ^ v2.z ^ v2.w ^ v3.x ^ v3.y ^ v3.z ^ v3.w;
    }
    for (; i < n; i += stride) {
      int4 v = __ldcg(buf + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x7fffabcd) sink[0] = acc;
}

int main(int argc, char** argv) {
  long long bytes = arg_int(argc, argv, "bytes", 1LL << 31);
  int reps = (int)arg_int(argc, argv, "reps", 5);
  int passes = (int)arg_int(argc, argv, "passes", 1);
  if (passes < 1) passes = 1;
  Json j;
  common_fields(j, "bandwidth");
  int4* buf;
  int* sink;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMalloc(&sink, sizeof(int)));
  CK(cudaMemset(buf, 1, bytes));
  int nsm = sm_count();
  int threads = 512, per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_stream, threads, 0));
  if (per_sm < 1) {
    fprintf(stderr, "bandwidth: a %d-thread block of read_stream cannot launch\n", threads);
    return 2;
  }
  Timer t;
  std::vector<double> ms_v;
  for (int r = 0; r < reps + 1; ++r) {
    t.start();
    read_stream<<<nsm * per_sm, threads>>>(buf, bytes / 16, r > 0 ? passes : 1, sink);
    CK(cudaGetLastError());
    float ms = t.stop_ms();
    if (r > 0) ms_v.push_back(ms);  // run 0 (one pass) warms up
  }
  j.integer("bytes", bytes);
  j.integer("passes", passes);
  j.integer("threads_per_block", threads);
  j.integer("blocks_per_sm", per_sm);
  j.nums("ms", ms_v);
  // SASS (sm_90) of the 4-load iteration: 33 instructions for 4 LDG.E.128 (64-bit address
  // adds, 4 LOP3 per load to fold the words, the 64-bit bound check, the branch)
  j.integer("pure_insts", 4);
  j.integer("total_insts", 33);
  j.print();
  return 0;
}
