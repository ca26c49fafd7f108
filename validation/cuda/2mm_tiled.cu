// 2mm_tiled.cu -- CUDA reference port of polybench_c/2mm_tiled.c: C = A * B, E = C * D with
// 32x32 shared-memory tiles of both operands of each product (`#pragma cgp shared`).
// Kernels `mm2_k1_tiled` (over C) and `mm2_k2_tiled` (over E): 2-D grids, i -> y, j -> x; the
// kk strip loop and the k loop in a strip are sequential per thread.
#include "common.cuh"

#ifndef NI
#define NI 4096
#endif
#ifndef NJ
#define NJ 4096
#endif
#ifndef NK
#define NK 4096
#endif
#ifndef NL
#define NL 4096
#endif

#if (NI % 32) || (NJ % 32) || (NK % 32) || (NL % 32)
#error "2mm_tiled.cu: NI, NJ, NK and NL must be multiples of 32"
#endif

static const int GRID_DIMS = 2;
using cgp::TILE;

// Z[i][j] = 0; Z[i][j] += X[i][k] * Y[k][j] for k < RED; Z: ROWS x COLS, X: ROWS x RED,
// Y: RED x COLS; one by x 32 tile of X and one 32 x bx tile of Y staged per 32-wide strip.
template <int ROWS, int COLS, int RED>
__global__ void mm_tiled(CGP_CONST float* CGP_RESTRICT X, CGP_CONST float* CGP_RESTRICT Y,
                         float* CGP_RESTRICT Z) {
  extern __shared__ float smem[];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int i0 = blockIdx.y * by, j0 = blockIdx.x * bx;
  const int sx = cgp::tile_stride(TILE), sy = cgp::COL_TILE_STRIDE;
  float* Xs = smem;          // Xs[r][c] = X[i0 + r][kk + c], by x 32
  float* Ys = Xs + by * sx;  // Ys[r][c] = Y[kk + r][j0 + c], 32 x bx
  const int i = i0 + ty, j = j0 + tx;
  const bool in = i < ROWS && j < COLS;
  float z = 0.0f;
  for (int kk = 0; kk < RED; kk += TILE) {
    cgp::stage(Xs, sx, X, RED, ROWS, RED, i0, kk, by, TILE);
    cgp::stage(Ys, sy, Y, COLS, RED, COLS, kk, j0, TILE, bx);
    __syncthreads();
    if (in)
      for (int k = 0; k < TILE; k++) z += Xs[ty * sx + k] * Ys[k * sy + tx];
    __syncthreads();
  }
  if (in) Z[i * COLS + j] = z;
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& D) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i * NK + k] = (float)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k * NJ + j] = (float)((k * (j + 1)) % NJ) / NJ;
  for (int j = 0; j < NJ; j++)
    for (int l = 0; l < NL; l++)
      D[j * NL + l] = (float)((j * (l + 3) + 1) % NL) / NL;
}

static void reference(const std::vector<float>& A, const std::vector<float>& B,
                      std::vector<float>& C, const std::vector<float>& D,
                      std::vector<float>& E) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++) {
      C[i * NJ + j] = 0.0f;
      for (int kk = 0; kk < NK; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          C[i * NJ + j] += A[i * NK + k] * B[k * NJ + j];
    }
  }
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NL; j++) {
      E[i * NL + j] = 0.0f;
      for (int kk = 0; kk < NJ; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          E[i * NL + j] += C[i * NJ + k] * D[k * NL + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  cgp::require_col_tile(opt.bx);
  std::vector<float> A((size_t)NI * NK), B((size_t)NK * NJ), D((size_t)NJ * NL);
  init(A, B, D);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC((size_t)NI * NJ), dD(D.size()),
      dE((size_t)NI * NL);
  const size_t smem = cgp::shared_bytes(
      {{opt.by, cgp::tile_stride(TILE)}, {TILE, cgp::COL_TILE_STRIDE}});
  auto reset = [&] { dA.upload(A); dB.upload(B); dD.upload(D); dC.zero(); dE.zero(); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt);
    dim3 g1 = cgp::grid2d(opt, NI, NJ), g2 = cgp::grid2d(opt, NI, NL);
    rec.launch("mm2_k1_tiled", [&] { mm_tiled<NI, NJ, NK><<<g1, block, smem>>>(dA, dB, dC); });
    rec.launch("mm2_k2_tiled", [&] { mm_tiled<NI, NL, NJ><<<g2, block, smem>>>(dC, dD, dE); });
  };
  auto check = [&] {
    std::vector<float> C((size_t)NI * NJ), E((size_t)NI * NL);
    reference(A, B, C, D, E);
    return std::max(cgp::rel_err(dC.download(), C), cgp::rel_err(dE.download(), E));
  };
  return cgp::run_bench("2mm_tiled", opt, {{"NI", NI}, {"NJ", NJ}, {"NK", NK}, {"NL", NL}},
                        GRID_DIMS, reset, run, check);
}
