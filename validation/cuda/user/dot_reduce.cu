// dot_reduce.cu -- CUDA port of examples/user/dot_reduce.c: s += x[i] * y[i] over i, the
// loop mapped to threads (1-D grid over i). Kernel `dot` as cgpredict predicts it
// (cgpredict/atomics.py, a reduction): each thread's product, summed within its warp by
// shuffles (cgp::warp_sum), one atomicAdd per warp.
#include "user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif

static const int GRID_DIMS = 1;

__global__ void dot(int n, CGP_CONST float* CGP_RESTRICT x, CGP_CONST float* CGP_RESTRICT y,
                    float* CGP_RESTRICT s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = 0.0f;
  if (i < n)
    v = x[i] * y[i];
  v = cgp::warp_sum(v);
  if (cgp::first_lane())
    atomicAdd(s, v);
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> x(N), y(N);
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13) / 13.0f;
    y[i] = (float)(i % 7) / 7.0f;
  }
  cgp::DevBuf<float> dx(N), dy(N), ds(1);
  auto reset = [&] { dx.upload(x); dy.upload(y); ds.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("dot", [&] { dot<<<grid, block>>>(N, dx, dy, ds); });
  };
  auto check = [&] {
    double s = 0.0;  // the sum in double: the order of the float additions differs
    for (int i = 0; i < N; i++) s += (double)(x[i] * y[i]);
    return cgp::rel_err(ds.download(), std::vector<float>{(float)s});
  };
  return cgp::run_bench("dot_reduce", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
