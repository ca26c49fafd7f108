// dram_inflight.cu -- t6 (round 13, eq. (Q1)): one warp's K independent DRAM loads in flight, a trip at a time.
// Build: nvcc -O3 -arch=sm_90 -o dram_inflight dram_inflight.cu; run: ./dram_inflight (about 5 s, one line a config).
// Not yet run on a GPU (the 2026-11-27 round-13 request was refused); it measures dram_inflight_gap_cycles.
// Each thread runs R/K trips; a trip issues K loads (rows t*K+u, u < K) then adds them; the
// next trip's address depends on the sum (min(bits(acc),0) = 0 on zero data), so trips are
// serial and a trip costs the wait for the last of its K loads. Event-timed, 5 launches after
// a warm one, alternating two 256 MiB halves of a 512 MiB buffer (no L2 reuse).
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

template <int K>
__global__ void trips(const float* A, float* out, int ntrips, long rowstride, long warpregion) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int w = j >> 5, lane = j & 31;
  const float* p = A + (warpregion ? (long)w * warpregion + lane : (long)j);
  float acc = 0.0f;
  for (int t = 0; t < ntrips; t++) {
    float v[K];
#pragma unroll
    for (int u = 0; u < K; u++) v[u] = p[u * rowstride];
#pragma unroll
    for (int u = 0; u < K; u++) acc += v[u];
    p += K * rowstride + min(__float_as_int(acc), 0);
  }
  out[j] = acc;
}

template <int K>
int run(const char* name, float* A, float* out, int blocks, int threads, int rows, long rowstride, long warpregion) {
  int ntrips = rows / K;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const long half = 64L << 20;  // floats: 256 MiB
  trips<K><<<blocks, threads>>>(A, out, ntrips, rowstride, warpregion);
  CK(cudaDeviceSynchronize());
  float best = 1e30f, sum = 0.0f;
  for (int r = 0; r < 5; r++) {
    const float* base = A + ((r + 1) & 1) * half;
    cudaEventRecord(a);
    trips<K><<<blocks, threads>>>(base, out, ntrips, rowstride, warpregion);
    cudaEventRecord(b); CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); best = ms < best ? ms : best; sum += ms;
  }
  double ns_trip = best * 1e6 / ntrips;
  printf("%-10s K=%2d blocks=%3d threads=%4d rows=%6d stride_B=%6ld min_ms %.4f mean_ms %.4f ns_trip %.2f cyc_trip@1980 %.1f ns_per_load %.2f\n",
         name, K, blocks, threads, rows, rowstride * 4, best, sum / 5, ns_trip, ns_trip * 1.98, ns_trip / K);
  return 0;
}

template <int K>
int layouts(float* A, float* out) {
  const int R = 16384;
  run<K>("colsum", A, out, 8, 256, R, 2048, 0);          // the blind colsum: rows 8 KB apart
  run<K>("rows+128", A, out, 8, 256, R, 2048 + 32, 0);   // rows 8320 B apart (not a power of 2)
  run<K>("1warp", A, out, 1, 32, R, 2048, 0);            // one warp on the GPU, rows 8 KB apart
  run<K>("64warps", A, out, 64, 32, R, 2048, 0);         // 64 SMs of one warp
  run<K>("ownlines", A, out, 8, 256, R, 32, (long)R * 32); // each warp its own lines, 128 B apart
  return 0;
}

int main() {
  float *A, *out;
  CK(cudaMalloc(&A, 512L << 20)); CK(cudaMemset(A, 0, 512L << 20));
  CK(cudaMalloc(&out, 1 << 20));
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  printf("device clock attr %d kHz\n", clk);
  layouts<1>(A, out); layouts<2>(A, out); layouts<3>(A, out); layouts<4>(A, out);
  layouts<6>(A, out); layouts<8>(A, out); layouts<16>(A, out); layouts<32>(A, out);
  CK(cudaGetLastError());
  printf("err no error\n");
  return 0;
}
