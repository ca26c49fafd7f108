// Sustained L1 line rate of one SM (issue 24: the floor of eq. (22m), device key
// [timing] l1_line_cycles, models/cgpredict_model.py lsu_cycles).
// Every warp of W warps per SM issues independent loads that hit an 8 KB L1-resident buffer:
//   line:      lane l reads word 32 x line + l: one 128-B line (4 sectors) a warp instruction;
//   broadcast: every lane reads word 32 x line: one sector a warp instruction;
//   gemm:      one broadcast, one line, alternately (a naive GEMM's A[i][k], B[k][j] with the
//              loads of a __restrict__ trip in flight together);
//   two:       lane l reads word 32 x line + l + 16: two lines (4 sectors) a warp instruction;
//   gemm_port: the restrict GEMM port's k step: a broadcast of word k of the warp's own row
//              line (A[i][k], i = the warp) and a line of row k of a 4096-word matrix
//              (B[k][j]: lines 16 KB apart, kLines of them), alternately, summed independently;
//   gemm_chain: the same loads into one dependent FFMA chain (acc += a x b), as the port's SASS;
//   rows:      lane l reads word 32 x (line + l): 32 lines of one sector each (a row walk).
// and stores (eq. (B2s): the write-through look-up l1_store_line_cycles, and the store data's
// way out to the L2, dd_store_cycles), each block into a region of its own:
//   store_line:       lane l writes word 32 x line + l: one line a warp instruction;
//   store_rows:       lane l writes word 32 x (line + l): 32 lines of one sector each;
//   store_rows_loads: a rows load (an L1 hit) and a rows store, alternately, independent.
//   store_rows_own:   lane l of warp w writes word (8 t + u) mod 32 of its own row 32 w + l
//                     (a row a line): 32 lines a store as in store_rows, but no two warps or
//                     lanes write one word and successive stores walk one sector word by word
//                     (the plain Deriche row walks' Y1/Y2 stores; store_rows writes word 0 of
//                     lines every warp of the block also writes, 31 of a store's 32 lines the
//                     store before wrote too);
//   store_rows_own_loads: a load of the same word of its own row of buf (an L1 hit) and that
//                     store, alternately (Deriche's backward pass, LDG imgIn and STG Y2).
// The stores run on every SM (sms x 1..8 blocks) and on 4 SMs only (4 blocks of 8 warps, the
// plain Deriche row walks' grid): the L2's share of the store path binds only in the first.
// line/broadcast against rows separate the two device fields (eq. (B2r)): a request of one
// line costs l1_request_cycles if that exceeds l1_line_cycles, and rows' cycles_per_load / 32
// is l1_line_cycles (the restrict GEMM-like ports' times imply about 1.25-1.3 cycles a
// one-line request; ncu's plain row walks about 0.89 cycles a line).
// Each block times its loop with clock64 between two barriers; all blocks are resident at
// once (grid = SMs x blocks per SM), so warp instructions per SM / block cycles is the SM's
// rate: lines_per_cycle; cycles_per_line = its inverse, the figure l1_line_cycles takes.
// Prints one JSON object. Usage: l1_lines [trips=4096]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 2; } } while (0)

constexpr int kUnroll = 8;      // independent loads a trip
constexpr int kLines = 64;      // footprint: 64 lines of 128 B = 8 KB, far inside the L1
constexpr int kSlack = 40;      // lines past the footprint that two and rows reach (13 KB)
constexpr int kPortRow = 4096;  // gemm_port/gemm_chain: B's row, words (16 KB, NJ = 4096)
constexpr int kPortWords = kLines * kPortRow + 64 * 32;  // B's kLines rows, then A's 64 rows
constexpr int kOwnRows = 256;   // the own-row stores: a row (one line) a thread of a block

// mode 0: line, 1: broadcast, 2: gemm (even loads broadcast, odd loads a line), 3: two,
// 4: rows, 5: gemm_port, 6: gemm_chain (buf holds kPortWords words for 5 and 6)
template <int MODE>
__global__ void lines(const float* __restrict__ buf, int trips, float* out,
                      long long* cycles) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  float acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = 0.0f;
  __syncthreads();
  long long t0 = clock64();
  for (int t = 0; t < trips; ++t) {
    // the trip's first line: warps and trips walk the footprint in steps of kUnroll lines
    const float* p = buf + (((t + warp) * kUnroll) % kLines) * 32;
    if (MODE >= 5) {  // k = the trip's first k step; A's row: the warp's own line
      const int k = ((t + warp) * (kUnroll / 2)) % kLines;
      const float* a = buf + kLines * kPortRow + (warp % 64) * 32;
#pragma unroll
      for (int u = 0; u < kUnroll / 2; ++u) {
        const float av = a[(k + u) & 31], bv = buf[(k + u) * kPortRow + lane];
        if (MODE == 6) acc[0] += av * bv;
        else { acc[2 * u] += av; acc[2 * u + 1] += bv; }
      }
    } else {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const bool bcast = MODE == 1 || (MODE == 2 && (u & 1) == 0);
        const int word = MODE == 3 ? lane + 16 : MODE == 4 ? 32 * lane : bcast ? 0 : lane;
        acc[u] += p[u * 32 + word];
      }
    }
  }
  __syncthreads();
  long long t1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) s += acc[u];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps every load live
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// mode 0: store_line, 1: store_rows, 2: store_rows_loads (loads from buf, stores to dst),
// 3: store_rows_own, 4: store_rows_own_loads
template <int MODE>
__global__ void stores(const float* __restrict__ buf, float* dst, int trips, float* out,
                       long long* cycles) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const bool own = MODE >= 3;
  float* mine = dst + (size_t)blockIdx.x * (own ? kOwnRows : kLines + kSlack) * 32;
  float acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = 0.0f;
  __syncthreads();
  long long t0 = clock64();
  for (int t = 0; t < trips; ++t) {
    const int line = ((t + warp) * kUnroll) % kLines;
    const float v = (float)t;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (own) {  // its own row, word by word
        const int at = (warp * 32 + lane) * 32 + ((t * kUnroll + u) & 31);
        if (MODE == 4) acc[u] += buf[at];
        mine[at] = v;
        continue;
      }
      const int word = MODE == 0 ? lane : 32 * lane;
      if (MODE == 2) acc[u] += buf[(line + u) * 32 + word];
      mine[(line + u) * 32 + word] = v;
    }
  }
  __syncthreads();
  long long t1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) s += acc[u];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// The slowest block's cycles of the fastest of 5 runs after a warm-up (kernel launcher f).
template <class F>
static double best_cycles(F f, int grid, long long* cyc) {
  double best = 1e300;
  for (int r = 0; r < 6; ++r) {
    f();
    if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return -1;
    std::vector<long long> c(grid);
    cudaMemcpy(c.data(), cyc, sizeof(long long) * grid, cudaMemcpyDeviceToHost);
    long long worst = 0;
    for (long long v : c) worst = v > worst ? v : worst;
    if (r > 0 && worst < best) best = (double)worst;
  }
  return best;
}

template <int MODE>
static int run_stores(const char* name, const float* buf, float* dst, int trips, int sms) {
  const int threads = 256;
  printf(", \"%s\": [", name);
  const int grids[5][2] = {{4, 4}, {sms, 1}, {sms, 2}, {sms, 4}, {sms, 8}};  // {SMs, blocks}
  for (int g = 0; g < 5; ++g) {
    const int used = grids[g][0], bps = used == 4 ? 1 : grids[g][1];
    const int grid = used * bps;
    float* out; long long* cyc;
    CK(cudaMalloc(&out, sizeof(float) * grid * threads));
    CK(cudaMalloc(&cyc, sizeof(long long) * grid));
    const double best = best_cycles(
        [&] { stores<MODE><<<grid, threads>>>(buf, dst, trips, out, cyc); }, grid, cyc);
    if (best < 0) return 2;
    const double insts = (double)bps * (threads / 32) * trips * kUnroll;  // stores an SM's
    printf("%s{\"sms_used\": %d, \"warps_per_sm\": %d, \"warp_stores_per_sm\": %.0f, "
           "\"cycles\": %.0f, \"cycles_per_store\": %.4f}",
           g == 0 ? "" : ", ", used, bps * threads / 32, insts, best, best / insts);
    cudaFree(out); cudaFree(cyc);
  }
  printf("]");
  return 0;
}

template <int MODE>
static int run(const char* name, const float* buf, int trips, int sms, bool first) {
  const int threads = 256;
  printf("%s\"%s\": [", first ? "" : ", ", name);
  for (int bps = 1; bps <= 8; bps *= 2) {  // 8, 16, 32, 64 warps an SM
    const int grid = sms * bps;
    float* out; long long* cyc;
    CK(cudaMalloc(&out, sizeof(float) * grid * threads));
    CK(cudaMalloc(&cyc, sizeof(long long) * grid));
    const double best = best_cycles(  // run 0 warms the L1s; the fastest of the rest
        [&] { lines<MODE><<<grid, threads>>>(buf, trips, out, cyc); }, grid, cyc);
    if (best < 0) return 2;
    const double insts = (double)bps * (threads / 32) * trips * kUnroll;  // an SM's
    const double lines_per_cycle = insts / best;
    printf("%s{\"warps_per_sm\": %d, \"warp_loads_per_sm\": %.0f, \"cycles\": %.0f, "
           "\"loads_per_cycle\": %.4f, \"cycles_per_load\": %.4f}",
           bps == 1 ? "" : ", ", bps * threads / 32, insts, best, lines_per_cycle,
           1.0 / lines_per_cycle);
    cudaFree(out); cudaFree(cyc);
  }
  printf("]");
  return 0;
}

int main(int argc, char** argv) {
  const int trips = argc > 1 ? atoi(argv[1]) : 4096;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::vector<float> h(std::max(std::max(kLines + kSlack, kOwnRows) * 32, kPortWords));
  for (size_t i = 0; i < h.size(); ++i) h[i] = (float)(i % 7);
  float* buf;
  CK(cudaMalloc(&buf, sizeof(float) * h.size()));
  CK(cudaMemcpy(buf, h.data(), sizeof(float) * h.size(), cudaMemcpyHostToDevice));
  printf("{\"bench\": \"l1_lines\", \"gpu\": \"%s\", \"sm_count\": %d, \"trips\": %d, "
         "\"loads_per_trip\": %d, \"footprint_bytes\": %d, \"modes\": {",
         prop.name, prop.multiProcessorCount, trips, kUnroll, kLines * 128);
  int rc = run<0>("line", buf, trips, prop.multiProcessorCount, true)
         | run<1>("broadcast", buf, trips, prop.multiProcessorCount, false)
         | run<2>("gemm", buf, trips, prop.multiProcessorCount, false)
         | run<3>("two", buf, trips, prop.multiProcessorCount, false)
         | run<4>("rows", buf, trips, prop.multiProcessorCount, false)
         | run<5>("gemm_port", buf, trips, prop.multiProcessorCount, false)
         | run<6>("gemm_chain", buf, trips, prop.multiProcessorCount, false);
  float* dst;
  const size_t dst_words =
      (size_t)prop.multiProcessorCount * 8 * std::max(kLines + kSlack, kOwnRows) * 32;
  CK(cudaMalloc(&dst, sizeof(float) * dst_words));
  CK(cudaMemset(dst, 0, sizeof(float) * dst_words));
  rc |= run_stores<0>("store_line", buf, dst, trips, prop.multiProcessorCount)
      | run_stores<1>("store_rows", buf, dst, trips, prop.multiProcessorCount)
      | run_stores<2>("store_rows_loads", buf, dst, trips, prop.multiProcessorCount)
      | run_stores<3>("store_rows_own", buf, dst, trips, prop.multiProcessorCount)
      | run_stores<4>("store_rows_own_loads", buf, dst, trips, prop.multiProcessorCount);
  printf("}}\n");
  cudaFree(dst);
  cudaFree(buf);
  return rc;
}
