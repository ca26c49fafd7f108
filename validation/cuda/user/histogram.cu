// histogram.cu -- CUDA port of examples/user/histogram.c: a 256-bin histogram, one thread
// per input element (1-D grid over i). Kernel `histogram` as cgpredict predicts it
// (cgpredict/atomics.py, an atomic site): one atomicAdd at the L2 per update.
#include "user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif
#define BINS 256

static const int GRID_DIMS = 1;

__global__ void histogram(int n, CGP_CONST int* CGP_RESTRICT data, int* CGP_RESTRICT hist) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&hist[data[i] & (BINS - 1)], 1);
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<int> data(N);
  unsigned int seed = 7u;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    data[i] = (int)(seed >> 16);
  }
  cgp::DevBuf<int> ddata(N), dhist(BINS);
  if (std::getenv("CGP_PRINT_ADDRS"))  // where the bins lie decides their L2 slices (eq. (A2))
    std::fprintf(stderr, "{\"hist_address\": %llu}\n", (unsigned long long)(size_t)(int*)dhist);
  auto reset = [&] { ddata.upload(data); dhist.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("histogram", [&] { histogram<<<grid, block>>>(N, ddata, dhist); });
  };
  auto check = [&] {
    std::vector<int> ref(BINS, 0);
    for (int i = 0; i < N; i++) ref[data[i] & (BINS - 1)]++;
    return cgp::rel_err(cgp::as_float(dhist.download()), cgp::as_float(ref));
  };
  return cgp::run_bench("histogram", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
