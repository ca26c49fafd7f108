// gather.cu -- CUDA port of examples/blind/gather.c: y[i] = w[i] * x[idx[i]], one thread per
// element (kernel `gather`, 1-D grid over i); idx is the C file's random permutation (the same
// Fisher-Yates shuffle on the host), so x[idx[i]] is a gather with no locality.
#include "../user/user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif

static const int GRID_DIMS = 1;

__global__ void gather(int n, CGP_CONST float* CGP_RESTRICT w, CGP_CONST float* CGP_RESTRICT x,
                       CGP_CONST int* CGP_RESTRICT idx, float* CGP_RESTRICT y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = w[i] * x[idx[i]];
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> w(N), x(N);
  std::vector<int> idx(N);
  unsigned int seed = 2024u;
  for (int i = 0; i < N; i++) {
    w[i] = (float)(i % 7) * 0.5f;
    x[i] = (float)(i % 13);
    idx[i] = i;
  }
  for (int i = N - 1; i > 0; i--) {
    seed = seed * 1664525u + 1013904223u;
    int j = (int)((seed >> 8) % (unsigned int)(i + 1));
    std::swap(idx[i], idx[j]);
  }
  cgp::DevBuf<float> dw(N), dx(N), dy(N);
  cgp::DevBuf<int> didx(N);
  auto reset = [&] { dw.upload(w); dx.upload(x); didx.upload(idx); dy.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("gather", [&] { gather<<<grid, block>>>(N, dw, dx, didx, dy); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int i = 0; i < N; i++) ref[i] = w[i] * x[idx[i]];
    return cgp::rel_err(dy.download(), ref);
  };
  return cgp::run_bench("gather", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
