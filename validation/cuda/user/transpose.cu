// transpose.cu -- CUDA port of examples/user/transpose.c: a naive out-of-place transpose
// B = A^T, one thread per element (kernel `transpose`, 2-D grid: i -> y, j -> x).
#include "user.cuh"

#ifndef N
#define N 8192
#endif

static const int GRID_DIMS = 2;

__global__ void transpose(int n, CGP_CONST float* CGP_RESTRICT A, float* CGP_RESTRICT B) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && j < n)
    B[j * N + i] = A[i * N + j];
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> A((size_t)N * N);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[(size_t)i * N + j] = (float)((i * 3 + j) % 19);
  cgp::DevBuf<float> dA(A.size()), dB(A.size());
  auto reset = [&] { dA.upload(A); dB.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, N, N);
    rec.launch("transpose", [&] { transpose<<<grid, block>>>(N, dA, dB); });
  };
  auto check = [&] {
    std::vector<float> ref(A.size());
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) ref[(size_t)j * N + i] = A[(size_t)i * N + j];
    return cgp::rel_err(dB.download(), ref);
  };
  return cgp::run_bench("transpose", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
