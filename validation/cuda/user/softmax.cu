// softmax.cu -- CUDA port of examples/user/softmax.c: a row-wise softmax, one thread per row
// (kernel `softmax`, 1-D grid over i): the row's maximum, the sum of the exponentials, then
// the output row; the three loops bounded by the run-time column count.
#include "user.cuh"

#ifndef R
#define R 16384
#endif
#ifndef C
#define C 1024
#endif

static const int GRID_DIMS = 1;

__global__ void softmax(int nrow, int ncol, CGP_CONST float* CGP_RESTRICT in,
                        float* CGP_RESTRICT out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nrow) {
    float m = in[i * C + 0];
    for (int j = 1; j < ncol; j++)
      m = fmaxf(m, in[i * C + j]);
    float s = 0.0f;
    for (int j = 0; j < ncol; j++)
      s += expf(in[i * C + j] - m);
    for (int j = 0; j < ncol; j++)
      out[i * C + j] = expf(in[i * C + j] - m) / s;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> in((size_t)R * C);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) in[(size_t)i * C + j] = (float)((i * 7 + j * 13) % 101) / 101.0f;
  cgp::DevBuf<float> din(in.size()), dout(in.size());
  auto reset = [&] { din.upload(in); dout.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, R);
    rec.launch("softmax", [&] { softmax<<<grid, block>>>(R, C, din, dout); });
  };
  auto check = [&] {
    std::vector<float> ref(in.size());
    for (int i = 0; i < R; i++) {
      const float* row = &in[(size_t)i * C];
      float m = row[0], s = 0.0f;
      for (int j = 1; j < C; j++) m = std::max(m, row[j]);
      for (int j = 0; j < C; j++) s += std::exp(row[j] - m);
      for (int j = 0; j < C; j++) ref[(size_t)i * C + j] = std::exp(row[j] - m) / s;
    }
    return cgp::rel_err(dout.download(), ref);
  };
  return cgp::run_bench("softmax", opt, {{"R", R}, {"C", C}}, GRID_DIMS, reset, run, check);
}
