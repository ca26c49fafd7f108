// DRAM read bandwidth: every SM streams 16-byte loads over a buffer many times larger than L2
// (grid-stride loop, full occupancy); bytes / best event time of `reps` runs.
//   bytes=B reps=N
#include "common.cuh"

__global__ void read_stream(const int4* __restrict__ buf, long long n, int* sink) {
  int acc = 0;
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
#pragma unroll 4
  for (; i < n; i += stride) {
    int4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffabcd) sink[0] = acc;
}

int main(int argc, char** argv) {
  long long bytes = arg_int(argc, argv, "bytes", 1LL << 31);
  int reps = (int)arg_int(argc, argv, "reps", 5);
  Json j;
  common_fields(j, "bandwidth");
  int4* buf;
  int* sink;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMalloc(&sink, sizeof(int)));
  CK(cudaMemset(buf, 1, bytes));
  int nsm = sm_count();
  int per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor) / 512;
  Timer t;
  std::vector<double> ms_v;
  for (int r = 0; r < reps + 1; ++r) {
    t.start();
    read_stream<<<nsm * per_sm, 512>>>(buf, bytes / 16, sink);
    float ms = t.stop_ms();
    if (r > 0) ms_v.push_back(ms);  // run 0 warms up
  }
  j.integer("bytes", bytes);
  j.nums("ms", ms_v);
  // per 16-byte load: LDG, 4 XOR-type ops (LOP3 merges some), index add, compare, branch
  j.integer("pure_insts", 1);
  j.integer("total_insts", 6);
  j.print();
  return 0;
}
