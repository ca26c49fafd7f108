// nbody_f64.cu -- CUDA port of examples/user/nbody_f64.c: all-pairs acceleration in double
// precision, one thread per body (kernel `nbody_f64`, 1-D grid), the j loop bounded by the
// run-time n. IEEE double sqrt and division (nvcc's defaults).
#include "user.cuh"

#ifndef N
#define N 4096
#endif

static const int GRID_DIMS = 1;

__global__ void nbody_f64(int n, CGP_CONST double* CGP_RESTRICT px, CGP_CONST double* CGP_RESTRICT py,
                          CGP_CONST double* CGP_RESTRICT pz, CGP_CONST double* CGP_RESTRICT m,
                          double* CGP_RESTRICT ax, double* CGP_RESTRICT ay,
                          double* CGP_RESTRICT az) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int j = 0; j < n; j++) {
      double dx = px[j] - px[i];
      double dy = py[j] - py[i];
      double dz = pz[j] - pz[i];
      double r2 = dx * dx + dy * dy + dz * dz + 1e-9;
      double s = m[j] / (r2 * sqrt(r2));
      fx += dx * s;
      fy += dy * s;
      fz += dz * s;
    }
    ax[i] = fx;
    ay[i] = fy;
    az[i] = fz;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<double> px(N), py(N), pz(N), m(N);
  for (int i = 0; i < N; i++) {
    px[i] = (double)(i % 17) * 0.5;
    py[i] = (double)(i % 23) * 0.25;
    pz[i] = (double)(i % 29) * 0.125;
    m[i] = 1.0 + (double)(i % 5);
  }
  cgp::DevBuf<double> dpx(N), dpy(N), dpz(N), dm(N), dax(N), day(N), daz(N);
  auto reset = [&] {
    dpx.upload(px); dpy.upload(py); dpz.upload(pz); dm.upload(m);
    dax.zero(); day.zero(); daz.zero();
  };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, N);
    rec.launch("nbody_f64",
               [&] { nbody_f64<<<grid, block>>>(N, dpx, dpy, dpz, dm, dax, day, daz); });
  };
  auto check = [&] {
    std::vector<double> rx(N), ry(N), rz(N);
    for (int i = 0; i < N; i++) {
      double fx = 0.0, fy = 0.0, fz = 0.0;
      for (int j = 0; j < N; j++) {
        double dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
        double r2 = dx * dx + dy * dy + dz * dz + 1e-9;
        double s = m[j] / (r2 * std::sqrt(r2));
        fx += dx * s;
        fy += dy * s;
        fz += dz * s;
      }
      rx[i] = fx;
      ry[i] = fy;
      rz[i] = fz;
    }
    return std::max({cgp::rel_err(cgp::as_float(dax.download()), cgp::as_float(rx)),
                     cgp::rel_err(cgp::as_float(day.download()), cgp::as_float(ry)),
                     cgp::rel_err(cgp::as_float(daz.download()), cgp::as_float(rz))});
  };
  return cgp::run_bench("nbody_f64", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
