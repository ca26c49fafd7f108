// index_decomp.cu -- CUDA port of examples/user/index_decomp.c: a transpose over a flat
// index, split into row and column by / and % by the run-time width (1-D grid over idx).
// Kernel `index_decomp`; width and rows are run-time parameters, as the C reads the width
// from a volatile.
#include "user.cuh"

// 1 << 22, as the C file
#ifndef NE
#define NE 4194304
#endif
#ifndef W
#define W 2048
#endif

static const int GRID_DIMS = 1;

__global__ void index_decomp(int ne, int width, int rows, CGP_CONST float* CGP_RESTRICT in,
                             float* CGP_RESTRICT out) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < ne) {
    int r = idx / width;
    int c = idx % width;
    out[c * rows + r] = in[idx];
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> in(NE);
  for (int i = 0; i < NE; i++) in[i] = (float)(i % 31);
  int width = W, rows = NE / width;
  cgp::DevBuf<float> din(NE), dout(NE);
  auto reset = [&] { din.upload(in); dout.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, NE);
    rec.launch("index_decomp",
               [&] { index_decomp<<<grid, block>>>(NE, width, rows, din, dout); });
  };
  auto check = [&] {
    std::vector<float> ref(NE, 0.0f);
    for (int idx = 0; idx < NE; idx++) ref[(idx % width) * rows + idx / width] = in[idx];
    return cgp::rel_err(dout.download(), ref);
  };
  return cgp::run_bench("index_decomp", opt, {{"NE", NE}, {"W", W}}, GRID_DIMS, reset, run,
                        check);
}
