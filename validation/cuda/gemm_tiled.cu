// gemm_tiled.cu -- CUDA reference port of polybench_c/gemm_tiled.c: C = alpha * A * B + beta * C
// with 32x32 shared-memory tiles of A and B (`#pragma cgp shared A/B tile 32x32`).
// Kernel `gemm_tiled`: 2-D grid, i -> y, j -> x; the kk strip loop and the k loop inside a strip
// are sequential per thread, with the block staging one tile of A and of B per strip.
#include "common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif
#ifndef NK
#define NK 1024
#endif

#if (NI % 32) || (NJ % 32) || (NK % 32)
#error "gemm_tiled.cu: NI, NJ and NK must be multiples of 32"
#endif

static const int GRID_DIMS = 2;
using cgp::TILE;

__global__ void gemm_tiled_kernel(float alpha, float beta, CGP_CONST float* CGP_RESTRICT A,
                                  CGP_CONST float* CGP_RESTRICT B, float* CGP_RESTRICT C) {
  extern __shared__ float smem[];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int i0 = blockIdx.y * by, j0 = blockIdx.x * bx;
  const int sa = cgp::tile_stride(TILE), sb = cgp::COL_TILE_STRIDE;
  float* As = smem;            // As[r][c] = A[i0 + r][kk + c], by x 32
  float* Bs = As + by * sa;    // Bs[r][c] = B[kk + r][j0 + c], 32 x bx
  const int i = i0 + ty, j = j0 + tx;
  const bool in = i < NI && j < NJ;
  float acc = 0.0f;  // the C's register accumulator (as the measured textbook kernel)
  for (int kk = 0; kk < NK; kk += TILE) {
    cgp::stage(As, sa, A, NK, NI, NK, i0, kk, by, TILE);
    cgp::stage(Bs, sb, B, NJ, NK, NJ, kk, j0, TILE, bx);
    __syncthreads();
    if (in)
      for (int k = 0; k < TILE; k++) acc += As[ty * sa + k] * Bs[k * sb + tx];
    __syncthreads();
  }
  if (in) C[i * NJ + j] = alpha * acc + beta * C[i * NJ + j];
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i * NK + k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k * NJ + j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      C[i * NJ + j] = (float)((i * (j + 2)) % NK) / NK;
}

static void reference(float alpha, float beta, const std::vector<float>& A,
                      const std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      C[i * NJ + j] *= beta;
      for (int kk = 0; kk < NK; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          C[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  cgp::require_col_tile(opt.bx);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)NI * NK), B((size_t)NK * NJ), C((size_t)NI * NJ);
  init(A, B, C);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC(C.size());
  const size_t smem = cgp::shared_bytes(
      {{opt.by, cgp::tile_stride(TILE)}, {TILE, cgp::COL_TILE_STRIDE}});
  auto reset = [&] { dA.upload(A); dB.upload(B); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NJ);
    rec.launch("gemm_tiled", [&] {
      gemm_tiled_kernel<<<grid, block, smem>>>(alpha, beta, dA, dB, dC);
    });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, A, B, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("gemm_tiled", opt, {{"NI", NI}, {"NJ", NJ}, {"NK", NK}}, GRID_DIMS,
                        reset, run, check);
}
