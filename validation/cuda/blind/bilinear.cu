// bilinear.cu -- CUDA port of examples/blind/bilinear.c: 2x bilinear upsampling of an H x W
// image into 2H x 2W. Kernel `bilinear` (2-D grid: y -> y, x -> x over the output pixels);
// the guards and the border clamps use the run-time h, w; the strides are the macros W, 2 * W.
#include "../user/user.cuh"

#ifndef H
#define H 4096
#endif
#ifndef W
#define W 4096
#endif

static const int GRID_DIMS = 2;

__global__ void bilinear(int h, int w, CGP_CONST float* CGP_RESTRICT in, float* CGP_RESTRICT out) {
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (y < 2 * h && x < 2 * w) {
    float sy = (y + 0.5f) * 0.5f - 0.5f;
    float sx = (x + 0.5f) * 0.5f - 0.5f;
    float fy = floorf(sy);
    float fx = floorf(sx);
    float wy = sy - fy;
    float wx = sx - fx;
    int y0 = (int)fy;
    int x0 = (int)fx;
    int y1 = y0 + 1;
    int x1 = x0 + 1;
    if (y0 < 0)
      y0 = 0;
    if (x0 < 0)
      x0 = 0;
    if (y1 > h - 1)
      y1 = h - 1;
    if (x1 > w - 1)
      x1 = w - 1;
    float top = (1.0f - wx) * in[y0 * W + x0] + wx * in[y0 * W + x1];
    float bot = (1.0f - wx) * in[y1 * W + x0] + wx * in[y1 * W + x1];
    out[y * (2 * W) + x] = (1.0f - wy) * top + wy * bot;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 8);
  std::vector<float> in((size_t)H * W);
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) in[(size_t)i * W + j] = (float)((i * 3 + j * 7) % 64) / 64.0f;
  cgp::DevBuf<float> din(in.size()), dout((size_t)4 * H * W);
  auto reset = [&] { din.upload(in); dout.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, 2 * H, 2 * W);
    rec.launch("bilinear", [&] { bilinear<<<grid, block>>>(H, W, din, dout); });
  };
  auto check = [&] {
    std::vector<float> ref((size_t)4 * H * W);
    for (int y = 0; y < 2 * H; y++)
      for (int x = 0; x < 2 * W; x++) {
        float sy = (y + 0.5f) * 0.5f - 0.5f, sx = (x + 0.5f) * 0.5f - 0.5f;
        float fy = std::floor(sy), fx = std::floor(sx);
        float wy = sy - fy, wx = sx - fx;
        int y0 = std::max((int)fy, 0), x0 = std::max((int)fx, 0);
        int y1 = std::min((int)fy + 1, H - 1), x1 = std::min((int)fx + 1, W - 1);
        float top = (1.0f - wx) * in[(size_t)y0 * W + x0] + wx * in[(size_t)y0 * W + x1];
        float bot = (1.0f - wx) * in[(size_t)y1 * W + x0] + wx * in[(size_t)y1 * W + x1];
        ref[(size_t)y * (2 * W) + x] = (1.0f - wy) * top + wy * bot;
      }
    return cgp::rel_err(dout.download(), ref);
  };
  return cgp::run_bench("bilinear", opt, {{"H", H}, {"W", W}}, GRID_DIMS, reset, run, check);
}
