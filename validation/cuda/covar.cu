// covar.cu -- CUDA reference port of polybench_c/covar.c: covariance matrix of M variables over
// N observations (FLOAT_N = N as in the C file; sums not divided by N - 1).
// Kernels: `covar_mean` (1-D grid over j), `covar_reduce` (2-D grid, i -> y, j -> x),
// `covar_covar` (1-D grid over ja; jb and i sequential per thread).
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef M
#define M 1024
#endif
#ifndef N
#define N 1024
#endif

#define FLOAT_N ((float)N)

static const int GRID_DIMS = 1;

__global__ void covar_mean(int m, int n, CGP_CONST float* CGP_RESTRICT data, float* CGP_RESTRICT mean) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) {
    mean[j] = 0.0f;
    for (int i = 0; i < n; i++)
      mean[j] += data[i * M + j];
    mean[j] /= FLOAT_N;
  }
}

__global__ void covar_reduce(int m, int n, float* CGP_RESTRICT data, CGP_CONST float* CGP_RESTRICT mean) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < m) {
    data[i * M + j] -= mean[j];
  }
}

__global__ void covar_covar(int m, int n, CGP_CONST float* CGP_RESTRICT data, float* CGP_RESTRICT symmat) {
  int ja = blockIdx.x * blockDim.x + threadIdx.x;
  if (ja < m) {
    for (int jb = ja; jb < m; jb++) {
      symmat[ja * M + jb] = 0.0f;
      for (int i = 0; i < n; i++)
        symmat[ja * M + jb] += data[i * M + ja] * data[i * M + jb];
      symmat[jb * M + ja] = symmat[ja * M + jb];
    }
  }
}

static void init(std::vector<float>& data) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      data[i * M + j] = (float)((i * j) % M) / M;
}

static void reference(std::vector<float>& data, std::vector<float>& mean,
                      std::vector<float>& symmat) {
  for (int j = 0; j < M; j++) {
    mean[j] = 0.0f;
    for (int i = 0; i < N; i++)
      mean[j] += data[i * M + j];
    mean[j] /= FLOAT_N;
  }
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++) {
      data[i * M + j] -= mean[j];
    }
  }
  for (int ja = 0; ja < M; ja++) {
    for (int jb = ja; jb < M; jb++) {
      symmat[ja * M + jb] = 0.0f;
      for (int i = 0; i < N; i++)
        symmat[ja * M + jb] += data[i * M + ja] * data[i * M + jb];
      symmat[jb * M + ja] = symmat[ja * M + jb];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> data((size_t)N * M);
  init(data);
  cgp::DevBuf<float> ddata(data.size()), dmean(M), dsym((size_t)M * M);
  auto reset = [&] { ddata.upload(data); dmean.zero(); dsym.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 b1 = cgp::block1d(opt), b2 = cgp::block2d(opt);
    dim3 gm = cgp::grid1d(opt, M), gr = cgp::grid2d(opt, N, M);
    rec.launch("covar_mean", [&] { covar_mean<<<gm, b1>>>(M, N, ddata, dmean); });
    rec.launch("covar_reduce", [&] { covar_reduce<<<gr, b2>>>(M, N, ddata, dmean); });
    rec.launch("covar_covar", [&] { covar_covar<<<gm, b1>>>(M, N, ddata, dsym); });
  };
  auto check = [&] {
    std::vector<float> d = data, mean(M), sym((size_t)M * M, 0.0f);
    reference(d, mean, sym);
    return std::max({cgp::rel_err(dmean.download(), mean), cgp::rel_err(ddata.download(), d),
                     cgp::rel_err(dsym.download(), sym)});
  };
  return cgp::run_bench("covar", opt, {{"M", M}, {"N", N}}, GRID_DIMS, reset, run, check);
}
