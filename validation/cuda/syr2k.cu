// syr2k.cu -- CUDA reference port of polybench_c/syr2k.c:
// C = alpha * A * B^T + alpha * B * A^T + beta * C.
// Kernel `syr2k`: 2-D grid, i -> y, j -> x; k sequential per thread.
// Sizes: the guard and the k loop are bounded by the compile-time NI and NJ, as in
// PolyBench-ACC's syr2k_kernel (which takes ni and nj but does not use them), unlike
// the other ports (common.cuh, "Sizes"): ptxas knows this loop's trip count.
#include "common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

static const int GRID_DIMS = 2;

__global__ void syr2k_kernel(float alpha, float beta, CGP_CONST float* CGP_RESTRICT A,
                             CGP_CONST float* CGP_RESTRICT B, float* CGP_RESTRICT C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < NI && j < NI) {
    C[i * NI + j] *= beta;
    for (int k = 0; k < NJ; k++)
      C[i * NI + j] += alpha * A[i * NJ + k] * B[j * NJ + k] + alpha * B[i * NJ + k] * A[j * NJ + k];
  }
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++) {
      A[i * NJ + k] = (float)((i * k + 1) % NI) / NI;
      B[i * NJ + k] = (float)((i * (k + 1) + 2) % NJ) / NJ;
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i * NI + j] = (float)((i * j + 3) % NI) / NI;
}

static void reference(float alpha, float beta, const std::vector<float>& A,
                      const std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i * NI + j] *= beta;
      for (int k = 0; k < NJ; k++)
        C[i * NI + j] += alpha * A[i * NJ + k] * B[j * NJ + k] + alpha * B[i * NJ + k] * A[j * NJ + k];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)NI * NJ), B((size_t)NI * NJ), C((size_t)NI * NI);
  init(A, B, C);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC(C.size());
  auto reset = [&] { dA.upload(A); dB.upload(B); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NI);
    rec.launch("syr2k", [&] { syr2k_kernel<<<grid, block>>>(alpha, beta, dA, dB, dC); });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, A, B, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("syr2k", opt, {{"NI", NI}, {"NJ", NJ}}, GRID_DIMS, reset, run, check);
}
