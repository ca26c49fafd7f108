// gs_loops.cu -- issue 24: GRAMSCHMIDT gs_k3's two i-loops timed apart, beside ATAX's atax_k2
// (the same LDG, LDG, FFMA, STG body), and single data-chained loads (how long a row walk's DRAM
// round trip is, by sectors a warp and by warps in flight). Plain pointers, as the plain ports.
// Event-timed, one GPU. Build: nvcc -O3 -arch=sm_90 -o gs_loops gs_loops.cu ; run: ./gs_loops
// Results: validation/measured/h100-issue24-gs-loops-2026-11-27/ (README.md says which version).
#include <cstdio>
#include <cuda_runtime.h>
#define NJ 8192
#define NI 8192
#define NA 4096
__global__ void gs_full(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    R[k * NJ + j] = 0.0f;
    for (int i = 0; i < ni; i++) R[k * NJ + j] += Q[i * NJ + k] * A[i * NJ + j];
    for (int i = 0; i < ni; i++) A[i * NJ + j] -= Q[i * NJ + k] * R[k * NJ + j];
  }
}
__global__ void gs_loop1(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    R[k * NJ + j] = 0.0f;
    for (int i = 0; i < ni; i++) R[k * NJ + j] += Q[i * NJ + k] * A[i * NJ + j];
  }
}
__global__ void gs_loop2(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    for (int i = 0; i < ni; i++) A[i * NJ + j] -= Q[i * NJ + k] * R[k * NJ + j];
  }
}
// loop 1 with the broadcast operand contiguous (q[i], as ATAX's tmp[i]): a new sector every 8 i
__global__ void gs_loop1_qrow(int ni, int nj, float* A, float* R, float* q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    R[k * NJ + j] = 0.0f;
    for (int i = 0; i < ni; i++) R[k * NJ + j] += q[i] * A[i * NJ + j];
  }
}
__global__ void atax_k2(int nx, int ny, float* A, float* tmp, float* y) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < ny) {
    y[j] = 0.0f;
    for (int i = 0; i < nx; i++) y[j] += A[i * NA + j] * tmp[i];
  }
}
// loop 1 without Q: one load an iteration, ordered behind the accumulator's store
__global__ void l1_onlyA_store(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    R[k * NJ + j] = 0.0f;
    for (int i = 0; i < ni; i++) R[k * NJ + j] += A[i * NJ + j];
  }
}
// A chained by data (its address depends on the running sum), no store in the loop
__global__ void l1_onlyA_data(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    float s = 0.0f;
    for (int i = 0; i < ni; i++) s += A[i * NJ + j + min(__float_as_int(s), 0)];
    R[k * NJ + j] = s;
  }
}
// Q and A chained by data, no store in the loop: the two loads of an iteration together
__global__ void l1_QA_data(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    float s = 0.0f;
    for (int i = 0; i < ni; i++) {
      int o = min(__float_as_int(s), 0);
      s += Q[i * NJ + k + o] * A[i * NJ + j + o];
    }
    R[k * NJ + j] = s;
  }
}
// loop 2 with Q's column as a scalar: only R's reload and A an iteration
__global__ void l2_noQ(int ni, int nj, float* A, float* R, float qv, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    for (int i = 0; i < ni; i++) A[i * NJ + j] -= qv * R[k * NJ + j];
  }
}
// one data-chained load a warp-iteration touching `lanes` distinct words of row i (32: 4 sectors,
// 16: 2 sectors, 1: one sector, a broadcast); one warp a block
__global__ void sectors_data(int ni, float* A, int lanes, float* out) {
  int j = blockIdx.x * 32 + (threadIdx.x % lanes);
  float s = 0.0f;
  for (int i = 0; i < ni; i++) s += A[i * NJ + j + min(__float_as_int(s), 0)];
  out[blockIdx.x * 32 + threadIdx.x] = s;
}
template <class F> static void timeit(const char* name, int iters, F launch) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  launch(); cudaDeviceSynchronize();
  float best = 1e30f, sum = 0.f; const int reps = 5;
  for (int r = 0; r < reps; r++) {
    cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); sum += ms; if (ms < best) best = ms;
  }
  printf("%-16s min %.4f ms mean %.4f ms  ns/iter(min) %.2f  cycles/iter@1980MHz %.1f\n", name, best,
         sum / reps, best * 1e6 / iters, best * 1e6 / iters * 1.98);
}
int main() {
  float *A, *R, *Q, *q, *Aa, *tmp, *y;
  cudaMalloc(&A, sizeof(float) * NI * NJ); cudaMalloc(&R, sizeof(float) * NJ * NJ);
  cudaMalloc(&Q, sizeof(float) * NI * NJ); cudaMalloc(&q, sizeof(float) * NI);
  cudaMalloc(&Aa, sizeof(float) * NA * NA); cudaMalloc(&tmp, sizeof(float) * NA); cudaMalloc(&y, sizeof(float) * NA);
  cudaMemset(A, 0, sizeof(float) * NI * NJ); cudaMemset(R, 0, sizeof(float) * NJ * NJ);
  cudaMemset(Q, 0, sizeof(float) * NI * NJ); cudaMemset(q, 0, sizeof(float) * NI);
  cudaMemset(Aa, 0, sizeof(float) * NA * NA); cudaMemset(tmp, 0, sizeof(float) * NA);
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0); printf("clock attr %d kHz\n", clk);
  for (int k : {0}) {
    int g = (NJ - k - 1 + 255) / 256;
    printf("k=%d blocks=%d\n", k, g);
    timeit("gs_full", 2 * NI, [&] { gs_full<<<g, 256>>>(NI, NJ, A, R, Q, k); });
    timeit("gs_loop1", NI, [&] { gs_loop1<<<g, 256>>>(NI, NJ, A, R, Q, k); });
    timeit("gs_loop2", NI, [&] { gs_loop2<<<g, 256>>>(NI, NJ, A, R, Q, k); });
    timeit("gs_loop1_qrow", NI, [&] { gs_loop1_qrow<<<g, 256>>>(NI, NJ, A, R, q, k); });
  }
  {
    int k = 0, g = 32;
    timeit("l1_onlyA_store", NI, [&] { l1_onlyA_store<<<g, 256>>>(NI, NJ, A, R, Q, k); });
    timeit("l1_onlyA_data", NI, [&] { l1_onlyA_data<<<g, 256>>>(NI, NJ, A, R, Q, k); });
    timeit("l1_QA_data", NI, [&] { l1_QA_data<<<g, 256>>>(NI, NJ, A, R, Q, k); });
    timeit("l2_noQ", NI, [&] { l2_noQ<<<g, 256>>>(NI, NJ, A, R, 0.5f, k); });
  }
  {  // the A round trip by load: blocks x threads of the data-chained single load
    int shapes[][2] = {{32, 256}, {132, 32}};
    for (auto& s : shapes) {
      char name[64]; snprintf(name, sizeof name, "onlyA_data %dx%d", s[0], s[1]);
      timeit(name, NI, [&] { l1_onlyA_data<<<s[0], s[1]>>>(NI, NJ, A, R, Q, 0); });
    }
  }
  for (int lanes : {32, 16, 8, 1}) {
    char name[64]; snprintf(name, sizeof name, "sectors %d lanes", lanes);
    timeit(name, NI, [&] { sectors_data<<<132, 32>>>(NI, A, lanes, Q); });
  }
  timeit("atax_k2", NA, [&] { atax_k2<<<NA / 256, 256>>>(NA, NA, Aa, tmp, y); });
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
