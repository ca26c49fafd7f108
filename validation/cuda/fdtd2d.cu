// fdtd2d.cu -- CUDA reference port of polybench_c/fdtd2d.c: 2-D FDTD, TMAX time steps.
// The host loops over t and launches three kernels per step (one launch per host iteration):
// `fdtd_k1` (ey; 2-D grid over 0 <= i < NX, 0 <= j < NY), `fdtd_k2` (ex; 0 <= i < NX,
// 1 <= j < NY), `fdtd_k3` (hz; 0 <= i < NX-1, 0 <= j < NY-1); i -> y, j -> x, no thread loops.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as PolyBench/GPU does (common.cuh, "Sizes").
#include "common.cuh"

#ifndef NX
#define NX 4096
#endif
#ifndef NY
#define NY 4096
#endif
#ifndef TMAX
#define TMAX 500
#endif

static const int GRID_DIMS = 2;

__global__ void fdtd_k1(int nx, int ny, CGP_CONST float* CGP_RESTRICT fict, float* CGP_RESTRICT ey,
                        CGP_CONST float* CGP_RESTRICT hz, int t) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < nx && j < ny) {
    if (i == 0)
      ey[i * NY + j] = fict[t];
    else
      ey[i * NY + j] = ey[i * NY + j] - 0.5f * (hz[i * NY + j] - hz[(i - 1) * NY + j]);
  }
}

__global__ void fdtd_k2(int nx, int ny, float* CGP_RESTRICT ex, CGP_CONST float* CGP_RESTRICT hz) {
  int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < nx && j < ny) {
    ex[i * NY + j] = ex[i * NY + j] - 0.5f * (hz[i * NY + j] - hz[i * NY + (j - 1)]);
  }
}

__global__ void fdtd_k3(int nx, int ny, CGP_CONST float* CGP_RESTRICT ex, CGP_CONST float* CGP_RESTRICT ey,
                        float* CGP_RESTRICT hz) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < nx - 1 && j < ny - 1) {
    hz[i * NY + j] = hz[i * NY + j] - 0.7f * (ex[i * NY + (j + 1)] - ex[i * NY + j] + ey[(i + 1) * NY + j] - ey[i * NY + j]);
  }
}

static void init(std::vector<float>& fict, std::vector<float>& ex, std::vector<float>& ey,
                 std::vector<float>& hz) {
  for (int t = 0; t < TMAX; t++)
    fict[t] = (float)(t % 64) / 64.0f;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) {
      ex[i * NY + j] = (float)((i * (j + 1)) % NX) / NX;
      ey[i * NY + j] = (float)((i * (j + 2) + 1) % NY) / NY;
      hz[i * NY + j] = (float)((i * (j + 3) + 2) % NX) / NX;
    }
}

static void reference(const std::vector<float>& fict, std::vector<float>& ex,
                      std::vector<float>& ey, std::vector<float>& hz) {
  for (int t = 0; t < TMAX; t++) {
    for (int i = 0; i < NX; i++) {
      for (int j = 0; j < NY; j++) {
        if (i == 0)
          ey[i * NY + j] = fict[t];
        else
          ey[i * NY + j] = ey[i * NY + j] - 0.5f * (hz[i * NY + j] - hz[(i - 1) * NY + j]);
      }
    }
    for (int i = 0; i < NX; i++) {
      for (int j = 1; j < NY; j++) {
        ex[i * NY + j] = ex[i * NY + j] - 0.5f * (hz[i * NY + j] - hz[i * NY + (j - 1)]);
      }
    }
    for (int i = 0; i < NX - 1; i++) {
      for (int j = 0; j < NY - 1; j++) {
        hz[i * NY + j] = hz[i * NY + j] - 0.7f * (ex[i * NY + (j + 1)] - ex[i * NY + j] + ey[(i + 1) * NY + j] - ey[i * NY + j]);
      }
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  std::vector<float> fict(TMAX), ex((size_t)NX * NY), ey((size_t)NX * NY), hz((size_t)NX * NY);
  init(fict, ex, ey, hz);
  cgp::DevBuf<float> dfict(TMAX), dex(ex.size()), dey(ey.size()), dhz(hz.size());
  auto reset = [&] { dfict.upload(fict); dex.upload(ex); dey.upload(ey); dhz.upload(hz); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt);
    dim3 g1 = cgp::grid2d(opt, NX, NY), g2 = cgp::grid2d(opt, NX, NY - 1),
         g3 = cgp::grid2d(opt, NX - 1, NY - 1);
    for (long t : rec.host_loop(0, TMAX, {"fdtd_k1", "fdtd_k2", "fdtd_k3"})) {
      rec.launch("fdtd_k1", [&] { fdtd_k1<<<g1, block>>>(NX, NY, dfict, dey, dhz, (int)t); });
      rec.launch("fdtd_k2", [&] { fdtd_k2<<<g2, block>>>(NX, NY, dex, dhz); });
      rec.launch("fdtd_k3", [&] { fdtd_k3<<<g3, block>>>(NX, NY, dex, dey, dhz); });
    }
  };
  auto check = [&] {
    std::vector<float> rex = ex, rey = ey, rhz = hz;
    reference(fict, rex, rey, rhz);
    return std::max({cgp::rel_err(dex.download(), rex), cgp::rel_err(dey.download(), rey),
                     cgp::rel_err(dhz.download(), rhz)});
  };
  return cgp::run_bench("fdtd2d", opt, {{"NX", NX}, {"NY", NY}, {"TMAX", TMAX}}, GRID_DIMS,
                        reset, run, check);
}
