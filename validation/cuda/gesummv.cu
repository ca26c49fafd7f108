// gesummv.cu -- CUDA reference port of polybench_c/gesummv.c: y = alpha * A * x + beta * B * x.
// Kernel `gesummv`: 1-D grid over i; j sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef N
#define N 4096
#endif

static const int GRID_DIMS = 1;

__global__ void gesummv_kernel(int n, float alpha, float beta, CGP_CONST float* CGP_RESTRICT A,
                               CGP_CONST float* CGP_RESTRICT B, CGP_CONST float* CGP_RESTRICT x,
                               float* CGP_RESTRICT y, float* CGP_RESTRICT tmp) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    tmp[i] = 0.0f;
    y[i] = 0.0f;
    for (int j = 0; j < n; j++) {
      tmp[i] += A[i * N + j] * x[j];
      y[i] += B[i * N + j] * x[j];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& x) {
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % N) / N;
    for (int j = 0; j < N; j++) {
      A[i * N + j] = (float)((i * j + 1) % N) / N;
      B[i * N + j] = (float)((i * j + 2) % N) / N;
    }
  }
}

static void reference(float alpha, float beta, const std::vector<float>& A,
                      const std::vector<float>& B, const std::vector<float>& x,
                      std::vector<float>& y, std::vector<float>& tmp) {
  for (int i = 0; i < N; i++) {
    tmp[i] = 0.0f;
    y[i] = 0.0f;
    for (int j = 0; j < N; j++) {
      tmp[i] += A[i * N + j] * x[j];
      y[i] += B[i * N + j] * x[j];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)N * N), B((size_t)N * N), x(N);
  init(A, B, x);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dx(N), dy(N), dtmp(N);
  auto reset = [&] { dA.upload(A); dB.upload(B); dx.upload(x); dy.zero(); dtmp.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("gesummv",
               [&] { gesummv_kernel<<<grid, block>>>(N, alpha, beta, dA, dB, dx, dy, dtmp); });
  };
  auto check = [&] {
    std::vector<float> y(N), tmp(N);
    reference(alpha, beta, A, B, x, y, tmp);
    return std::max(cgp::rel_err(dy.download(), y), cgp::rel_err(dtmp.download(), tmp));
  };
  return cgp::run_bench("gesummv", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
