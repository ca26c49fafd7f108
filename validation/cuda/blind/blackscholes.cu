// blackscholes.cu -- CUDA port of examples/blind/blackscholes.c: Black-Scholes call and put
// prices, one thread per option (kernel `blackscholes`, 1-D grid over i); the cumulative
// normal distribution as a __device__ function (the SDK sample's polynomial). r and sigma are
// the C file's constants (folded, as clang does); expf, logf, IEEE sqrtf and division as
// nvcc's defaults (no fast math).
#include "../user/user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif

static const int GRID_DIMS = 1;

__host__ __device__ inline float cnd(float d) {
  const float A1 = 0.31938153f;
  const float A2 = -0.356563782f;
  const float A3 = 1.781477937f;
  const float A4 = -1.821255978f;
  const float A5 = 1.330274429f;
  const float RSQRT2PI = 0.39894228040143267793994605993438f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = RSQRT2PI * expf(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  if (d > 0.0f)
    c = 1.0f - c;
  return c;
}

__global__ void blackscholes(int n, CGP_CONST float* CGP_RESTRICT S, CGP_CONST float* CGP_RESTRICT K,
                             CGP_CONST float* CGP_RESTRICT T, float* CGP_RESTRICT call,
                             float* CGP_RESTRICT put) {
  const float r = 0.02f;
  const float sigma = 0.30f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = S[i], k = K[i], t = T[i];
    float sqrt_t = sqrtf(t);
    float d1 = (logf(s / k) + (r + 0.5f * sigma * sigma) * t) / (sigma * sqrt_t);
    float d2 = d1 - sigma * sqrt_t;
    float cnd1 = cnd(d1);
    float cnd2 = cnd(d2);
    float exp_rt = expf(-r * t);
    call[i] = s * cnd1 - k * exp_rt * cnd2;
    put[i] = k * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> S(N), K(N), T(N);
  for (int i = 0; i < N; i++) {
    S[i] = 5.0f + (float)(i % 251) * 0.1f;
    K[i] = 1.0f + (float)(i % 991) * 0.1f;
    T[i] = 0.25f + (float)(i % 39) * 0.25f;
  }
  cgp::DevBuf<float> dS(N), dK(N), dT(N), dcall(N), dput(N);
  auto reset = [&] { dS.upload(S); dK.upload(K); dT.upload(T); dcall.zero(); dput.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("blackscholes", [&] { blackscholes<<<grid, block>>>(N, dS, dK, dT, dcall, dput); });
  };
  auto check = [&] {
    const float r = 0.02f, sigma = 0.30f;
    std::vector<float> rcall(N), rput(N);
    for (int i = 0; i < N; i++) {
      float s = S[i], k = K[i], t = T[i];
      float sqrt_t = std::sqrt(t);
      float d1 = (std::log(s / k) + (r + 0.5f * sigma * sigma) * t) / (sigma * sqrt_t);
      float d2 = d1 - sigma * sqrt_t;
      float cnd1 = cnd(d1), cnd2 = cnd(d2);
      float exp_rt = std::exp(-r * t);
      rcall[i] = s * cnd1 - k * exp_rt * cnd2;
      rput[i] = k * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);
    }
    return std::max(cgp::rel_err(dcall.download(), rcall), cgp::rel_err(dput.download(), rput));
  };
  return cgp::run_bench("blackscholes", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
