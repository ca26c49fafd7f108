// dot_gridstride.cu -- CUDA port of examples/user/dot_gridstride.c: a double dot product as a
// grid-stride loop. Kernel `dot` (1-D grid over the NT threads t); thread t sums x[k] * y[k]
// for k = t, t + NT, ... < n and writes its partial; the host sums the partials. The loop's
// bound is the run-time n; its step is the C file's NT (a macro there, as an array stride).
#include "user.cuh"

// 1 << 24, as the C file
#ifndef N
#define N 16777216
#endif
// 1 << 16
#ifndef NT
#define NT 65536
#endif

static const int GRID_DIMS = 1;

__global__ void dot(int n, int nt, CGP_CONST double* CGP_RESTRICT x,
                    CGP_CONST double* CGP_RESTRICT y, double* CGP_RESTRICT part) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < nt) {
    double s = 0.0;
    for (int k = t; k < n; k += NT)
      s += x[k] * y[k];
    part[t] = s;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<double> x(N), y(N);
  for (int k = 0; k < N; k++) {
    x[k] = (double)(k % 17) / 17.0;
    y[k] = (double)(k % 29) / 29.0;
  }
  cgp::DevBuf<double> dx(N), dy(N), dpart(NT);
  auto reset = [&] { dx.upload(x); dy.upload(y); dpart.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, NT);
    rec.launch("dot", [&] { dot<<<grid, block>>>(N, NT, dx, dy, dpart); });
  };
  auto check = [&] {
    std::vector<double> ref(NT);
    for (int t = 0; t < NT; t++) {
      double s = 0.0;
      for (int k = t; k < N; k += NT) s += x[k] * y[k];
      ref[t] = s;
    }
    return cgp::rel_err(cgp::as_float(dpart.download()), cgp::as_float(ref));
  };
  return cgp::run_bench("dot_gridstride", opt, {{"N", N}, {"NT", NT}}, GRID_DIMS, reset, run,
                        check);
}
