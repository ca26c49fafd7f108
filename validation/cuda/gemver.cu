// gemver.cu -- CUDA reference port of polybench_c/gemver.c:
// A += u1 v1^T + u2 v2^T; x += beta A^T y + z; w += alpha A x.
// Kernels: `gemver_k1` (2-D grid, i -> y, j -> x), `gemver_k2` and `gemver_k3` (1-D grids over
// i; j sequential per thread).
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef N
#define N 2048
#endif

static const int GRID_DIMS = 1;

__global__ void gemver_k1(int n, float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT u1,
                          CGP_CONST float* CGP_RESTRICT v1, CGP_CONST float* CGP_RESTRICT u2,
                          CGP_CONST float* CGP_RESTRICT v2) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    A[i * N + j] += u1[i] * v1[j] + u2[i] * v2[j];
  }
}

__global__ void gemver_k2(int n, float beta, CGP_CONST float* CGP_RESTRICT A, float* CGP_RESTRICT x,
                          CGP_CONST float* CGP_RESTRICT y, CGP_CONST float* CGP_RESTRICT z) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int j = 0; j < n; j++)
      x[i] += beta * A[j * N + i] * y[j];
    x[i] += z[i];
  }
}

__global__ void gemver_k3(int n, float alpha, CGP_CONST float* CGP_RESTRICT A,
                          CGP_CONST float* CGP_RESTRICT x,
                          float* CGP_RESTRICT w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int j = 0; j < n; j++)
      w[i] += alpha * A[i * N + j] * x[j];
  }
}

struct Vecs {
  std::vector<float> u1, v1, u2, v2, w, x, y, z;
  Vecs() : u1(N), v1(N), u2(N), v2(N), w(N), x(N), y(N), z(N) {}
};

static void init(std::vector<float>& A, Vecs& v) {
  for (int i = 0; i < N; i++) {
    v.u1[i] = (float)(i % N) / N;
    v.u2[i] = (float)((i + 1) % N) / N / 2.0f;
    v.v1[i] = (float)((i + 1) % N) / N / 4.0f;
    v.v2[i] = (float)((i + 1) % N) / N / 6.0f;
    v.y[i] = (float)((i + 1) % N) / N / 8.0f;
    v.z[i] = (float)((i + 1) % N) / N / 9.0f;
    v.x[i] = 0.0f;
    v.w[i] = 0.0f;
    for (int j = 0; j < N; j++)
      A[i * N + j] = (float)((i * j) % N) / N;
  }
}

static void reference(float alpha, float beta, std::vector<float>& A, Vecs& v) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      A[i * N + j] += v.u1[i] * v.v1[j] + v.u2[i] * v.v2[j];
    }
  }
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      v.x[i] += beta * A[j * N + i] * v.y[j];
    v.x[i] += v.z[i];
  }
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      v.w[i] += alpha * A[i * N + j] * v.x[j];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)N * N);
  Vecs v;
  init(A, v);
  cgp::DevBuf<float> dA(A.size()), du1(N), dv1(N), du2(N), dv2(N), dw(N), dx(N), dy(N), dz(N);
  auto reset = [&] {
    dA.upload(A); du1.upload(v.u1); dv1.upload(v.v1); du2.upload(v.u2); dv2.upload(v.v2);
    dw.upload(v.w); dx.upload(v.x); dy.upload(v.y); dz.upload(v.z);
  };
  auto run = [&](cgp::Recorder& rec) {
    dim3 b1 = cgp::block1d(opt), b2 = cgp::block2d(opt);
    dim3 g1 = cgp::grid2d(opt, N, N), g = cgp::grid1d(opt, N);
    rec.launch("gemver_k1", [&] { gemver_k1<<<g1, b2>>>(N, dA, du1, dv1, du2, dv2); });
    rec.launch("gemver_k2", [&] { gemver_k2<<<g, b1>>>(N, beta, dA, dx, dy, dz); });
    rec.launch("gemver_k3", [&] { gemver_k3<<<g, b1>>>(N, alpha, dA, dx, dw); });
  };
  auto check = [&] {
    std::vector<float> rA = A;
    Vecs r = v;
    reference(alpha, beta, rA, r);
    return std::max({cgp::rel_err(dA.download(), rA), cgp::rel_err(dx.download(), r.x),
                     cgp::rel_err(dw.download(), r.w)});
  };
  return cgp::run_bench("gemver", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
