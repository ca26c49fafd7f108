// syrk_transposed.cu -- CUDA reference port of polybench_c/syrk_transposed.c: SYRK reading the
// pre-transposed input AT (NJ x NI), C = alpha * AT^T * AT + beta * C (the coalescing fix).
// Kernel `syrk_transposed`: 2-D grid, i -> y, j -> x; k sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as the PolyBench/GPU ports do (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

static const int GRID_DIMS = 2;

__global__ void syrk_transposed_kernel(int ni, int nj, float alpha, float beta, CGP_CONST float* CGP_RESTRICT AT,
                                       float* CGP_RESTRICT C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < ni) {
    C[i * NI + j] *= beta;
    for (int k = 0; k < nj; k++)
      C[i * NI + j] += alpha * AT[k * NI + i] * AT[k * NI + j];
  }
}

static void init(std::vector<float>& AT, std::vector<float>& C) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++)
      AT[k * NI + i] = (float)((i * k + 1) % NI) / NI;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i * NI + j] = (float)((i * j + 2) % NJ) / NJ;
}

static void reference(float alpha, float beta, const std::vector<float>& AT,
                      std::vector<float>& C) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i * NI + j] *= beta;
      for (int k = 0; k < NJ; k++)
        C[i * NI + j] += alpha * AT[k * NI + i] * AT[k * NI + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> AT((size_t)NJ * NI), C((size_t)NI * NI);
  init(AT, C);
  cgp::DevBuf<float> dAT(AT.size()), dC(C.size());
  auto reset = [&] { dAT.upload(AT); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NI);
    rec.launch("syrk_transposed",
               [&] { syrk_transposed_kernel<<<grid, block>>>(NI, NJ, alpha, beta, dAT, dC); });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, AT, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("syrk_transposed", opt, {{"NI", NI}, {"NJ", NJ}}, GRID_DIMS, reset, run,
                        check);
}
