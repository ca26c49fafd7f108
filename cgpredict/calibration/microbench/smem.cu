// Shared memory: load latency and bank-conflict cost (one warp), and a many-warp run for the
// energy per shared-memory transaction.
//
// Thread t of the warp chases j = sh[j] starting at word t*stride, every word holding its own
// byte offset: each load depends on the previous one and all 32 lanes hit the words
// t*stride (mod the array), i.e. a conflict degree X = the largest number of distinct words of
// the warp in one bank (computed here for 32 banks x 4 bytes). cycles/access vs X: the
// intercept-free value at X = 1 is the shared latency, the slope the replay cost per extra way.
//   strides=0,1,2,4,8,16,32  iters=N  [duration_ms=D: energy run over all SMs, stride 1]
#include "common.cuh"

#define UNROLL 16
#define WORDS 4096  // 16 KB of shared memory

__global__ void smem_chase(int stride, long long iters, unsigned salt, long long* out,
                           unsigned* sink) {
  __shared__ unsigned sh[WORDS];
  // every word holds its own shared-window address (a self loop), so a load needs no
  // address arithmetic: ld.shared [j] -> j
  for (int i = threadIdx.x; i < WORDS; i += blockDim.x)
    sh[i] = (unsigned)__cvta_generic_to_shared(&sh[i]) ^ salt;
  __syncthreads();
  int lane = threadIdx.x & 31;
  unsigned j = sh[(lane * stride) % WORDS];
  __syncwarp();
  long long t0 = clock64();
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(j)::"memory");
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = t1 - t0;
  if (j == 0xffffffffu) sink[0] = j;
}

static int conflict_degree(int stride) {
  int count[32][32];  // bank -> distinct words (at most 32)
  int n[32] = {0};
  int worst = 1;
  for (int t = 0; t < 32; ++t) {
    int w = (t * stride) % WORDS, b = w % 32, seen = 0;
    for (int k = 0; k < n[b]; ++k) seen |= count[b][k] == w;
    if (!seen) count[b][n[b]++] = w;
    if (n[b] > worst) worst = n[b];
  }
  return worst;
}

int main(int argc, char** argv) {
  std::vector<long long> strides = arg_list(argc, argv, "strides", "0,1,2,4,8,16,32");
  long long iters = arg_int(argc, argv, "iters", 2048);
  double duration_ms = arg_double(argc, argv, "duration_ms", 0);
  Json j;
  common_fields(j, "smem");
  long long* d_out;
  unsigned* d_sink;
  int nsm = sm_count();
  int blocks = nsm * 8;
  CK(cudaMalloc(&d_out, blocks * sizeof(long long)));
  CK(cudaMalloc(&d_sink, sizeof(unsigned)));
  std::vector<long long> degrees;
  std::vector<double> cyc;
  for (long long s : strides) {
    smem_chase<<<1, 32>>>((int)s, iters, 0u, d_out, d_sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long long c = 0;
    CK(cudaMemcpy(&c, d_out, sizeof c, cudaMemcpyDeviceToHost));
    degrees.push_back(conflict_degree((int)s));
    cyc.push_back((double)c / (iters * UNROLL));
  }
  j.ints("strides", strides);
  j.ints("conflict_degree", degrees);
  j.nums("cycles_per_access", cyc);
  j.integer("pure_insts", UNROLL);
  j.integer("total_insts", UNROLL + 3);
  if (duration_ms > 0) {  // energy: every SM busy with conflict-free shared loads
    cudaFuncAttributes fa;  // the largest block the compiled kernel can launch
    CK(cudaFuncGetAttributes(&fa, smem_chase));
    int threads = std::min(1024, fa.maxThreadsPerBlock) / 32 * 32;
    Timer t;
    long long probe = 4096;
    t.start();
    smem_chase<<<blocks, threads>>>(1, probe, 0u, d_out, d_sink);
    CK(cudaGetLastError());
    float ms = t.stop_ms();
    long long n = (long long)(probe * duration_ms / (ms > 0.01 ? ms : 0.01));
    long long t0 = wall_ns();
    t.start();
    smem_chase<<<blocks, threads>>>(1, n, 0u, d_out, d_sink);
    CK(cudaGetLastError());
    float ms2 = t.stop_ms();
    long long t1 = wall_ns();
    j.integer("energy_t0_ns", t0);
    j.integer("energy_t1_ns", t1);
    j.num("energy_kernel_ms", ms2);
    j.num("smem_transactions", (double)blocks * (threads / 32) * n * UNROLL);
  }
  j.print();
  return 0;
}
