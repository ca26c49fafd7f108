// heat1d.cu -- CUDA port of examples/blind/heat1d.c: a 3-point 1-D heat stencil, TSTEPS
// sweeps, the arrays swapped after each (a host loop of launches, as written).
// Kernel `heat` (1-D grid over i, from 1; the guard applies N - 1).
#include "../user/user.cuh"

// 2^16, as the C file
#ifndef N
#define N 65536
#endif
#ifndef TSTEPS
#define TSTEPS 200
#endif

static const int GRID_DIMS = 1;

__global__ void heat(int n, CGP_CONST float* CGP_RESTRICT src, float* CGP_RESTRICT dst) {
  int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1)
    dst[i] = src[i] + 0.25f * (src[i - 1] - 2.0f * src[i] + src[i + 1]);
}

static void reference(std::vector<float>& a, std::vector<float>& b, long steps) {
  float* src = a.data();
  float* dst = b.data();
  for (long t = 0; t < steps; t++) {
    for (int i = 1; i < N - 1; i++)
      dst[i] = src[i] + 0.25f * (src[i - 1] - 2.0f * src[i] + src[i + 1]);
    std::swap(src, dst);
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> a(N);
  for (int i = 0; i < N; i++) a[i] = (float)((i * 7) % 19) / 19.0f;
  cgp::DevBuf<float> da(N), db(N);
  auto reset = [&] { da.upload(a); db.upload(a); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N - 2);
    float* src = da;
    float* dst = db;
    for (long t : rec.host_loop(0, TSTEPS, {"heat"})) {
      (void)t;
      rec.launch("heat", [&] { heat<<<grid, block>>>(N, src, dst); });
      std::swap(src, dst);
    }
  };
  auto check = [&] {
    std::vector<float> ra = a, rb = a;
    reference(ra, rb, TSTEPS);
    // after an even number of sweeps the result is in a, else in b (the last dst)
    return TSTEPS % 2 == 0 ? cgp::rel_err(da.download(), ra) : cgp::rel_err(db.download(), rb);
  };
  return cgp::run_bench("heat1d", opt, {{"N", N}, {"TSTEPS", TSTEPS}}, GRID_DIMS, reset, run,
                        check);
}
