// corr.cu -- CUDA reference port of polybench_c/corr.c: correlation matrix of M variables over
// N observations (FLOAT_N = N, EPS = 0.1 as in the C file).
// Kernels: `corr_mean`, `corr_std` (1-D grids over j), `corr_reduce` (2-D grid, i -> y,
// j -> x), `corr_corr` (1-D grid over ja = 0 .. M-2; jb and i sequential per thread).
// symmat[M-1][M-1] = 1 is set on the host afterwards (untimed), as in the C file.
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
#define EPS 0.1f

static const int GRID_DIMS = 1;

__global__ void corr_mean(int m, int n, CGP_CONST float* CGP_RESTRICT data, float* CGP_RESTRICT mean) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) {
    mean[j] = 0.0f;
    for (int i = 0; i < n; i++)
      mean[j] += data[i * M + j];
    mean[j] /= FLOAT_N;
  }
}

__global__ void corr_std(int m, int n, CGP_CONST float* CGP_RESTRICT data, CGP_CONST float* CGP_RESTRICT mean,
                         float* CGP_RESTRICT stddev) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) {
    stddev[j] = 0.0f;
    for (int i = 0; i < n; i++)
      stddev[j] += (data[i * M + j] - mean[j]) * (data[i * M + j] - mean[j]);
    stddev[j] /= FLOAT_N;
    stddev[j] = sqrtf(stddev[j]);
    if (stddev[j] <= EPS)
      stddev[j] = 1.0f;
  }
}

__global__ void corr_reduce(int m, int n, float* CGP_RESTRICT data, CGP_CONST float* CGP_RESTRICT mean,
                            CGP_CONST float* CGP_RESTRICT stddev) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < m) {
    data[i * M + j] -= mean[j];
    data[i * M + j] /= sqrtf(FLOAT_N) * stddev[j];
  }
}

__global__ void corr_corr(int m, int n, CGP_CONST float* CGP_RESTRICT data, float* CGP_RESTRICT symmat) {
  int ja = blockIdx.x * blockDim.x + threadIdx.x;
  if (ja < m - 1) {
    symmat[ja * M + ja] = 1.0f;
    for (int jb = ja + 1; jb < m; jb++) {
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
      data[i * M + j] = (float)((i * j) % M) / M + (float)i / N;
}

static void reference(std::vector<float>& data, std::vector<float>& mean,
                      std::vector<float>& stddev, std::vector<float>& symmat) {
  for (int j = 0; j < M; j++) {
    mean[j] = 0.0f;
    for (int i = 0; i < N; i++)
      mean[j] += data[i * M + j];
    mean[j] /= FLOAT_N;
  }
  for (int j = 0; j < M; j++) {
    stddev[j] = 0.0f;
    for (int i = 0; i < N; i++)
      stddev[j] += (data[i * M + j] - mean[j]) * (data[i * M + j] - mean[j]);
    stddev[j] /= FLOAT_N;
    stddev[j] = sqrtf(stddev[j]);
    if (stddev[j] <= EPS)
      stddev[j] = 1.0f;
  }
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++) {
      data[i * M + j] -= mean[j];
      data[i * M + j] /= sqrtf(FLOAT_N) * stddev[j];
    }
  }
  for (int ja = 0; ja < M - 1; ja++) {
    symmat[ja * M + ja] = 1.0f;
    for (int jb = ja + 1; jb < M; jb++) {
      symmat[ja * M + jb] = 0.0f;
      for (int i = 0; i < N; i++)
        symmat[ja * M + jb] += data[i * M + ja] * data[i * M + jb];
      symmat[jb * M + ja] = symmat[ja * M + jb];
    }
  }
  symmat[(M - 1) * M + (M - 1)] = 1.0f;
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> data((size_t)N * M);
  init(data);
  cgp::DevBuf<float> ddata(data.size()), dmean(M), dstd(M), dsym((size_t)M * M);
  auto reset = [&] { ddata.upload(data); dmean.zero(); dstd.zero(); dsym.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 b1 = cgp::block1d(opt), b2 = cgp::block2d(opt);
    dim3 gm = cgp::grid1d(opt, M), gr = cgp::grid2d(opt, N, M), gc = cgp::grid1d(opt, M - 1);
    rec.launch("corr_mean", [&] { corr_mean<<<gm, b1>>>(M, N, ddata, dmean); });
    rec.launch("corr_std", [&] { corr_std<<<gm, b1>>>(M, N, ddata, dmean, dstd); });
    rec.launch("corr_reduce", [&] { corr_reduce<<<gr, b2>>>(M, N, ddata, dmean, dstd); });
    rec.launch("corr_corr", [&] { corr_corr<<<gc, b1>>>(M, N, ddata, dsym); });
  };
  auto check = [&] {
    std::vector<float> d = data, mean(M), stddev(M), sym((size_t)M * M, 0.0f);
    reference(d, mean, stddev, sym);
    std::vector<float> dev = dsym.download();
    dev[(size_t)(M - 1) * M + (M - 1)] = 1.0f;  // the host statement after the kernels
    return std::max({cgp::rel_err(dmean.download(), mean), cgp::rel_err(dstd.download(), stddev),
                     cgp::rel_err(ddata.download(), d), cgp::rel_err(dev, sym)});
  };
  return cgp::run_bench("corr", opt, {{"M", M}, {"N", N}}, GRID_DIMS, reset, run, check);
}
