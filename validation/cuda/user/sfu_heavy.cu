// sfu_heavy.cu -- CUDA port of examples/user/sfu_heavy.c: y = exp(x) / sqrt(x + 1) per
// element, one thread per element (kernel `sfu_heavy`, 1-D grid). expf, IEEE sqrtf and
// division as nvcc's defaults (no fast math).
#include "user.cuh"

// 1 << 22, as the C file
#ifndef N
#define N 4194304
#endif

static const int GRID_DIMS = 1;

__global__ void sfu_heavy(int n, CGP_CONST float* CGP_RESTRICT x, float* CGP_RESTRICT y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = expf(x[i]) / sqrtf(x[i] + 1.0f);
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> x(N);
  for (int i = 0; i < N; i++) x[i] = (float)(i % 97) * 0.01f;
  cgp::DevBuf<float> dx(N), dy(N);
  auto reset = [&] { dx.upload(x); dy.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("sfu_heavy", [&] { sfu_heavy<<<grid, block>>>(N, dx, dy); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int i = 0; i < N; i++) ref[i] = std::exp(x[i]) / std::sqrt(x[i] + 1.0f);
    return cgp::rel_err(dy.download(), ref);
  };
  return cgp::run_bench("sfu_heavy", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
