// 3dconv.cu -- CUDA reference port of polybench_c/3dconv.c: the PolyBench/GPU 3-D stencil.
// The host loops over the planes i = 1 .. NI-2 and launches kernel `conv3d` once per plane:
// 2-D grid over the interior (j = 1 .. NJ-2 -> y, k = 1 .. NK-2 -> x); no per-thread loop.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 256
#endif
#ifndef NJ
#define NJ 256
#endif
#ifndef NK
#define NK 256
#endif

static const int GRID_DIMS = 2;

#define IDX(i, j, k) (((i) * NJ + (j)) * NK + (k))

__global__ void conv3d_kernel(int nj, int nk, CGP_CONST float* CGP_RESTRICT A, float* CGP_RESTRICT B, int i) {
  const float c11 = 2.0f, c21 = 5.0f, c31 = -8.0f;
  const float c12 = -3.0f, c22 = 6.0f, c32 = -9.0f;
  const float c13 = 4.0f, c23 = 7.0f, c33 = 10.0f;
  int k = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  if (j < nj - 1 && k < nk - 1) {
    B[IDX(i, j, k)] = c11 * A[IDX(i - 1, j - 1, k - 1)] + c13 * A[IDX(i + 1, j - 1, k - 1)] + c21 * A[IDX(i - 1, j - 1, k - 1)] + c23 * A[IDX(i + 1, j - 1, k - 1)] + c31 * A[IDX(i - 1, j - 1, k - 1)] + c33 * A[IDX(i + 1, j - 1, k - 1)] + c12 * A[IDX(i, j - 1, k)] + c22 * A[IDX(i, j, k)] + c32 * A[IDX(i, j + 1, k)] + c11 * A[IDX(i - 1, j - 1, k + 1)] + c13 * A[IDX(i + 1, j - 1, k + 1)] + c21 * A[IDX(i - 1, j, k + 1)] + c23 * A[IDX(i + 1, j, k + 1)] + c31 * A[IDX(i - 1, j + 1, k + 1)] + c33 * A[IDX(i + 1, j + 1, k + 1)];
  }
}

static void init(std::vector<float>& A) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      for (int k = 0; k < NK; k++)
        A[IDX(i, j, k)] = (float)((i * j + k * (i + 1) + 1) % NK) / NK;
}

static void reference(const std::vector<float>& A, std::vector<float>& B) {
  const float c11 = 2.0f, c21 = 5.0f, c31 = -8.0f;
  const float c12 = -3.0f, c22 = 6.0f, c32 = -9.0f;
  const float c13 = 4.0f, c23 = 7.0f, c33 = 10.0f;
  for (int i = 1; i < NI - 1; i++) {
    for (int j = 1; j < NJ - 1; j++) {
      for (int k = 1; k < NK - 1; k++) {
        B[IDX(i, j, k)] = c11 * A[IDX(i - 1, j - 1, k - 1)] + c13 * A[IDX(i + 1, j - 1, k - 1)] + c21 * A[IDX(i - 1, j - 1, k - 1)] + c23 * A[IDX(i + 1, j - 1, k - 1)] + c31 * A[IDX(i - 1, j - 1, k - 1)] + c33 * A[IDX(i + 1, j - 1, k - 1)] + c12 * A[IDX(i, j - 1, k)] + c22 * A[IDX(i, j, k)] + c32 * A[IDX(i, j + 1, k)] + c11 * A[IDX(i - 1, j - 1, k + 1)] + c13 * A[IDX(i + 1, j - 1, k + 1)] + c21 * A[IDX(i - 1, j, k + 1)] + c23 * A[IDX(i + 1, j, k + 1)] + c31 * A[IDX(i - 1, j + 1, k + 1)] + c33 * A[IDX(i + 1, j + 1, k + 1)];
      }
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> A((size_t)NI * NJ * NK);
  init(A);
  cgp::DevBuf<float> dA(A.size()), dB(A.size());
  auto reset = [&] { dA.upload(A); dB.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NJ - 2, NK - 2);
    for (long i : rec.host_loop(1, NI - 1, {"conv3d"}))
      rec.launch("conv3d", [&] { conv3d_kernel<<<grid, block>>>(NJ, NK, dA, dB, (int)i); });
  };
  auto check = [&] {
    std::vector<float> B(A.size(), 0.0f);
    reference(A, B);
    return cgp::rel_err(dB.download(), B);
  };
  return cgp::run_bench("3dconv", opt, {{"NI", NI}, {"NJ", NJ}, {"NK", NK}}, GRID_DIMS, reset,
                        run, check);
}
