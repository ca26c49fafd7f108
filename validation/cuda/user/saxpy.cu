// saxpy.cu -- CUDA port of examples/user/saxpy.c: y = a * x + y, one thread per element.
// Kernel `saxpy` (1-D grid over i). a is the C file's constant 2.5f (folded, as clang does).
#include "user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif

static const int GRID_DIMS = 1;

__global__ void saxpy(int n, CGP_CONST float* CGP_RESTRICT x, float* CGP_RESTRICT y) {
  const float a = 2.5f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> x(N), y(N);
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13);
    y[i] = (float)(i % 7);
  }
  cgp::DevBuf<float> dx(N), dy(N);
  auto reset = [&] { dx.upload(x); dy.upload(y); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("saxpy", [&] { saxpy<<<grid, block>>>(N, dx, dy); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int i = 0; i < N; i++) ref[i] = 2.5f * x[i] + y[i];
    return cgp::rel_err(dy.download(), ref);
  };
  return cgp::run_bench("saxpy", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
