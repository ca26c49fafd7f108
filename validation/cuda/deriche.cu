// deriche.cu -- CUDA reference port of polybench_c/deriche.c: Deriche recursive edge filter.
// Kernels: `deriche_hfwd`, `deriche_hbwd` (1-D grids over i; j sequential per thread),
// `deriche_hsum` (2-D grid, i -> y, j -> x), `deriche_vfwd`, `deriche_vbwd` (1-D grids over j;
// i sequential per thread), `deriche_vsum` (2-D grid). The filter coefficients are computed on
// the host exactly as in the C file and passed as kernel arguments.
// Sizes: loop bounds and guards are run-time kernel parameters, array strides compile-time
// macros, as the PolyBench/GPU ports do (common.cuh, "Sizes").
#include "common.cuh"

#ifndef W
#define W 1024
#endif
#ifndef H
#define H 1024
#endif

static const int GRID_DIMS = 1;

struct Coef {
  float a1, a2, a3, a4, a5, a6, a7, a8, b1, b2, c1, c2;
};

static Coef coefficients() {
  Coef c;
  const float alpha = 0.25f;
  float k = (1.0f - expf(-alpha)) * (1.0f - expf(-alpha)) / (1.0f + 2.0f * alpha * expf(-alpha) - expf(2.0f * alpha));
  c.a1 = k;
  c.a5 = k;
  c.a2 = k * expf(-alpha) * (alpha - 1.0f);
  c.a6 = c.a2;
  c.a3 = k * expf(-alpha) * (alpha + 1.0f);
  c.a7 = c.a3;
  c.a4 = -k * expf(-2.0f * alpha);
  c.a8 = c.a4;
  c.b1 = powf(2.0f, -alpha);
  c.b2 = -expf(-2.0f * alpha);
  c.c1 = 1.0f;
  c.c2 = 1.0f;
  return c;
}

__global__ void deriche_hfwd(int w, int h, Coef c, CGP_CONST float* CGP_RESTRICT imgIn, float* CGP_RESTRICT Y1) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < w) {
    float ym1 = 0.0f;
    float ym2 = 0.0f;
    float xm1 = 0.0f;
    for (int j = 0; j < h; j++) {
      Y1[i * H + j] = c.a1 * imgIn[i * H + j] + c.a2 * xm1 + c.b1 * ym1 + c.b2 * ym2;
      xm1 = imgIn[i * H + j];
      ym2 = ym1;
      ym1 = Y1[i * H + j];
    }
  }
}

__global__ void deriche_hbwd(int w, int h, Coef c, CGP_CONST float* CGP_RESTRICT imgIn, float* CGP_RESTRICT Y2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < w) {
    float yp1 = 0.0f;
    float yp2 = 0.0f;
    float xp1 = 0.0f;
    float xp2 = 0.0f;
    for (int j = h - 1; j >= 0; j--) {
      Y2[i * H + j] = c.a3 * xp1 + c.a4 * xp2 + c.b1 * yp1 + c.b2 * yp2;
      xp2 = xp1;
      xp1 = imgIn[i * H + j];
      yp2 = yp1;
      yp1 = Y2[i * H + j];
    }
  }
}

__global__ void deriche_sum(int w, int h, float cc, CGP_CONST float* CGP_RESTRICT Y1,
                            CGP_CONST float* CGP_RESTRICT Y2,
                            float* CGP_RESTRICT imgOut) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < w && j < h) {
    imgOut[i * H + j] = cc * (Y1[i * H + j] + Y2[i * H + j]);
  }
}

__global__ void deriche_vfwd(int w, int h, Coef c, CGP_CONST float* CGP_RESTRICT imgOut, float* CGP_RESTRICT Y1) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < h) {
    float tm1 = 0.0f;
    float ym1 = 0.0f;
    float ym2 = 0.0f;
    for (int i = 0; i < w; i++) {
      Y1[i * H + j] = c.a5 * imgOut[i * H + j] + c.a6 * tm1 + c.b1 * ym1 + c.b2 * ym2;
      tm1 = imgOut[i * H + j];
      ym2 = ym1;
      ym1 = Y1[i * H + j];
    }
  }
}

__global__ void deriche_vbwd(int w, int h, Coef c, CGP_CONST float* CGP_RESTRICT imgOut, float* CGP_RESTRICT Y2) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < h) {
    float tp1 = 0.0f;
    float tp2 = 0.0f;
    float yp1 = 0.0f;
    float yp2 = 0.0f;
    for (int i = w - 1; i >= 0; i--) {
      Y2[i * H + j] = c.a7 * tp1 + c.a8 * tp2 + c.b1 * yp1 + c.b2 * yp2;
      tp2 = tp1;
      tp1 = imgOut[i * H + j];
      yp2 = yp1;
      yp1 = Y2[i * H + j];
    }
  }
}

static void init(std::vector<float>& imgIn) {
  for (int i = 0; i < W; i++)
    for (int j = 0; j < H; j++)
      imgIn[i * H + j] = (float)((313 * i + 991 * j) % 65536) / 65535.0f;
}

static void reference(const Coef& c, const std::vector<float>& imgIn, std::vector<float>& imgOut,
                      std::vector<float>& Y1, std::vector<float>& Y2) {
  for (int i = 0; i < W; i++) {
    float ym1 = 0.0f;
    float ym2 = 0.0f;
    float xm1 = 0.0f;
    for (int j = 0; j < H; j++) {
      Y1[i * H + j] = c.a1 * imgIn[i * H + j] + c.a2 * xm1 + c.b1 * ym1 + c.b2 * ym2;
      xm1 = imgIn[i * H + j];
      ym2 = ym1;
      ym1 = Y1[i * H + j];
    }
  }
  for (int i = 0; i < W; i++) {
    float yp1 = 0.0f;
    float yp2 = 0.0f;
    float xp1 = 0.0f;
    float xp2 = 0.0f;
    for (int j = H - 1; j >= 0; j--) {
      Y2[i * H + j] = c.a3 * xp1 + c.a4 * xp2 + c.b1 * yp1 + c.b2 * yp2;
      xp2 = xp1;
      xp1 = imgIn[i * H + j];
      yp2 = yp1;
      yp1 = Y2[i * H + j];
    }
  }
  for (int i = 0; i < W; i++) {
    for (int j = 0; j < H; j++) {
      imgOut[i * H + j] = c.c1 * (Y1[i * H + j] + Y2[i * H + j]);
    }
  }
  for (int j = 0; j < H; j++) {
    float tm1 = 0.0f;
    float ym1 = 0.0f;
    float ym2 = 0.0f;
    for (int i = 0; i < W; i++) {
      Y1[i * H + j] = c.a5 * imgOut[i * H + j] + c.a6 * tm1 + c.b1 * ym1 + c.b2 * ym2;
      tm1 = imgOut[i * H + j];
      ym2 = ym1;
      ym1 = Y1[i * H + j];
    }
  }
  for (int j = 0; j < H; j++) {
    float tp1 = 0.0f;
    float tp2 = 0.0f;
    float yp1 = 0.0f;
    float yp2 = 0.0f;
    for (int i = W - 1; i >= 0; i--) {
      Y2[i * H + j] = c.a7 * tp1 + c.a8 * tp2 + c.b1 * yp1 + c.b2 * yp2;
      tp2 = tp1;
      tp1 = imgOut[i * H + j];
      yp2 = yp1;
      yp1 = Y2[i * H + j];
    }
  }
  for (int i = 0; i < W; i++) {
    for (int j = 0; j < H; j++) {
      imgOut[i * H + j] = c.c2 * (Y1[i * H + j] + Y2[i * H + j]);
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  const Coef c = coefficients();
  std::vector<float> imgIn((size_t)W * H);
  init(imgIn);
  cgp::DevBuf<float> dIn(imgIn.size()), dOut(imgIn.size()), dY1(imgIn.size()), dY2(imgIn.size());
  auto reset = [&] { dIn.upload(imgIn); dOut.zero(); dY1.zero(); dY2.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 b1 = cgp::block1d(opt), b2 = cgp::block2d(opt);
    dim3 gw = cgp::grid1d(opt, W), gh = cgp::grid1d(opt, H), g2 = cgp::grid2d(opt, W, H);
    rec.launch("deriche_hfwd", [&] { deriche_hfwd<<<gw, b1>>>(W, H, c, dIn, dY1); });
    rec.launch("deriche_hbwd", [&] { deriche_hbwd<<<gw, b1>>>(W, H, c, dIn, dY2); });
    rec.launch("deriche_hsum", [&] { deriche_sum<<<g2, b2>>>(W, H, c.c1, dY1, dY2, dOut); });
    rec.launch("deriche_vfwd", [&] { deriche_vfwd<<<gh, b1>>>(W, H, c, dOut, dY1); });
    rec.launch("deriche_vbwd", [&] { deriche_vbwd<<<gh, b1>>>(W, H, c, dOut, dY2); });
    rec.launch("deriche_vsum", [&] { deriche_sum<<<g2, b2>>>(W, H, c.c2, dY1, dY2, dOut); });
  };
  auto check = [&] {
    std::vector<float> out(imgIn.size()), y1(imgIn.size()), y2(imgIn.size());
    reference(c, imgIn, out, y1, y2);
    return std::max({cgp::rel_err(dOut.download(), out), cgp::rel_err(dY1.download(), y1),
                     cgp::rel_err(dY2.download(), y2)});
  };
  return cgp::run_bench("deriche", opt, {{"W", W}, {"H", H}}, GRID_DIMS, reset, run, check);
}
