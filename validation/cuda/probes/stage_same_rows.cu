// Probe of eq. (S2) (cgpredict/memory/staging_code.py): three by x 32 tiles of one shape staged a
// strip (cgp::stage), so their loops share one trip count. Not a port: compiled only for its SASS
// (python validation/sass_counts.py probes/stage_same_rows --unroll --keep DIR).
#include "../common.cuh"
#define NI 1024
#define NJ 1024
using cgp::TILE;
__global__ void three_kernel(CGP_CONST float* CGP_RESTRICT A, CGP_CONST float* CGP_RESTRICT B,
                             CGP_CONST float* CGP_RESTRICT D, float* CGP_RESTRICT C) {
  extern __shared__ float smem[];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int i0 = blockIdx.y * by, j0 = blockIdx.x * bx;
  const int s = cgp::tile_stride(TILE);
  float* Ai = smem; float* Bi = Ai + by * s; float* Di = Bi + by * s;
  const int i = i0 + ty, j = j0 + tx;
  float acc = 0.0f;
  for (int kk = 0; kk < NJ; kk += TILE) {
    cgp::stage(Ai, s, A, NJ, NI, NJ, i0, kk, by, TILE);
    cgp::stage(Bi, s, B, NJ, NI, NJ, i0, kk, by, TILE);
    cgp::stage(Di, s, D, NJ, NI, NJ, i0, kk, by, TILE);
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += Ai[ty * s + k] * Bi[ty * s + k] * Di[ty*s+k] + (float)tx;
    __syncthreads();
  }
  if (i < NI && j < NI) C[i * NI + j] = acc;
}
// The launch the SASS tools look for (sass_counts.kernels_by_launch): not run.
// rec.launch("three", [&] { three_kernel<<<grid, block, smem>>>(...); });
