// atax.cu -- CUDA reference port of polybench_c/atax.c: tmp = A * x, y = A^T * tmp.
// Kernels `atax_k1` (1-D grid over i) and `atax_k2` (1-D grid over j); the other loop is
// sequential per thread.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NX
#define NX 4096
#endif
#ifndef NY
#define NY 4096
#endif

static const int GRID_DIMS = 1;

__global__ void atax_k1(int nx, int ny, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT x,
                        float* CGP_RESTRICT tmp) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nx) {
    tmp[i] = 0.0f;
    for (int j = 0; j < ny; j++)
      tmp[i] += A[i * NY + j] * x[j];
  }
}

__global__ void atax_k2(int nx, int ny, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT tmp,
                        float* CGP_RESTRICT y) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < ny) {
    y[j] = 0.0f;
    for (int i = 0; i < nx; i++)
      y[j] += A[i * NY + j] * tmp[i];
  }
}

static void init(std::vector<float>& A, std::vector<float>& x) {
  for (int j = 0; j < NY; j++)
    x[j] = (float)(j % 64) / 64.0f;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      A[i * NY + j] = (float)((i * (j + 1)) % NX) / (5.0f * NX);
}

static void reference(const std::vector<float>& A, const std::vector<float>& x,
                      std::vector<float>& tmp, std::vector<float>& y) {
  for (int i = 0; i < NX; i++) {
    tmp[i] = 0.0f;
    for (int j = 0; j < NY; j++)
      tmp[i] += A[i * NY + j] * x[j];
  }
  for (int j = 0; j < NY; j++) {
    y[j] = 0.0f;
    for (int i = 0; i < NX; i++)
      y[j] += A[i * NY + j] * tmp[i];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> A((size_t)NX * NY), x(NY);
  init(A, x);
  cgp::DevBuf<float> dA(A.size()), dx(x.size()), dtmp(NX), dy(NY);
  auto reset = [&] { dA.upload(A); dx.upload(x); dtmp.zero(); dy.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt);
    dim3 g1 = cgp::grid1d(opt, NX), g2 = cgp::grid1d(opt, NY);
    rec.launch("atax_k1", [&] { atax_k1<<<g1, block>>>(NX, NY, dA, dx, dtmp); });
    rec.launch("atax_k2", [&] { atax_k2<<<g2, block>>>(NX, NY, dA, dtmp, dy); });
  };
  auto check = [&] {
    std::vector<float> tmp(NX), y(NY);
    reference(A, x, tmp, y);
    return std::max(cgp::rel_err(dtmp.download(), tmp), cgp::rel_err(dy.download(), y));
  };
  return cgp::run_bench("atax", opt, {{"NX", NX}, {"NY", NY}}, GRID_DIMS, reset, run, check);
}
