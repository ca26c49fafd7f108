// gemm.cu -- CUDA reference port of polybench_c/gemm.c (C = alpha * A * B + beta * C).
// Kernel `gemm`: 2-D grid, i -> y, j -> x; the k loop is sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif
#ifndef NK
#define NK 1024
#endif

static const int GRID_DIMS = 2;

__global__ void gemm_kernel(int ni, int nj, int nk, float alpha, float beta, CGP_CONST float* CGP_RESTRICT A,
                            CGP_CONST float* CGP_RESTRICT B, float* CGP_RESTRICT C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < nj) {
    C[i * NJ + j] *= beta;
    for (int k = 0; k < nk; k++)
      C[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
  }
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i * NK + k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k * NJ + j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      C[i * NJ + j] = (float)((i * (j + 2)) % NK) / NK;
}

static void reference(float alpha, float beta, const std::vector<float>& A,
                      const std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      C[i * NJ + j] *= beta;
      for (int k = 0; k < NK; k++)
        C[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)NI * NK), B((size_t)NK * NJ), C((size_t)NI * NJ);
  init(A, B, C);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC(C.size());
  auto reset = [&] { dA.upload(A); dB.upload(B); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NJ);
    rec.launch("gemm", [&] { gemm_kernel<<<grid, block>>>(NI, NJ, NK, alpha, beta, dA, dB, dC); });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, A, B, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("gemm", opt, {{"NI", NI}, {"NJ", NJ}, {"NK", NK}}, GRID_DIMS, reset,
                        run, check);
}
