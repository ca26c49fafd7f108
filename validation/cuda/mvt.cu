// mvt.cu -- CUDA reference port of polybench_c/mvt.c: x1 += A * y_1, x2 += A^T * y_2.
// Kernels `mvt_k1` and `mvt_k2`: 1-D grids over i; j sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef N
#define N 4096
#endif

static const int GRID_DIMS = 1;

__global__ void mvt_k1(int n, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT y_1,
                       float* CGP_RESTRICT x1) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int j = 0; j < n; j++)
      x1[i] += A[i * N + j] * y_1[j];
  }
}

__global__ void mvt_k2(int n, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT y_2,
                       float* CGP_RESTRICT x2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int j = 0; j < n; j++)
      x2[i] += A[j * N + i] * y_2[j];
  }
}

static void init(std::vector<float>& A, std::vector<float>& x1, std::vector<float>& x2,
                 std::vector<float>& y_1, std::vector<float>& y_2) {
  for (int i = 0; i < N; i++) {
    x1[i] = (float)(i % N) / N;
    x2[i] = (float)((i + 1) % N) / N;
    y_1[i] = (float)((i + 3) % N) / N;
    y_2[i] = (float)((i + 4) % N) / N;
    for (int j = 0; j < N; j++)
      A[i * N + j] = (float)((i * j) % N) / N;
  }
}

static void reference(const std::vector<float>& A, std::vector<float>& x1,
                      std::vector<float>& x2, const std::vector<float>& y_1,
                      const std::vector<float>& y_2) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x1[i] += A[i * N + j] * y_1[j];
  }
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      x2[i] += A[j * N + i] * y_2[j];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> A((size_t)N * N), x1(N), x2(N), y_1(N), y_2(N);
  init(A, x1, x2, y_1, y_2);
  cgp::DevBuf<float> dA(A.size()), dx1(N), dx2(N), dy1(N), dy2(N);
  auto reset = [&] { dA.upload(A); dx1.upload(x1); dx2.upload(x2); dy1.upload(y_1); dy2.upload(y_2); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("mvt_k1", [&] { mvt_k1<<<grid, block>>>(N, dA, dy1, dx1); });
    rec.launch("mvt_k2", [&] { mvt_k2<<<grid, block>>>(N, dA, dy2, dx2); });
  };
  auto check = [&] {
    std::vector<float> r1 = x1, r2 = x2;
    reference(A, r1, r2, y_1, y_2);
    return std::max(cgp::rel_err(dx1.download(), r1), cgp::rel_err(dx2.download(), r2));
  };
  return cgp::run_bench("mvt", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
