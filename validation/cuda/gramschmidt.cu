// gramschmidt.cu -- CUDA reference port of polybench_c/gramschmidt.c: modified Gram-Schmidt QR.
// The host loops over the columns k and launches three kernels per column (one launch per host
// iteration): `gs_k1` (1-D grid over t < GS_K1_THREADS, only t == 0 works: the single-thread
// norm of column k, as in PolyBench/GPU), `gs_k2` (1-D grid over i), `gs_k3` (1-D grid over
// j = k+1 .. NJ-1; two sequential i loops per thread).
// At the reference size (8192: 3 * 8192 launches, O(NI * NJ^2)) measure.py times a sample of
// the columns (--sample S) and extrapolates; see validation/README.md.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 8192
#endif
#ifndef NJ
#define NJ 8192
#endif

#define GS_K1_THREADS 256

static const int GRID_DIMS = 1;

__global__ void gs_k1(int ni, CGP_CONST float* CGP_RESTRICT A, float* CGP_RESTRICT R, int k) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < GS_K1_THREADS) {
    if (t == 0) {
      float nrm = 0.0f;
      for (int i = 0; i < ni; i++)
        nrm += A[i * NJ + k] * A[i * NJ + k];
      R[k * NJ + k] = sqrtf(nrm);
    }
  }
}

__global__ void gs_k2(int ni, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT R,
                      float* CGP_RESTRICT Q, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ni) {
    Q[i * NJ + k] = A[i * NJ + k] / R[k * NJ + k];
  }
}

__global__ void gs_k3(int ni, int nj, float* CGP_RESTRICT A, float* CGP_RESTRICT R, CGP_CONST float* CGP_RESTRICT Q,
                      int k) {
  int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nj) {
    R[k * NJ + j] = 0.0f;
    for (int i = 0; i < ni; i++)
      R[k * NJ + j] += Q[i * NJ + k] * A[i * NJ + j];
    for (int i = 0; i < ni; i++)
      A[i * NJ + j] -= Q[i * NJ + k] * R[k * NJ + j];
  }
}

static void init(std::vector<float>& A) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      A[i * NJ + j] = (float)((i * j) % NI) / NI + (i == j ? 1.0f : 0.0f) + 0.01f;
}

static void reference(std::vector<float>& A, std::vector<float>& R, std::vector<float>& Q) {
  for (int k = 0; k < NJ; k++) {
    for (int t = 0; t < GS_K1_THREADS; t++) {
      if (t == 0) {
        float nrm = 0.0f;
        for (int i = 0; i < NI; i++)
          nrm += A[i * NJ + k] * A[i * NJ + k];
        R[k * NJ + k] = sqrtf(nrm);
      }
    }
    for (int i = 0; i < NI; i++) {
      Q[i * NJ + k] = A[i * NJ + k] / R[k * NJ + k];
    }
    for (int j = k + 1; j < NJ; j++) {
      R[k * NJ + j] = 0.0f;
      for (int i = 0; i < NI; i++)
        R[k * NJ + j] += Q[i * NJ + k] * A[i * NJ + j];
      for (int i = 0; i < NI; i++)
        A[i * NJ + j] -= Q[i * NJ + k] * R[k * NJ + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> A((size_t)NI * NJ);
  init(A);
  cgp::DevBuf<float> dA(A.size()), dR((size_t)NJ * NJ), dQ((size_t)NI * NJ);
  auto reset = [&] { dA.upload(A); dR.zero(); dQ.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt);
    dim3 g1 = cgp::grid1d(opt, GS_K1_THREADS), g2 = cgp::grid1d(opt, NI);
    for (long k : rec.host_loop(0, NJ, {"gs_k1", "gs_k2", "gs_k3"})) {
      dim3 g3 = cgp::grid1d(opt, NJ - (k + 1));
      rec.launch("gs_k1", [&] { gs_k1<<<g1, block>>>(NI, dA, dR, (int)k); });
      rec.launch("gs_k2", [&] { gs_k2<<<g2, block>>>(NI, dA, dR, dQ, (int)k); });
      rec.launch("gs_k3", [&] { gs_k3<<<g3, block>>>(NI, NJ, dA, dR, dQ, (int)k); });
    }
  };
  auto check = [&] {
    std::vector<float> rA = A, rR((size_t)NJ * NJ, 0.0f), rQ((size_t)NI * NJ, 0.0f);
    reference(rA, rR, rQ);
    return std::max({cgp::rel_err(dA.download(), rA), cgp::rel_err(dR.download(), rR),
                     cgp::rel_err(dQ.download(), rQ)});
  };
  return cgp::run_bench("gramschmidt", opt, {{"NI", NI}, {"NJ", NJ}}, GRID_DIMS, reset, run,
                        check);
}
