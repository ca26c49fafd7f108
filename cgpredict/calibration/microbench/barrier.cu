// Barrier cost: one block of `threads` threads per SM runs `iters` x UNROLL __syncthreads();
// clock64() cycles per barrier, for several block sizes.
//   threads=64,128,256,512,1024 iters=N
#include "common.cuh"

#define UNROLL 16

__global__ void k_barrier(long long iters, long long* out) {
  long long t0 = clock64();
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) __syncthreads();
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = t1 - t0;
}

int main(int argc, char** argv) {
  std::vector<long long> sizes = arg_list(argc, argv, "threads", "64,128,256,512,1024");
  long long iters = arg_int(argc, argv, "iters", 4096);
  Json j;
  common_fields(j, "barrier");
  int nsm = sm_count();
  long long* out;
  CK(cudaMalloc(&out, nsm * sizeof(long long)));
  cudaFuncAttributes fa;  // block sizes the compiled kernel cannot launch are left out
  CK(cudaFuncGetAttributes(&fa, k_barrier));
  std::vector<long long> done;
  std::vector<double> cyc;
  for (long long n : sizes) {
    if (n < 1 || n > fa.maxThreadsPerBlock) {
      fprintf(stderr, "barrier: %lld threads exceed the kernel's limit %d: skipped\n", n,
              fa.maxThreadsPerBlock);
      continue;
    }
    done.push_back(n);
    k_barrier<<<nsm, (int)n>>>(iters / 8 + 1, out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    k_barrier<<<nsm, (int)n>>>(iters, out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    std::vector<long long> h(nsm);
    CK(cudaMemcpy(h.data(), out, nsm * sizeof(long long), cudaMemcpyDeviceToHost));
    long long best = h[0];
    for (long long v : h) best = v < best ? v : best;
    cyc.push_back((double)best / (iters * UNROLL));
  }
  j.ints("threads", done);
  j.nums("cycles_per_barrier", cyc);
  j.integer("pure_insts", UNROLL);
  j.integer("total_insts", UNROLL + 3);
  j.print();
  return 0;
}
