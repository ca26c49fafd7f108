// syrk.cu -- CUDA reference port of polybench_c/syrk.c: C = alpha * A * A^T + beta * C.
// Kernel `syrk`: 2-D grid, i -> y, j -> x; k sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

static const int GRID_DIMS = 2;

__global__ void syrk_kernel(int ni, int nj, float alpha, float beta, CGP_CONST float* CGP_RESTRICT A,
                            float* CGP_RESTRICT C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < ni) {
    C[i * NI + j] *= beta;
    for (int k = 0; k < nj; k++)
      C[i * NI + j] += alpha * A[i * NJ + k] * A[j * NJ + k];
  }
}

static void init(std::vector<float>& A, std::vector<float>& C) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++)
      A[i * NJ + k] = (float)((i * k + 1) % NI) / NI;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i * NI + j] = (float)((i * j + 2) % NJ) / NJ;
}

static void reference(float alpha, float beta, const std::vector<float>& A,
                      std::vector<float>& C) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i * NI + j] *= beta;
      for (int k = 0; k < NJ; k++)
        C[i * NI + j] += alpha * A[i * NJ + k] * A[j * NJ + k];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)NI * NJ), C((size_t)NI * NI);
  init(A, C);
  cgp::DevBuf<float> dA(A.size()), dC(C.size());
  auto reset = [&] { dA.upload(A); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NI);
    rec.launch("syrk", [&] { syrk_kernel<<<grid, block>>>(NI, NJ, alpha, beta, dA, dC); });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, A, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("syrk", opt, {{"NI", NI}, {"NJ", NJ}}, GRID_DIMS, reset, run, check);
}
