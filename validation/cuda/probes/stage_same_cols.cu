// Probe of eq. (S2) (cgpredict/memory/staging_code.py): two 32 x bx tiles (X[k][j]) of one shape
// staged a strip (cgp::stage): run-time columns, one trip count. Not a port: compiled only for
// its SASS (python validation/sass_counts.py probes/stage_same_cols --unroll --keep DIR).
#include "../common.cuh"
#define NI 1024
#define NJ 1024
using cgp::TILE;
__global__ void cols_kernel(CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT B,
                            float* CGP_RESTRICT C) {
  extern __shared__ float smem[];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int i0 = blockIdx.y * by, j0 = blockIdx.x * bx;
  const int sb = cgp::COL_TILE_STRIDE;
  float* As = smem; float* Bs = As + TILE * sb;
  const int i = i0 + ty, j = j0 + tx;
  float acc = 0.0f;
  for (int kk = 0; kk < NJ; kk += TILE) {
    cgp::stage(As, sb, A, NJ, NI, NJ, kk, j0, TILE, bx);
    cgp::stage(Bs, sb, B, NJ, NI, NJ, kk, j0, TILE, bx);
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += As[k * sb + tx] * Bs[k * sb + tx];
    __syncthreads();
  }
  if (i < NI && j < NI) C[i * NI + j] = acc;
}
// The launch the SASS tools look for (sass_counts.kernels_by_launch): not run.
// rec.launch("cols", [&] { cols_kernel<<<grid, block, smem>>>(...); });
