// l1_wavefronts.cu -- cycles an SM's L1 takes per warp load of an L1-resident buffer, by the
// lanes' address pattern (t2, round 13: eq. (B2w), data-stage wavefronts vs L1 lines).
// 132 blocks x 1024 threads (one block = 32 warps an SM), each warp 4096 loads; warp 0 of each
// block times its loop with clock64. Prints one CSV line per pattern:
// pattern,bytes,cycles_per_warp_load_per_sm (block's loop cycles / (loads x 32 warps)), sink
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>

#define ITERS 4096
#define ELEMS 8192  // elements read: 32 KiB of floats, 64 KiB of doubles, L1-resident

__device__ __forceinline__ int lane_off(int kind, int t) {
  switch (kind) {
    case 0: return t;                    // aligned 32 floats: 1 line, 1 wavefront
    case 1: return t + 1;                // unaligned by 4 B: 2 lines, 1 wavefront (B2w)
    case 2: return 2 * t;                // stride 2: 2 lines, 2 wavefronts
    case 3: return 3 * t;                // stride 3: 3 lines, 1 wavefront
    case 4: return 32 * t;               // 32 rows of 128 B: 32 lines, 32 wavefronts
    case 5: return (int)(((unsigned)t * 2654435761u) >> 22) & 1023;  // gather: random words
    case 6: return 0;                    // broadcast
    case 7: return 4 * t + 1;            // stride 4 unaligned: 4-5 lines, 4 wavefronts
    // conflict-free (each lane its own bank) over 4, 8, 16, 32 lines: wavefronts 1 by (B2w)
    case 8: return (t >> 3) * 264 + (t & 7);   // 4 lines of 8 consecutive words
    case 9: return (t >> 2) * 132 + (t & 3);   // 8 lines of 4
    case 10: return (t >> 1) * 66 + (t & 1);   // 16 lines of 2
    case 11: return 33 * t;                    // 32 lines, pitch 33 words (a diagonal)
    default: return t;
  }
}

template <typename T>
__global__ void probe(const T* buf, int kind, int step, long long* cyc, float* sink) {
  int t = threadIdx.x & 31;
  int off = lane_off(kind, t);
  float s = 0.f;
  // warm the L1: every thread of the block touches the buffer once
  for (int i = threadIdx.x; i < ELEMS; i += blockDim.x) s += (float)buf[i];
  __syncthreads();
  long long c0 = clock64();
#pragma unroll 8
  for (int it = 0; it < ITERS; it++) {
    int idx = ((it * step) & 0x1C00) + off;  // step = 1024 at run time: nothing to hoist
    s += (float)buf[idx];
  }
  __syncthreads();
  long long c1 = clock64();
  if (threadIdx.x == 0) cyc[blockIdx.x] = c1 - c0;
  if (s == 12345.678f) sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <typename T>
double run(int kind, T* dbuf, long long* dcyc, float* dsink, int blocks) {
  probe<T><<<blocks, 1024>>>(dbuf, kind, 1024, dcyc, dsink);  // warm-up launch
  probe<T><<<blocks, 1024>>>(dbuf, kind, 1024, dcyc, dsink);
  cudaDeviceSynchronize();
  std::vector<long long> c(blocks);
  cudaMemcpy(c.data(), dcyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost);
  std::sort(c.begin(), c.end());
  return (double)c[blocks / 2] / ((double)ITERS * 32.0);  // median block
}

int main() {
  int blocks = 0;
  cudaDeviceGetAttribute(&blocks, cudaDevAttrMultiProcessorCount, 0);
  float* fbuf; double* dbuf; long long* dcyc; float* dsink;
  cudaMalloc(&fbuf, ELEMS * 4); cudaMalloc(&dbuf, ELEMS * 8);
  cudaMemset(fbuf, 0, ELEMS * 4); cudaMemset(dbuf, 0, ELEMS * 8);
  cudaMalloc(&dcyc, blocks * sizeof(long long));
  cudaMalloc(&dsink, (size_t)blocks * 1024 * sizeof(float));
  const char* names[] = {"aligned", "unaligned1", "stride2", "stride3", "rows128B", "gather",
                         "broadcast", "stride4_unaligned",
                         "lines4_nobank", "lines8_nobank", "lines16_nobank", "lines32_nobank"};
  printf("pattern,bytes,cycles_per_warp_load_per_sm\n");
  for (int k = 0; k < 12; k++) printf("%s,4,%.4f\n", names[k], run<float>(k, fbuf, dcyc, dsink, blocks));
  for (int k : {0, 1, 6}) printf("%s,8,%.4f\n", names[k], run<double>(k, dbuf, dcyc, dsink, blocks));
  cudaError_t e = cudaGetLastError();
  printf("# sms %d, error %s\n", blocks, cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
