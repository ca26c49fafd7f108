// particles.cu -- CUDA port of examples/user/particles.c: one position step x += v * dt over
// NP particles as a structure of arrays (kernel `step_soa`) and as an array of structures of
// 6 floats (`step_aos`), one thread per particle (1-D grid). dt is the C file's constant.
#include "user.cuh"

// 1 << 22, as the C file
#ifndef NP
#define NP 4194304
#endif

static const int GRID_DIMS = 1;

struct part { float x, y, z, vx, vy, vz; };

__global__ void step_soa(int np, float* CGP_RESTRICT px, float* CGP_RESTRICT py,
                         float* CGP_RESTRICT pz, CGP_CONST float* CGP_RESTRICT vx,
                         CGP_CONST float* CGP_RESTRICT vy, CGP_CONST float* CGP_RESTRICT vz) {
  const float dt = 0.01f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < np) {
    px[i] += vx[i] * dt;
    py[i] += vy[i] * dt;
    pz[i] += vz[i] * dt;
  }
}

__global__ void step_aos(int np, part* CGP_RESTRICT q) {
  const float dt = 0.01f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < np) {
    q[i].x += q[i].vx * dt;
    q[i].y += q[i].vy * dt;
    q[i].z += q[i].vz * dt;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<float> px(NP), py(NP), pz(NP), vx(NP, 1.0f), vy(NP, -1.0f), vz(NP, 0.5f);
  std::vector<part> q(NP);
  for (int i = 0; i < NP; i++) {
    px[i] = (float)(i % 31);
    py[i] = (float)(i % 37);
    pz[i] = (float)(i % 41);
    q[i] = {px[i], py[i], pz[i], vx[i], vy[i], vz[i]};
  }
  cgp::DevBuf<float> dpx(NP), dpy(NP), dpz(NP), dvx(NP), dvy(NP), dvz(NP);
  cgp::DevBuf<part> dq(NP);
  auto reset = [&] {
    dpx.upload(px); dpy.upload(py); dpz.upload(pz);
    dvx.upload(vx); dvy.upload(vy); dvz.upload(vz); dq.upload(q);
  };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt), grid = cgp::grid1d(opt, NP);
    rec.launch("step_soa", [&] { step_soa<<<grid, block>>>(NP, dpx, dpy, dpz, dvx, dvy, dvz); });
    rec.launch("step_aos", [&] { step_aos<<<grid, block>>>(NP, dq); });
  };
  auto check = [&] {
    std::vector<float> rx(NP), ry(NP), rz(NP), qx(NP), qy(NP), qz(NP);
    for (int i = 0; i < NP; i++) {
      rx[i] = px[i] + vx[i] * 0.01f;
      ry[i] = py[i] + vy[i] * 0.01f;
      rz[i] = pz[i] + vz[i] * 0.01f;
    }
    std::vector<part> dqh = dq.download();
    for (int i = 0; i < NP; i++) {
      qx[i] = dqh[i].x;
      qy[i] = dqh[i].y;
      qz[i] = dqh[i].z;
    }
    return std::max({cgp::rel_err(dpx.download(), rx), cgp::rel_err(dpy.download(), ry),
                     cgp::rel_err(dpz.download(), rz), cgp::rel_err(qx, rx),
                     cgp::rel_err(qy, ry), cgp::rel_err(qz, rz)});
  };
  return cgp::run_bench("particles", opt, {{"NP", NP}}, GRID_DIMS, reset, run, check);
}
