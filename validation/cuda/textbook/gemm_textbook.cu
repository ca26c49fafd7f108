// gemm_textbook.cu -- the textbook 32x32 shared-memory GEMM that `cgpredict advise` proposes for
// polybench_c/gemm.c (C = alpha * A * B + beta * C) and that the shared measurements time as
// `smem32` (/work/shared/measurements/README.md, h100-gemm-tiling.jsonl). The tile is the block:
// a 32x32 block, each thread copies exactly one element of A's tile and one of B's tile a k tile
// (its tile row and column are threadIdx.y and threadIdx.x: no staging loop, no index division),
// no bounds checks (the sizes are multiples of 32), __syncthreads() around 32 multiply-adds from
// shared memory, the sum in a register and C written once. Compare gemm_tiled.cu: the same tiles
// copied by the generic cgp::stage loop (any block shape, bounds-checked).
// Its sm_90 SASS is the oracle of the advisor's staging code (cgpredict/memory/staging_code.py,
// "block-shaped tiles"): python validation/sass_counts.py textbook/gemm_textbook --port restrict
#include "../common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif
#ifndef NK
#define NK 1024
#endif

// Sizes that are not multiples of the tile: the same kernel with the textbook bounds checks (a
// tile element outside the matrix is 0; C written only inside it), gemm_textbook_kernel<1>.
static const bool CHECK = (NI % 32) || (NJ % 32) || (NK % 32);

static const int GRID_DIMS = 2;
using cgp::TILE;

template <int kCheck>
__global__ void gemm_textbook_kernel(int ni, int nj, int nk, float alpha, float beta,
                                     CGP_CONST float* CGP_RESTRICT A,
                                     CGP_CONST float* CGP_RESTRICT B, float* CGP_RESTRICT C) {
  __shared__ float As[TILE][TILE];  // As[ty][tx] = A[i][kk + tx]
  __shared__ float Bs[TILE][TILE];  // Bs[ty][tx] = B[kk + ty][j]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.y * TILE + ty, j = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int kk = 0; kk < nk; kk += TILE) {
    if (kCheck) {
      As[ty][tx] = (i < ni && kk + tx < nk) ? A[i * NK + kk + tx] : 0.0f;
      Bs[ty][tx] = (kk + ty < nk && j < nj) ? B[(kk + ty) * NJ + j] : 0.0f;
    } else {
      As[ty][tx] = A[i * NK + kk + tx];
      Bs[ty][tx] = B[(kk + ty) * NJ + j];
    }
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (!kCheck || (i < ni && j < nj)) C[i * NJ + j] = alpha * acc + beta * C[i * NJ + j];
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
      for (int k = 0; k < NK; k++) C[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  if (opt.bx != TILE || opt.by != TILE) {
    std::fprintf(stderr, "gemm_textbook: the block is the %dx%d tile (got %dx%d)\n", TILE, TILE,
                 opt.bx, opt.by);
    return 1;
  }
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)NI * NK), B((size_t)NK * NJ), C((size_t)NI * NJ);
  init(A, B, C);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC(C.size());
  auto reset = [&] { dA.upload(A); dB.upload(B); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NJ);
    if (CHECK)
      rec.launch("gemm_textbook_checked", [&] {
        gemm_textbook_kernel<1><<<grid, block>>>(NI, NJ, NK, alpha, beta, dA, dB, dC);
      });
    else
      rec.launch("gemm_textbook", [&] {
        gemm_textbook_kernel<0><<<grid, block>>>(NI, NJ, NK, alpha, beta, dA, dB, dC);
      });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, A, B, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("gemm_textbook", opt, {{"NI", NI}, {"NJ", NJ}, {"NK", NK}}, GRID_DIMS,
                        reset, run, check);
}
