// conv1d.cu -- CUDA port of examples/blind/conv1d.c: a 17-tap 1-D convolution, one thread per
// output (kernel `conv1d`, 1-D grid over i): out[i] = sum over k < K of c[k] * in[i + k]. The
// coefficients are an array parameter (global memory, the same address across a warp); the
// tap count K is the C file's constant (not a size macro), as there.
#include "../user/user.cuh"

// 2^24, as the C file
#ifndef N
#define N 16777216
#endif
#define K 17

static const int GRID_DIMS = 1;

__global__ void conv1d(int n, CGP_CONST float* CGP_RESTRICT in, CGP_CONST float* CGP_RESTRICT c,
                       float* CGP_RESTRICT out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.0f;
    for (int k = 0; k < K; k++)
      s += c[k] * in[i + k];
    out[i] = s;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> in((size_t)N + K - 1), c(K);
  for (int i = 0; i < N + K - 1; i++) in[i] = (float)((i * 5) % 23) / 23.0f;
  for (int k = 0; k < K; k++) c[k] = (float)(k + 1) / 153.0f;
  cgp::DevBuf<float> din(in.size()), dc(K), dout(N);
  auto reset = [&] { din.upload(in); dc.upload(c); dout.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("conv1d", [&] { conv1d<<<grid, block>>>(N, din, dc, dout); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int i = 0; i < N; i++) {
      float s = 0.0f;
      for (int k = 0; k < K; k++) s += c[k] * in[i + k];
      ref[i] = s;
    }
    return cgp::rel_err(dout.download(), ref);
  };
  return cgp::run_bench("conv1d", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
