// bicg.cu -- CUDA reference port of polybench_c/bicg.c: s = A^T * r, q = A * p.
// Kernels `bicg_k1` (1-D grid over j) and `bicg_k2` (1-D grid over i); the other loop is
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

__global__ void bicg_k1(int nx, int ny, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT r,
                        float* CGP_RESTRICT s) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < ny) {
    s[j] = 0.0f;
    for (int i = 0; i < nx; i++)
      s[j] += A[i * NY + j] * r[i];
  }
}

__global__ void bicg_k2(int nx, int ny, CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT p,
                        float* CGP_RESTRICT q) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nx) {
    q[i] = 0.0f;
    for (int j = 0; j < ny; j++)
      q[i] += A[i * NY + j] * p[j];
  }
}

static void init(std::vector<float>& A, std::vector<float>& r, std::vector<float>& p) {
  for (int i = 0; i < NX; i++)
    r[i] = (float)(i % 64) / 64.0f;
  for (int j = 0; j < NY; j++)
    p[j] = (float)((j + 7) % 64) / 64.0f;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      A[i * NY + j] = (float)((i * (j + 1)) % NX) / NX;
}

static void reference(const std::vector<float>& A, const std::vector<float>& r,
                      const std::vector<float>& p, std::vector<float>& s,
                      std::vector<float>& q) {
  for (int j = 0; j < NY; j++) {
    s[j] = 0.0f;
    for (int i = 0; i < NX; i++)
      s[j] += A[i * NY + j] * r[i];
  }
  for (int i = 0; i < NX; i++) {
    q[i] = 0.0f;
    for (int j = 0; j < NY; j++)
      q[i] += A[i * NY + j] * p[j];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> A((size_t)NX * NY), r(NX), p(NY);
  init(A, r, p);
  cgp::DevBuf<float> dA(A.size()), dr(r.size()), dp(p.size()), ds(NY), dq(NX);
  auto reset = [&] { dA.upload(A); dr.upload(r); dp.upload(p); ds.zero(); dq.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt);
    dim3 g1 = cgp::grid1d(opt, NY), g2 = cgp::grid1d(opt, NX);
    rec.launch("bicg_k1", [&] { bicg_k1<<<g1, block>>>(NX, NY, dA, dr, ds); });
    rec.launch("bicg_k2", [&] { bicg_k2<<<g2, block>>>(NX, NY, dA, dp, dq); });
  };
  auto check = [&] {
    std::vector<float> s(NY), q(NX);
    reference(A, r, p, s, q);
    return std::max(cgp::rel_err(ds.download(), s), cgp::rel_err(dq.download(), q));
  };
  return cgp::run_bench("bicg", opt, {{"NX", NX}, {"NY", NY}}, GRID_DIMS, reset, run, check);
}
