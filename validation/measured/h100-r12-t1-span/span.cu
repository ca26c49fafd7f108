// t1 (cgpredict r12): how long short one-pass kernels run at the boost clock, apart from the
// launch. 2DCONV (validation/cuda/2dconv.cu's kernel) at NI=NJ=2048 and 4096, blocks 32x8 and
// 32x32, and sfu_heavy (examples/user/sfu_heavy.c) at N=2^22. For each, in three L2 states
// (port: upload A / x, then memset B / y, as the ports' reset; clean: port, then a kernel reading
// a 256 MB scratch array; again: right after the same launch), median of 9 of:
//   pair_us:  cudaEvent pair around the launch on an idle GPU (as the ports time it);
//   spin_us:  the same pair with the launch queued behind a 200-us spin kernel (GPU busy while
//             the host submits: the pair holds the queued start plus the kernel);
//   span_us:  %globaltimer from the first block's start to the last block's end (the kernel's
//             work alone; an instrumented copy of the kernel, 2 atomics a block);
// plus the SM clock during a spin (clock64 / globaltimer) and the globaltimer's step.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long g; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); return g;
}
template <bool SPAN>
__global__ void conv2d(int ni, int nj, const float* A, float* B, unsigned long long* span) {
  unsigned long long t0 = 0;
  if (SPAN && threadIdx.x == 0 && threadIdx.y == 0) t0 = gtime();
  const float c11 = 0.2f, c21 = 0.5f, c31 = -0.8f, c12 = -0.3f, c22 = 0.6f, c32 = -0.9f;
  const float c13 = 0.4f, c23 = 0.7f, c33 = 0.1f;
  int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni - 1 && j < nj - 1)
    B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c21 * A[(i - 1) * nj + j] + c31 * A[(i - 1) * nj + (j + 1)] + c12 * A[i * nj + (j - 1)] + c22 * A[i * nj + j] + c32 * A[i * nj + (j + 1)] + c13 * A[(i + 1) * nj + (j - 1)] + c23 * A[(i + 1) * nj + j] + c33 * A[(i + 1) * nj + (j + 1)];
  if (SPAN) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      atomicMin(&span[0], t0);
      atomicMax(&span[1], gtime());
    }
  }
}
template <bool SPAN>
__global__ void sfu(int n, const float* x, float* y, unsigned long long* span) {
  unsigned long long t0 = 0;
  if (SPAN && threadIdx.x == 0) t0 = gtime();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = expf(x[i]) / sqrtf(x[i] + 1.0f);
  if (SPAN) {
    __syncthreads();
    if (threadIdx.x == 0) { atomicMin(&span[0], t0); atomicMax(&span[1], gtime()); }
  }
}
__global__ void read_all(size_t n, const float4* s, float* sink) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    acc += s[i].x + s[i].w;
  if (acc == 12345.678f) *sink = acc;
}
__global__ void spin(long long cycles) { long long c0 = clock64(); while (clock64() - c0 < cycles) {} }
__global__ void clock_probe(long long n, unsigned long long* out) {
  unsigned long long g0 = gtime(); long long c0 = clock64();
  while (clock64() - c0 < n) {}
  long long c1 = clock64(); unsigned long long g1 = gtime();
  if (threadIdx.x == 0) { out[0] = c1 - c0; out[1] = g1 - g0; }
}
__global__ void timer_step(unsigned long long* out) {  // smallest nonzero globaltimer step
  unsigned long long a = gtime(), best = ~0ull;
  for (int k = 0; k < 2000; ++k) { unsigned long long b = gtime(); if (b != a) { best = min(best, b - a); a = b; } }
  out[0] = best;
}

static cudaEvent_t ev0, ev1;
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

struct Case {
  const char* name; int n; int bx, by;  // 2dconv: n = NI = NJ; sfu: by = 0, n = N
};

int main() {
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  size_t sn = (256u << 20) / sizeof(float4);
  float4* scratch; float* sink; unsigned long long* span;
  CK(cudaMalloc(&scratch, sn * sizeof(float4))); CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&span, 2 * sizeof(unsigned long long)));
  CK(cudaMemset(scratch, 0, sn * sizeof(float4)));
  unsigned long long h[2];
  clock_probe<<<1, 32>>>(1LL << 22, span); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h, span, 16, cudaMemcpyDeviceToHost));
  double mhz = 1e3 * (double)h[0] / (double)h[1];
  timer_step<<<1, 1>>>(span); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h, span, 8, cudaMemcpyDeviceToHost));
  printf("{\"bench\": \"t1_span\", \"sm_clock_mhz\": %.1f, \"globaltimer_step_ns\": %llu", mhz, h[0]);
  Case cases[] = {{"2dconv_2048_32x8", 2048, 32, 8}, {"2dconv_2048_32x32", 2048, 32, 32},
                  {"2dconv_4096_32x8", 4096, 32, 8}, {"2dconv_4096_32x32", 4096, 32, 32},
                  {"sfu_4194304_256x1", 1 << 22, 256, 0}};
  for (const Case& c : cases) {
    const bool is_sfu = c.by == 0;
    size_t elems = is_sfu ? (size_t)c.n : (size_t)c.n * c.n;
    std::vector<float> hA(elems);
    for (size_t k = 0; k < elems; ++k) hA[k] = is_sfu ? (float)(k % 97) * 0.01f : (float)((k * 7 + 1) % c.n) / c.n;
    float *A, *B;
    CK(cudaMalloc(&A, elems * 4)); CK(cudaMalloc(&B, elems * 4));
    auto reset = [&] { CK(cudaMemcpy(A, hA.data(), elems * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(B, 0, elems * 4)); };
    auto launch = [&](bool with_span) {
      if (is_sfu) {
        int grid = (c.n + 255) / 256;
        if (with_span) sfu<true><<<grid, 256>>>(c.n, A, B, span); else sfu<false><<<grid, 256>>>(c.n, A, B, span);
      } else {
        dim3 block(c.bx, c.by), grid((c.n - 2 + c.bx - 1) / c.bx, (c.n - 2 + c.by - 1) / c.by);
        if (with_span) conv2d<true><<<grid, block>>>(c.n, c.n, A, B, span); else conv2d<false><<<grid, block>>>(c.n, c.n, A, B, span);
      }
    };
    reset(); launch(false); CK(cudaDeviceSynchronize());
    printf(", \"%s\": {\"bytes\": %zu", c.name, 2 * elems * 4);
    const char* states[3] = {"port", "clean", "again"};
    for (const char* st : states) {
      std::vector<float> pair, spun, spans;
      for (int r = 0; r < 9; ++r) {
        for (int mode = 0; mode < 3; ++mode) {
          reset();
          if (st[0] == 'c') read_all<<<132 * 8, 256>>>(sn, scratch, sink);
          if (st[0] == 'a') launch(false);
          CK(cudaDeviceSynchronize());
          if (mode == 0) {
            CK(cudaEventRecord(ev0)); launch(false); CK(cudaEventRecord(ev1)); CK(cudaEventSynchronize(ev1));
            float ms; CK(cudaEventElapsedTime(&ms, ev0, ev1)); pair.push_back(1e3f * ms);
          } else if (mode == 1) {
            spin<<<1, 32>>>(400000);  // about 200 us at 1980 MHz
            CK(cudaEventRecord(ev0)); launch(false); CK(cudaEventRecord(ev1)); CK(cudaEventSynchronize(ev1));
            float ms; CK(cudaEventElapsedTime(&ms, ev0, ev1)); spun.push_back(1e3f * ms);
          } else {
            unsigned long long init[2] = {~0ull, 0ull};
            CK(cudaMemcpy(span, init, 16, cudaMemcpyHostToDevice));
            if (st[0] == 'a') { launch(false); }  // the copy above came after the first launch
            else if (st[0] == 'c') { read_all<<<132 * 8, 256>>>(sn, scratch, sink); }
            else { CK(cudaMemset(B, 0, elems * 4)); }  // the port's last call before its launch
            launch(true); CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h, span, 16, cudaMemcpyDeviceToHost));
            spans.push_back((float)(h[1] - h[0]) / 1e3f);
          }
        }
      }
      printf(", \"%s\": {\"pair_us\": %.3f, \"spin_us\": %.3f, \"span_us\": %.3f}", st, median(pair), median(spun), median(spans));
    }
    printf("}");
    fflush(stdout);
    CK(cudaFree(A)); CK(cudaFree(B));
  }
  printf("}\n");
  return 0;
}
