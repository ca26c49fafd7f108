// jacobi2d.cu -- CUDA port of examples/user/jacobi2d.c: a 5-point Jacobi sweep on an N x N
// grid, TSTEPS sweeps, the grids swapped after each (a host loop of launches, as written).
// Kernel `jacobi` (2-D grid: i -> y, j -> x, both from 1; the guard applies N - 1).
#include "user.cuh"

#ifndef N
#define N 4096
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif

static const int GRID_DIMS = 2;

__global__ void jacobi(int n, CGP_CONST float* CGP_RESTRICT src, float* CGP_RESTRICT dst) {
  int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1 && j < n - 1)
    dst[i * N + j] = 0.2f * (src[i * N + j] + src[(i - 1) * N + j] + src[(i + 1) * N + j]
                             + src[i * N + j - 1] + src[i * N + j + 1]);
}

static void reference(std::vector<float>& a, std::vector<float>& b, long steps) {
  float* src = a.data();
  float* dst = b.data();
  for (long t = 0; t < steps; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        dst[i * N + j] = 0.2f * (src[i * N + j] + src[(i - 1) * N + j] + src[(i + 1) * N + j]
                                 + src[i * N + j - 1] + src[i * N + j + 1]);
    std::swap(src, dst);
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> a((size_t)N * N);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) a[(size_t)i * N + j] = (float)((i + 2 * j) % 23);
  cgp::DevBuf<float> da(a.size()), db(a.size());
  auto reset = [&] { da.upload(a); db.upload(a); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, N - 2, N - 2);
    float* src = da;
    float* dst = db;
    for (long t : rec.host_loop(0, TSTEPS, {"jacobi"})) {
      (void)t;
      rec.launch("jacobi", [&] { jacobi<<<grid, block>>>(N, src, dst); });
      std::swap(src, dst);
    }
  };
  auto check = [&] {
    std::vector<float> ra = a, rb = a;
    reference(ra, rb, TSTEPS);
    // after an even number of sweeps the result is in a, else in b (the last dst)
    return TSTEPS % 2 == 0 ? cgp::rel_err(da.download(), ra) : cgp::rel_err(db.download(), rb);
  };
  return cgp::run_bench("jacobi2d", opt, {{"N", N}, {"TSTEPS", TSTEPS}}, GRID_DIMS, reset, run,
                        check);
}
