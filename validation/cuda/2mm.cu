// 2mm.cu -- CUDA reference port of polybench_c/2mm.c: C = A * B, E = C * D.
// Kernels `mm2_k1` (over C) and `mm2_k2` (over E): 2-D grids, i -> y, j -> x; k sequential.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 4096
#endif
#ifndef NJ
#define NJ 4096
#endif
#ifndef NK
#define NK 4096
#endif
#ifndef NL
#define NL 4096
#endif

static const int GRID_DIMS = 2;

__global__ void mm2_k1(int ni, int nj, int nk, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT B,
                       float* CGP_RESTRICT C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < nj) {
    C[i * NJ + j] = 0.0f;
    for (int k = 0; k < nk; k++)
      C[i * NJ + j] += A[i * NK + k] * B[k * NJ + j];
  }
}

__global__ void mm2_k2(int ni, int nj, int nl, CGP_CONST float* CGP_RESTRICT C, CGP_CONST float* CGP_RESTRICT D,
                       float* CGP_RESTRICT E) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < nl) {
    E[i * NL + j] = 0.0f;
    for (int k = 0; k < nj; k++)
      E[i * NL + j] += C[i * NJ + k] * D[k * NL + j];
  }
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& D) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i * NK + k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k * NJ + j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int j = 0; j < NJ; j++)
    for (int l = 0; l < NL; l++)
      D[j * NL + l] = (float)((j * (l + 3) + 1) % NL) / NL;
}

static void reference(const std::vector<float>& A, const std::vector<float>& B,
                      std::vector<float>& C, const std::vector<float>& D,
                      std::vector<float>& E) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      C[i * NJ + j] = 0.0f;
      for (int k = 0; k < NK; k++)
        C[i * NJ + j] += A[i * NK + k] * B[k * NJ + j];
    }
  }
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      E[i * NL + j] = 0.0f;
      for (int k = 0; k < NJ; k++)
        E[i * NL + j] += C[i * NJ + k] * D[k * NL + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> A((size_t)NI * NK), B((size_t)NK * NJ), D((size_t)NJ * NL);
  init(A, B, D);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC((size_t)NI * NJ), dD(D.size()),
      dE((size_t)NI * NL);
  auto reset = [&] { dA.upload(A); dB.upload(B); dD.upload(D); dC.zero(); dE.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt);
    dim3 g1 = cgp::grid2d(opt, NI, NJ), g2 = cgp::grid2d(opt, NI, NL);
    rec.launch("mm2_k1", [&] { mm2_k1<<<g1, block>>>(NI, NJ, NK, dA, dB, dC); });
    rec.launch("mm2_k2", [&] { mm2_k2<<<g2, block>>>(NI, NJ, NL, dC, dD, dE); });
  };
  auto check = [&] {
    std::vector<float> C((size_t)NI * NJ), E((size_t)NI * NL);
    reference(A, B, C, D, E);
    return std::max(cgp::rel_err(dC.download(), C), cgp::rel_err(dE.download(), E));
  };
  return cgp::run_bench("2mm", opt, {{"NI", NI}, {"NJ", NJ}, {"NK", NK}, {"NL", NL}}, GRID_DIMS,
                        reset, run, check);
}
