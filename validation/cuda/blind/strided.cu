// strided.cu -- CUDA port of examples/blind/strided.c: out[i] = in[3i] + in[3i + 2], the
// first and third float of 3-float structures, one thread per structure (kernel `strided`,
// 1-D grid over i); a warp's loads step by 12 bytes.
#include "../user/user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif

static const int GRID_DIMS = 1;

__global__ void strided(int n, CGP_CONST float* CGP_RESTRICT in, float* CGP_RESTRICT out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[3 * i] + in[3 * i + 2];
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> in(3 * N);
  for (int k = 0; k < 3 * N; k++) in[k] = (float)(k % 17);
  cgp::DevBuf<float> din(3 * N), dout(N);
  auto reset = [&] { din.upload(in); dout.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("strided", [&] { strided<<<grid, block>>>(N, din, dout); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int i = 0; i < N; i++) ref[i] = in[3 * i] + in[3 * i + 2];
    return cgp::rel_err(dout.download(), ref);
  };
  return cgp::run_bench("strided", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
