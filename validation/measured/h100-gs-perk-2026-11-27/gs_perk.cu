// gs_perk.cu -- GRAMSCHMIDT (plain port, NI=NJ=8192, 256x1) per-column launch times.
// For chosen columns k: run gs_k3(k-1) (the state the host loop leaves), then time
// gs_k1(k), gs_k2(k), gs_k3(k) with cudaEvents (min of 3 repeats of that sequence).
// Tests whether launches late in the host loop (a small gs_k3 grid) run faster because
// their column sweep fits the L2. Kernels copied from validation/cuda/gramschmidt.cu.
#include <cstdio>
#include <cuda_runtime.h>
#define NI 8192
#define NJ 8192
__global__ void gs_k1(int ni, float* A, float* R, int k) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < 256 && t == 0) {
    float nrm = 0.0f;
    for (int i = 0; i < ni; i++) nrm += A[i * NJ + k] * A[i * NJ + k];
    R[k * NJ + k] = sqrtf(nrm);
  }
}
__global__ void gs_k2(int ni, float* A, float* R, float* Q, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ni) Q[i * NJ + k] = A[i * NJ + k] / R[k * NJ + k];
}
__global__ void gs_k3(int ni, int nj, float* A, float* R, float* Q, int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    R[k * NJ + j] = 0.0f;
    for (int i = 0; i < ni; i++) R[k * NJ + j] += Q[i * NJ + k] * A[i * NJ + j];
    for (int i = 0; i < ni; i++) A[i * NJ + j] -= Q[i * NJ + k] * R[k * NJ + j];
  }
}
static int g3(int k) { int n = NJ - k - 1; return n > 0 ? (n + 255) / 256 : 1; }
int main() {
  size_t bytes = (size_t)NI * NJ * sizeof(float);
  float *A, *R, *Q;
  cudaMalloc(&A, bytes); cudaMalloc(&R, bytes); cudaMalloc(&Q, bytes);
  cudaMemset(A, 0, bytes); cudaMemset(R, 0, bytes); cudaMemset(Q, 0, bytes);
  cudaEvent_t e[4];
  for (int i = 0; i < 4; i++) cudaEventCreate(&e[i]);
  int ks[] = {1, 2048, 4096, 6144, 6400, 6656, 6912, 7168, 7424, 7680, 7936, 8064, 8160};
  printf("k,gs3_blocks,gs_k1_ms,gs_k2_ms,gs_k3_ms\n");
  for (int k : ks) {
    float best[3] = {1e30f, 1e30f, 1e30f};
    for (int rep = 0; rep < 3; rep++) {
      gs_k3<<<g3(k - 1), 256>>>(NI, NJ, A, R, Q, k - 1);
      cudaEventRecord(e[0]);
      gs_k1<<<1, 256>>>(NI, A, R, k);
      cudaEventRecord(e[1]);
      gs_k2<<<NI / 256, 256>>>(NI, A, R, Q, k);
      cudaEventRecord(e[2]);
      gs_k3<<<g3(k), 256>>>(NI, NJ, A, R, Q, k);
      cudaEventRecord(e[3]);
      cudaEventSynchronize(e[3]);
      for (int s = 0; s < 3; s++) {
        float ms; cudaEventElapsedTime(&ms, e[s], e[s + 1]);
        if (ms < best[s]) best[s] = ms;
      }
    }
    printf("%d,%d,%.4f,%.4f,%.4f\n", k, g3(k), best[0], best[1], best[2]);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { printf("error %s\n", cudaGetErrorString(err)); return 1; }
  return 0;
}
