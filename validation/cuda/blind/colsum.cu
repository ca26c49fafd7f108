// colsum.cu -- CUDA port of examples/blind/colsum.c: the column sums of an M x N matrix, one
// thread per column (kernel `colsum`, 1-D grid over j); each thread runs the whole i loop
// (bounded by the run-time row count), a warp's loads of a row contiguous.
#include "../user/user.cuh"

#ifndef M
#define M 16384
#endif
#ifndef N
#define N 2048
#endif

static const int GRID_DIMS = 1;

__global__ void colsum(int m, int n, CGP_CONST float* CGP_RESTRICT A, float* CGP_RESTRICT s) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float acc = 0.0f;
    for (int i = 0; i < m; i++)
      acc += A[i * N + j];
    s[j] = acc;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> A((size_t)M * N);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) A[(size_t)i * N + j] = (float)((i * 3 + j * 7) % 31) / 31.0f;
  cgp::DevBuf<float> dA(A.size()), ds(N);
  auto reset = [&] { dA.upload(A); ds.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("colsum", [&] { colsum<<<grid, block>>>(M, N, dA, ds); });
  };
  auto check = [&] {
    std::vector<float> ref(N);
    for (int j = 0; j < N; j++) {
      float acc = 0.0f;
      for (int i = 0; i < M; i++) acc += A[(size_t)i * N + j];
      ref[j] = acc;
    }
    return cgp::rel_err(ds.download(), ref);
  };
  return cgp::run_bench("colsum", opt, {{"M", M}, {"N", N}}, GRID_DIMS, reset, run, check);
}
