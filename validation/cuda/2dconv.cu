// 2dconv.cu -- CUDA reference port of polybench_c/2dconv.c: 3x3 convolution of the interior.
// Kernel `conv2d`: 2-D grid over the interior points (as the C loops, i = 1 .. NI-2 -> y,
// j = 1 .. NJ-2 -> x: thread (0, 0) computes B[1][1]); no per-thread loop.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NI
#define NI 4096
#endif
#ifndef NJ
#define NJ 4096
#endif

static const int GRID_DIMS = 2;

__global__ void conv2d_kernel(int ni, int nj, CGP_CONST float* CGP_RESTRICT A, float* CGP_RESTRICT B) {
  const float c11 = 0.2f, c21 = 0.5f, c31 = -0.8f;
  const float c12 = -0.3f, c22 = 0.6f, c32 = -0.9f;
  const float c13 = 0.4f, c23 = 0.7f, c33 = 0.1f;
  int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni - 1 && j < nj - 1) {
    B[i * NJ + j] = c11 * A[(i - 1) * NJ + (j - 1)] + c21 * A[(i - 1) * NJ + j] + c31 * A[(i - 1) * NJ + (j + 1)] + c12 * A[i * NJ + (j - 1)] + c22 * A[i * NJ + j] + c32 * A[i * NJ + (j + 1)] + c13 * A[(i + 1) * NJ + (j - 1)] + c23 * A[(i + 1) * NJ + j] + c33 * A[(i + 1) * NJ + (j + 1)];
  }
}

static void init(std::vector<float>& A) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      A[i * NJ + j] = (float)((i * (j + 1) + 1) % NI) / NI;
}

static void reference(const std::vector<float>& A, std::vector<float>& B) {
  const float c11 = 0.2f, c21 = 0.5f, c31 = -0.8f;
  const float c12 = -0.3f, c22 = 0.6f, c32 = -0.9f;
  const float c13 = 0.4f, c23 = 0.7f, c33 = 0.1f;
  for (int i = 1; i < NI - 1; i++) {
    for (int j = 1; j < NJ - 1; j++) {
      B[i * NJ + j] = c11 * A[(i - 1) * NJ + (j - 1)] + c21 * A[(i - 1) * NJ + j] + c31 * A[(i - 1) * NJ + (j + 1)] + c12 * A[i * NJ + (j - 1)] + c22 * A[i * NJ + j] + c32 * A[i * NJ + (j + 1)] + c13 * A[(i + 1) * NJ + (j - 1)] + c23 * A[(i + 1) * NJ + j] + c33 * A[(i + 1) * NJ + (j + 1)];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> A((size_t)NI * NJ);
  init(A);
  cgp::DevBuf<float> dA(A.size()), dB((size_t)NI * NJ);
  auto reset = [&] { dA.upload(A); dB.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI - 2, NJ - 2);
    rec.launch("conv2d", [&] { conv2d_kernel<<<grid, block>>>(NI, NJ, dA, dB); });
  };
  auto check = [&] {
    std::vector<float> B((size_t)NI * NJ, 0.0f);
    reference(A, B);
    return cgp::rel_err(dB.download(), B);
  };
  return cgp::run_bench("2dconv", opt, {{"NI", NI}, {"NJ", NJ}}, GRID_DIMS, reset, run, check);
}
