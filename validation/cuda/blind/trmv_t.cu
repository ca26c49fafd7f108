// trmv_t.cu -- CUDA port of examples/blind/trmv_t.c: y = L^T x for a lower-triangular L, one
// thread per column j (kernel `trmv_t`, 1-D grid over j); thread j sums L[i][j] * x[i] for
// i = j .. n - 1, the loop bounded by the run-time n.
#include "../user/user.cuh"

#ifndef N
#define N 8192
#endif

static const int GRID_DIMS = 1;

__global__ void trmv_t(int n, CGP_CONST float* CGP_RESTRICT L, CGP_CONST float* CGP_RESTRICT x,
                       float* CGP_RESTRICT y) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float s = 0.0f;
    for (int i = j; i < n; i++)
      s += L[i * N + j] * x[i];
    y[j] = s;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> L((size_t)N * N, 0.0f), x(N);
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++) L[(size_t)i * N + j] = (float)((i * 3 + j * 7) % 17) / 17.0f;
    x[i] = (float)(i % 11) / 11.0f;
  }
  cgp::DevBuf<float> dL(L.size()), dx(N), dy(N);
  auto reset = [&] { dL.upload(L); dx.upload(x); dy.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("trmv_t", [&] { trmv_t<<<grid, block>>>(N, dL, dx, dy); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int j = 0; j < N; j++) {
      float s = 0.0f;
      for (int i = j; i < N; i++) s += L[(size_t)i * N + j] * x[i];
      ref[j] = s;
    }
    return cgp::rel_err(dy.download(), ref);
  };
  return cgp::run_bench("trmv_t", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
