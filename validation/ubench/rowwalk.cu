// rowwalk.cu -- t6 (cgpredict issue: row walks GESUMMV/DCT1D/ATAX): is the extra time of an
// L1 row walk (one thread per row, 8 warps an SM) beyond its L1 wavefronts a latency exposure
// of the misses (depends on where the missed sectors come from: L2 or DRAM) or an SM-side
// cost per filled sector (does not)? Each kernel is timed with clock64 per block (SM cycles)
// and with a cudaEvent pair, its matrix either cold (L2 flushed by a 256 MiB write) or warm
// (read by the same kernel just before: L2-resident), and with reps > 1 (the walk repeated
// in the kernel, every later pass an L1 hit when the rows fit the L1).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

// plain port of DCT-1D / ATAX k1: the accumulator stored every iteration (pointers may alias)
__global__ void walk_plain(int n, int reps, const float* C, const float* X, float* Y, long long* span) {
  long long t0 = clock64();
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  Y[k] = 0.0f;
  for (int r = 0; r < reps; r++)
    for (int m = 0; m < n; m++)
      Y[k] += C[(size_t)k * n + m] * X[m];
  __syncthreads();
  if (threadIdx.x == 0) span[blockIdx.x] = clock64() - t0;
}
// restrict port: accumulator in a register
__global__ void walk_restrict(int n, int reps, const float* __restrict__ C, const float* __restrict__ X,
                              float* __restrict__ Y, long long* span) {
  long long t0 = clock64();
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int r = 0; r < reps; r++)
    for (int m = 0; m < n; m++)
      acc += C[(size_t)k * n + m] * X[m];
  Y[k] = acc;
  __syncthreads();
  if (threadIdx.x == 0) span[blockIdx.x] = clock64() - t0;
}
// plain GESUMMV: two row walks an iteration, tmp and y stored every iteration
__global__ void gesummv_plain(int n, int reps, const float* A, const float* B, const float* x,
                              float* tmp, float* y, long long* span) {
  long long t0 = clock64();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tmp[i] = 0.0f; y[i] = 0.0f;
  for (int r = 0; r < reps; r++)
    for (int j = 0; j < n; j++) {
      tmp[i] += A[(size_t)i * n + j] * x[j];
      y[i] += B[(size_t)i * n + j] * x[j];
    }
  y[i] = 1.5f * tmp[i] + 1.2f * y[i];
  __syncthreads();
  if (threadIdx.x == 0) span[blockIdx.x] = clock64() - t0;
}

int main(int argc, char** argv) {
  const char* out = argc > 1 ? argv[1] : "rowwalk.csv";
  FILE* f = fopen(out, "w");
  fprintf(f, "kernel,mode,n,rows,reps,blocks,event_ms,max_block_cycles,mean_block_cycles,cycles_per_warp_iter\n");
  int dev; CK(cudaGetDevice(&dev)); int clk; CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev));
  const size_t flushBytes = 256ull << 20;
  char* flush; CK(cudaMalloc(&flush, flushBytes));
  const int maxRows = 4096, maxN = 4096;
  float *A, *B, *x, *t, *y; long long* span;
  CK(cudaMalloc(&A, (size_t)maxRows * maxN * 4)); CK(cudaMalloc(&B, (size_t)maxRows * maxN * 4));
  CK(cudaMalloc(&x, maxN * 4)); CK(cudaMalloc(&t, maxRows * 4)); CK(cudaMalloc(&y, maxRows * 4));
  CK(cudaMalloc(&span, 4096 * sizeof(long long)));
  CK(cudaMemset(A, 0, (size_t)maxRows * maxN * 4)); CK(cudaMemset(B, 0, (size_t)maxRows * maxN * 4));
  CK(cudaMemset(x, 0, maxN * 4));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  struct Cfg { int kind; int n; int rows; int reps; };
  // kind 0 plain walk, 1 restrict walk, 2 gesummv plain. rows = threads (256 a block).
  std::vector<Cfg> cfgs = {
    {0, 1024, 1024, 1}, {1, 1024, 1024, 1}, {0, 4096, 4096, 1}, {1, 4096, 4096, 1},
    {2, 2048, 4096, 1}, {2, 4096, 4096, 1},
    {0, 64, 1024, 16}, {1, 64, 1024, 16}, {2, 64, 4096, 16}};
  for (const Cfg& c : cfgs) {
    int blocks = c.rows / 256;
    for (int mode = 0; mode < 2; mode++) {  // 0 cold, 1 warm
      float best = 1e30f; long long bmax = 0; double bmean = 0;
      for (int rep = 0; rep < 5; rep++) {
        auto launch = [&] {
          if (c.kind == 0) walk_plain<<<blocks, 256>>>(c.n, c.reps, A, x, y, span);
          else if (c.kind == 1) walk_restrict<<<blocks, 256>>>(c.n, c.reps, A, x, y, span);
          else gesummv_plain<<<blocks, 256>>>(c.n, c.reps, A, B, x, t, y, span);
        };
        if (mode == 0) CK(cudaMemset(flush, rep, flushBytes)); else launch();
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        std::vector<long long> s(blocks); CK(cudaMemcpy(s.data(), span, blocks * 8, cudaMemcpyDeviceToHost));
        if (ms < best) {
          best = ms; bmax = *std::max_element(s.begin(), s.end()); bmean = 0;
          for (long long v : s) bmean += (double)v / blocks;
        }
      }
      double witer = 8.0 * c.n * c.reps;  // warp-iterations an SM (8 warps, one block an SM)
      const char* kn = c.kind == 0 ? "walk_plain" : c.kind == 1 ? "walk_restrict" : "gesummv_plain";
      fprintf(f, "%s,%s,%d,%d,%d,%d,%.5f,%lld,%.0f,%.3f\n", kn, mode ? "warm" : "cold", c.n, c.rows,
              c.reps, blocks, best, bmax, bmean, bmax / witer);
    }
  }
  fprintf(f, "# sm clock attribute %d kHz\n", clk);
  fclose(f);
  return 0;
}
