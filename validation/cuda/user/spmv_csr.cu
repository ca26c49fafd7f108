// spmv_csr.cu -- CUDA port of examples/user/spmv_csr.c: y = A * x for a CSR matrix, one
// thread per row (the scalar CSR kernel `spmv`, 1-D grid over r); the row's loop runs from
// rowptr[r] to rowptr[r + 1], and x[col[k]] is a gather.
#include "user.cuh"

// 1 << 20, as the C file
#ifndef NR
#define NR 1048576
#endif
#ifndef NC
#define NC 1048576
#endif
#define NNZ_ROW 16

static const int GRID_DIMS = 1;

__global__ void spmv(int nr, CGP_CONST int* CGP_RESTRICT rowptr, CGP_CONST int* CGP_RESTRICT col,
                     CGP_CONST float* CGP_RESTRICT val, CGP_CONST float* CGP_RESTRICT x,
                     float* CGP_RESTRICT y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < nr) {
    float s = 0.0f;
    for (int k = rowptr[r]; k < rowptr[r + 1]; k++)
      s += val[k] * x[col[k]];
    y[r] = s;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<int> rowptr(NR + 1), col((size_t)NR * NNZ_ROW);
  std::vector<float> val((size_t)NR * NNZ_ROW), x(NC);
  unsigned int seed = 12345u;
  for (int r = 0; r <= NR; r++) rowptr[r] = r * NNZ_ROW;
  for (int k = 0; k < NR * NNZ_ROW; k++) {
    seed = seed * 1664525u + 1013904223u;
    col[k] = (int)((seed >> 8) % NC);
    val[k] = (float)(k % 11) / 11.0f;
  }
  for (int c = 0; c < NC; c++) x[c] = (float)(c % 5);
  cgp::DevBuf<int> drowptr(rowptr.size()), dcol(col.size());
  cgp::DevBuf<float> dval(val.size()), dx(NC), dy(NR);
  auto reset = [&] {
    drowptr.upload(rowptr); dcol.upload(col); dval.upload(val); dx.upload(x); dy.zero();
  };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, NR);
    rec.launch("spmv", [&] { spmv<<<grid, block>>>(NR, drowptr, dcol, dval, dx, dy); });
  };
  auto check = [&] {
    std::vector<float> ref(NR);
    for (int r = 0; r < NR; r++) {
      float s = 0.0f;
      for (int k = rowptr[r]; k < rowptr[r + 1]; k++) s += val[k] * x[col[k]];
      ref[r] = s;
    }
    return cgp::rel_err(dy.download(), ref);
  };
  return cgp::run_bench("spmv_csr", opt, {{"NR", NR}, {"NC", NC}}, GRID_DIMS, reset, run,
                        check);
}
