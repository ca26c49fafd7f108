// 3mm.cu -- CUDA reference port of polybench_c/3mm.c: E = A * B, F = C * D, G = E * F.
// Kernels `mm3_k1`, `mm3_k2`, `mm3_k3`: 2-D grids, i -> y, j -> x; k sequential.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 2048
#endif
#ifndef NJ
#define NJ 2048
#endif
#ifndef NK
#define NK 2048
#endif
#ifndef NL
#define NL 2048
#endif
#ifndef NM
#define NM 2048
#endif

static const int GRID_DIMS = 2;

__global__ void mm3_k1(int ni, int nj, int nk, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT B,
                       float* CGP_RESTRICT E) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < nj) {
    E[i * NJ + j] = 0.0f;
    for (int k = 0; k < nk; k++)
      E[i * NJ + j] += A[i * NK + k] * B[k * NJ + j];
  }
}

__global__ void mm3_k2(int nj, int nl, int nm, CGP_CONST float* CGP_RESTRICT C, CGP_CONST float* CGP_RESTRICT D,
                       float* CGP_RESTRICT F) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < nj && j < nl) {
    F[i * NL + j] = 0.0f;
    for (int k = 0; k < nm; k++)
      F[i * NL + j] += C[i * NM + k] * D[k * NL + j];
  }
}

__global__ void mm3_k3(int ni, int nj, int nl, CGP_CONST float* CGP_RESTRICT E, CGP_CONST float* CGP_RESTRICT F,
                       float* CGP_RESTRICT G) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < nl) {
    G[i * NL + j] = 0.0f;
    for (int k = 0; k < nj; k++)
      G[i * NL + j] += E[i * NJ + k] * F[k * NL + j];
  }
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& C,
                 std::vector<float>& D) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i * NK + k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k * NJ + j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int j = 0; j < NJ; j++)
    for (int m = 0; m < NM; m++)
      C[j * NM + m] = (float)((j * (m + 3)) % NL) / NL;
  for (int m = 0; m < NM; m++)
    for (int l = 0; l < NL; l++)
      D[m * NL + l] = (float)((m * (l + 2) + 2) % NK) / NK;
}

static void reference(const std::vector<float>& A, const std::vector<float>& B,
                      const std::vector<float>& C, const std::vector<float>& D,
                      std::vector<float>& E, std::vector<float>& F, std::vector<float>& G) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      E[i * NJ + j] = 0.0f;
      for (int k = 0; k < NK; k++)
        E[i * NJ + j] += A[i * NK + k] * B[k * NJ + j];
    }
  }
  for (int i = 0; i < NJ; i++) {
    for (int j = 0; j < NL; j++) {
      F[i * NL + j] = 0.0f;
      for (int k = 0; k < NM; k++)
        F[i * NL + j] += C[i * NM + k] * D[k * NL + j];
    }
  }
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      G[i * NL + j] = 0.0f;
      for (int k = 0; k < NJ; k++)
        G[i * NL + j] += E[i * NJ + k] * F[k * NL + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> A((size_t)NI * NK), B((size_t)NK * NJ), C((size_t)NJ * NM),
      D((size_t)NM * NL);
  init(A, B, C, D);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC(C.size()), dD(D.size()),
      dE((size_t)NI * NJ), dF((size_t)NJ * NL), dG((size_t)NI * NL);
  auto reset = [&] {
    dA.upload(A); dB.upload(B); dC.upload(C); dD.upload(D);
    dE.zero(); dF.zero(); dG.zero();
  };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt);
    dim3 g1 = cgp::grid2d(opt, NI, NJ), g2 = cgp::grid2d(opt, NJ, NL),
         g3 = cgp::grid2d(opt, NI, NL);
    rec.launch("mm3_k1", [&] { mm3_k1<<<g1, block>>>(NI, NJ, NK, dA, dB, dE); });
    rec.launch("mm3_k2", [&] { mm3_k2<<<g2, block>>>(NJ, NL, NM, dC, dD, dF); });
    rec.launch("mm3_k3", [&] { mm3_k3<<<g3, block>>>(NI, NJ, NL, dE, dF, dG); });
  };
  auto check = [&] {
    std::vector<float> E((size_t)NI * NJ), F((size_t)NJ * NL), G((size_t)NI * NL);
    reference(A, B, C, D, E, F, G);
    return std::max({cgp::rel_err(dE.download(), E), cgp::rel_err(dF.download(), F),
                     cgp::rel_err(dG.download(), G)});
  };
  return cgp::run_bench("3mm", opt,
                        {{"NI", NI}, {"NJ", NJ}, {"NK", NK}, {"NL", NL}, {"NM", NM}},
                        GRID_DIMS, reset, run, check);
}
