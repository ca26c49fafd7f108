// mm.cu -- CUDA reference port of polybench_c/mm.c: C = A * B (naive matrix multiply).
// Kernel `mm`: 2-D grid, i -> y, j -> x; k sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as the PolyBench/GPU ports do (common.cuh, "Sizes").
#include "common.cuh"

#ifndef N
#define N 1024
#endif

static const int GRID_DIMS = 2;

__global__ void mm_kernel(int n, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT B,
                          float* CGP_RESTRICT C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    C[i * N + j] = 0.0f;
    for (int k = 0; k < n; k++)
      C[i * N + j] += A[i * N + k] * B[k * N + j];
  }
}

static void init(std::vector<float>& A, std::vector<float>& B) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i * N + j] = (float)((i * j + 1) % N) / N;
      B[i * N + j] = (float)((i * (j + 1) + 2) % N) / N;
    }
}

static void reference(const std::vector<float>& A, const std::vector<float>& B,
                      std::vector<float>& C) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      C[i * N + j] = 0.0f;
      for (int k = 0; k < N; k++)
        C[i * N + j] += A[i * N + k] * B[k * N + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> A((size_t)N * N), B((size_t)N * N);
  init(A, B);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC((size_t)N * N);
  auto reset = [&] { dA.upload(A); dB.upload(B); dC.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, N, N);
    rec.launch("mm", [&] { mm_kernel<<<grid, block>>>(N, dA, dB, dC); });
  };
  auto check = [&] {
    std::vector<float> C((size_t)N * N);
    reference(A, B, C);
    return cgp::rel_err(dC.download(), C);
  };
  return cgp::run_bench("mm", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
