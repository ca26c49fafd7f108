// dct1d.cu -- CUDA reference port of polybench_c/dct1d.c: Y = C * X with the DCT-II cosine
// table C computed on the host. Kernel `dct1d`: 1-D grid over k; n sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as the PolyBench/GPU ports do (common.cuh, "Sizes").
#include "common.cuh"

#ifndef N
#define N 1024
#endif

#define CGP_PI 3.14159265358979323846

static const int GRID_DIMS = 1;

__global__ void dct1d_kernel(int n, CGP_CONST float* CGP_RESTRICT C, CGP_CONST float* CGP_RESTRICT X,
                             float* CGP_RESTRICT Y) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) {
    Y[k] = 0.0f;
    for (int m = 0; m < n; m++)
      Y[k] += C[k * N + m] * X[m];
  }
}

static void init(std::vector<float>& C, std::vector<float>& X) {
  for (int k = 0; k < N; k++)
    for (int n = 0; n < N; n++)
      C[k * N + n] = (float)cos(CGP_PI / N * (n + 0.5) * k);
  for (int n = 0; n < N; n++)
    X[n] = (float)((n * 7 + 3) % 64) / 64.0f;
}

static void reference(const std::vector<float>& C, const std::vector<float>& X,
                      std::vector<float>& Y) {
  for (int k = 0; k < N; k++) {
    Y[k] = 0.0f;
    for (int n = 0; n < N; n++)
      Y[k] += C[k * N + n] * X[n];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> C((size_t)N * N), X(N);
  init(C, X);
  cgp::DevBuf<float> dC(C.size()), dX(N), dY(N);
  auto reset = [&] { dC.upload(C); dX.upload(X); dY.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("dct1d", [&] { dct1d_kernel<<<grid, block>>>(N, dC, dX, dY); });
  };
  auto check = [&] {
    std::vector<float> Y(N);
    reference(C, X, Y);
    return cgp::rel_err(dY.download(), Y);
  };
  return cgp::run_bench("dct1d", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
