// spmv_ell.cu -- CUDA port of examples/blind/spmv_ell.c: y = A * x for an ELLPACK matrix
// stored column-major, one thread per row (kernel `spmv_ell`, 1-D grid over r); the row's
// loop runs over the run-time k < kk entries, val[k * N + r] and col[k * N + r] coalesced
// across a warp, x[col[...]] a gather.
#include "../user/user.cuh"

// 1 << 20, as the C file
#ifndef N
#define N 1048576
#endif
#ifndef K
#define K 16
#endif
#define BAND 4096

static const int GRID_DIMS = 1;

__global__ void spmv_ell(int n, int kk, CGP_CONST float* CGP_RESTRICT val,
                         CGP_CONST int* CGP_RESTRICT col, CGP_CONST float* CGP_RESTRICT x,
                         float* CGP_RESTRICT y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float s = 0.0f;
    for (int k = 0; k < kk; k++)
      s += val[k * N + r] * x[col[k * N + r]];
    y[r] = s;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> val((size_t)K * N), x(N);
  std::vector<int> col((size_t)K * N);
  unsigned int seed = 4321u;
  for (int k = 0; k < K; k++)
    for (int r = 0; r < N; r++) {
      seed = seed * 1664525u + 1013904223u;
      int c = r + (int)((seed >> 8) % (2 * BAND + 1)) - BAND;
      if (c < 0) c = 0;
      if (c > N - 1) c = N - 1;
      col[(size_t)k * N + r] = c;
      val[(size_t)k * N + r] = (float)((k + r) % 11) / 11.0f;
    }
  for (int c = 0; c < N; c++) x[c] = (float)(c % 5);
  cgp::DevBuf<float> dval(val.size()), dx(N), dy(N);
  cgp::DevBuf<int> dcol(col.size());
  auto reset = [&] { dval.upload(val); dcol.upload(col); dx.upload(x); dy.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("spmv_ell", [&] { spmv_ell<<<grid, block>>>(N, K, dval, dcol, dx, dy); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int r = 0; r < N; r++) {
      float s = 0.0f;
      for (int k = 0; k < K; k++) s += val[(size_t)k * N + r] * x[col[(size_t)k * N + r]];
      ref[r] = s;
    }
    return cgp::rel_err(dy.download(), ref);
  };
  return cgp::run_bench("spmv_ell", opt, {{"N", N}, {"K", K}}, GRID_DIMS, reset, run, check);
}
