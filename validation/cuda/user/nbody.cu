// nbody.cu -- CUDA port of examples/user/nbody.c: all-pairs gravitational forces, particles
// as an array of structures (kernel `nbody_aos`) and as a structure of arrays (`nbody_soa`),
// one thread per particle i (1-D grid), the j loop sequential in the thread and bounded by
// the run-time np. IEEE sqrtf and division, as nvcc's defaults and the C's.
#include "user.cuh"

#ifndef NP
#define NP 16384
#endif

static const int GRID_DIMS = 1;

struct particle { float x, y, z, m; };

__global__ void nbody_aos(int np, CGP_CONST particle* CGP_RESTRICT p, float* CGP_RESTRICT fx,
                          float* CGP_RESTRICT fy, float* CGP_RESTRICT fz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < np) {
    float px = p[i].x, py = p[i].y, pz = p[i].z;
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < np; j++) {
      float dx = p[j].x - px, dy = p[j].y - py, dz = p[j].z - pz;
      float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      float inv = p[j].m / (r2 * sqrtf(r2));
      ax += dx * inv;
      ay += dy * inv;
      az += dz * inv;
    }
    fx[i] = ax;
    fy[i] = ay;
    fz[i] = az;
  }
}

__global__ void nbody_soa(int np, CGP_CONST float* CGP_RESTRICT px, CGP_CONST float* CGP_RESTRICT py,
                          CGP_CONST float* CGP_RESTRICT pz, CGP_CONST float* CGP_RESTRICT pm,
                          float* CGP_RESTRICT fx, float* CGP_RESTRICT fy, float* CGP_RESTRICT fz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < np) {
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < np; j++) {
      float dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
      float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      float inv = pm[j] / (r2 * sqrtf(r2));
      ax += dx * inv;
      ay += dy * inv;
      az += dz * inv;
    }
    fx[i] += ax;
    fy[i] += ay;
    fz[i] += az;
  }
}

static void pull(const float* x, const float* y, const float* z, const float* m, int i,
                 float* f) {
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < NP; j++) {
    float dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
    float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
    float inv = m[j] / (r2 * sqrtf(r2));
    ax += dx * inv;
    ay += dy * inv;
    az += dz * inv;
  }
  f[0] = ax;
  f[1] = ay;
  f[2] = az;
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<particle> p(NP);
  std::vector<float> px(NP), py(NP), pz(NP), pm(NP);
  for (int i = 0; i < NP; i++) {
    p[i] = {(float)(i % 37), (float)(i % 41), (float)(i % 43), 1.0f + (float)(i % 3)};
    px[i] = p[i].x;
    py[i] = p[i].y;
    pz[i] = p[i].z;
    pm[i] = p[i].m;
  }
  cgp::DevBuf<particle> dp(NP);
  cgp::DevBuf<float> dpx(NP), dpy(NP), dpz(NP), dpm(NP), dfx(NP), dfy(NP), dfz(NP);
  auto reset = [&] {
    dp.upload(p); dpx.upload(px); dpy.upload(py); dpz.upload(pz); dpm.upload(pm);
    dfx.zero(); dfy.zero(); dfz.zero();
  };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, NP);
    rec.launch("nbody_aos", [&] { nbody_aos<<<grid, block>>>(NP, dp, dfx, dfy, dfz); });
    rec.launch("nbody_soa",
               [&] { nbody_soa<<<grid, block>>>(NP, dpx, dpy, dpz, dpm, dfx, dfy, dfz); });
  };
  auto check = [&] {  // fx = aos pull + soa pull = twice the pull
    std::vector<float> rx(NP), ry(NP), rz(NP);
    for (int i = 0; i < NP; i++) {
      float f[3];
      pull(px.data(), py.data(), pz.data(), pm.data(), i, f);
      rx[i] = 2.0f * f[0];
      ry[i] = 2.0f * f[1];
      rz[i] = 2.0f * f[2];
    }
    return std::max({cgp::rel_err(dfx.download(), rx), cgp::rel_err(dfy.download(), ry),
                     cgp::rel_err(dfz.download(), rz)});
  };
  return cgp::run_bench("nbody", opt, {{"NP", NP}}, GRID_DIMS, reset, run, check);
}
