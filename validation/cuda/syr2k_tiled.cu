// syr2k_tiled.cu -- CUDA reference port of polybench_c/syr2k_tiled.c:
// C = alpha * A * B^T + alpha * B * A^T + beta * C with 32x32 shared-memory tiles of A and B.
// Kernel `syr2k_tiled`: 2-D grid, i -> y, j -> x; the kk strip loop and the k loop in a strip
// are sequential per thread. Per strip the block stages, for A and for B, the by x 32 tile of
// rows i and the bx x 32 tile of rows j, laid out as in global memory (literal 32x32 tiles).
#include "common.cuh"

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

#if (NI % 32) || (NJ % 32)
#error "syr2k_tiled.cu: NI and NJ must be multiples of 32"
#endif

static const int GRID_DIMS = 2;
using cgp::TILE;

__global__ void syr2k_tiled_kernel(float alpha, float beta, CGP_CONST float* CGP_RESTRICT A,
                                   CGP_CONST float* CGP_RESTRICT B, float* CGP_RESTRICT C) {
  extern __shared__ float smem[];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int i0 = blockIdx.y * by, j0 = blockIdx.x * bx;
  const int s = cgp::tile_stride(TILE);
  float* Ai = smem;          // Ai[r][c] = A[i0 + r][kk + c], by x 32
  float* Bi = Ai + by * s;   // Bi[r][c] = B[i0 + r][kk + c], by x 32
  float* Aj = Bi + by * s;   // Aj[r][c] = A[j0 + r][kk + c], bx x 32
  float* Bj = Aj + bx * s;   // Bj[r][c] = B[j0 + r][kk + c], bx x 32
  const int i = i0 + ty, j = j0 + tx;
  const bool in = i < NI && j < NI;
  float acc = 0.0f;  // the C's register accumulator
  for (int kk = 0; kk < NJ; kk += TILE) {
    cgp::stage(Ai, s, A, NJ, NI, NJ, i0, kk, by, TILE);
    cgp::stage(Bi, s, B, NJ, NI, NJ, i0, kk, by, TILE);
    cgp::stage(Aj, s, A, NJ, NI, NJ, j0, kk, bx, TILE);
    cgp::stage(Bj, s, B, NJ, NI, NJ, j0, kk, bx, TILE);
    __syncthreads();
    if (in)
      for (int k = 0; k < TILE; k++)
        acc += Ai[ty * s + k] * Bj[tx * s + k] + Bi[ty * s + k] * Aj[tx * s + k];
    __syncthreads();
  }
  if (in) C[i * NI + j] = beta * C[i * NI + j] + alpha * acc;
}

static void init(std::vector<float>& A, std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NJ; k++) {
      A[i * NJ + k] = (float)((i * k + 1) % NI) / NI;
      B[i * NJ + k] = (float)((i * (k + 1) + 2) % NJ) / NJ;
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NI; j++)
      C[i * NI + j] = (float)((i * j + 3) % NI) / NI;
}

static void reference(float alpha, float beta, const std::vector<float>& A,
                      const std::vector<float>& B, std::vector<float>& C) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NI; j++) {
      C[i * NI + j] *= beta;
      for (int kk = 0; kk < NJ; kk += 32)
        for (int k = kk; k < kk + 32; k++)
          C[i * NI + j] += alpha * A[i * NJ + k] * B[j * NJ + k] + alpha * B[i * NJ + k] * A[j * NJ + k];
    }
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 32, 32);
  const float alpha = 1.5f, beta = 1.2f;
  std::vector<float> A((size_t)NI * NJ), B((size_t)NI * NJ), C((size_t)NI * NI);
  init(A, B, C);
  cgp::DevBuf<float> dA(A.size()), dB(B.size()), dC(C.size());
  const int s = cgp::tile_stride(TILE);
  const size_t smem = cgp::shared_bytes({{opt.by, s}, {opt.by, s}, {opt.bx, s}, {opt.bx, s}});
  auto reset = [&] { dA.upload(A); dB.upload(B); dC.upload(C); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block2d(opt), grid = cgp::grid2d(opt, NI, NI);
    rec.launch("syr2k_tiled",
               [&] { syr2k_tiled_kernel<<<grid, block, smem>>>(alpha, beta, dA, dB, dC); });
  };
  auto check = [&] {
    std::vector<float> ref = C;
    reference(alpha, beta, A, B, ref);
    return cgp::rel_err(dC.download(), ref);
  };
  return cgp::run_bench("syr2k_tiled", opt, {{"NI", NI}, {"NJ", NJ}}, GRID_DIMS, reset, run,
                        check);
}
