// The L2 slice map of the H100 by contention (issue 24: eq. (A2), cgpredict/l2_slices.py; the
// slice hash is not published and Nsight Compute reports no per-slice values). Two addresses
// hammered with atomic adds by every warp of a full grid run in parallel when they lie on two
// slices (each address's own serialisation, about 1.45 cycles an int add) and one after the
// other when they share one (the slice's, about 1.85 cycles a request, for both): so the time
// of a pair tells whether they share a slice. Addresses are put in classes greedily: each is
// paired with one representative of every class found so far until a pair is slow.
// Probed, in a 64 MB cudaMalloc (2 MB pages: the low 21 bits of the virtual address are the
// physical ones): page 0 at 0 .. 64 KB in steps of 256 B and 0 .. 4 KB in steps of 128 B;
// pages 1 and 16 at 0 .. 16 KB in steps of 256 B. Then a 256-bin int histogram (1 KB of bins,
// atomics.cu's hash of the thread index, 16M updates) timed at 16 offsets of its bins.
// Prints one JSON object. Usage: slice_map
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

constexpr int kBlocks = 132 * 4, kThreads = 256, kIters = 16;

__global__ void pair(unsigned* a, unsigned* b) {
  if ((threadIdx.x & 31) == 0)
    for (int k = 0; k < kIters; ++k) { atomicAdd(a, 1u); atomicAdd(b, 1u); }
}
__global__ void bins_i(int n, unsigned mask, int* bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 15;
    atomicAdd(&bins[h & mask], 1);
  }
}

static cudaEvent_t ev0, ev1;

template <class F> static float best_ms(F f, int runs) {
  float best = 1e30f;
  for (int r = 0; r < runs; ++r) {
    CK(cudaEventRecord(ev0)); f(); CK(cudaEventRecord(ev1));
    CK(cudaEventSynchronize(ev1));
    float ms; CK(cudaEventElapsedTime(&ms, ev0, ev1));
    best = std::min(best, ms);
  }
  return best;
}

int main() {
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  const size_t bytes = 64u << 20;
  char* base;
  CK(cudaMalloc(&base, bytes));
  CK(cudaMemset(base, 0, bytes));
  auto at = [&](size_t o) { return reinterpret_cast<unsigned*>(base + o); };
  auto pair_ms = [&](size_t a, size_t b) {
    return best_ms([&] { pair<<<kBlocks, kThreads>>>(at(a), at(b)); }, 2);
  };
  std::vector<size_t> offsets;
  for (size_t o = 0; o < (64u << 10); o += 256) offsets.push_back(o);
  for (size_t o = 128; o < (4u << 10); o += 256) offsets.push_back(o);
  for (size_t page : {1, 16})
    for (size_t o = 0; o < (16u << 10); o += 256) offsets.push_back(page * (2u << 20) + o);
  pair_ms(0, 0);  // warm-up
  const float same = pair_ms(0, 0);
  std::vector<float> far;
  for (int k = 1; k <= 9; ++k) far.push_back(pair_ms(0, (size_t)k * (1u << 20) + 4096 * k));
  std::sort(far.begin(), far.end());
  const float thr = 0.5f * (same + far[far.size() / 2]);
  std::vector<size_t> reps;
  std::vector<int> cls;
  std::vector<float> hit_ms;
  long tests = 0;
  for (size_t o : offsets) {
    int c = -1;
    float t = 0.0f;
    for (size_t j = 0; j < reps.size() && c < 0; ++j, ++tests)
      if ((t = pair_ms(o, reps[j])) > thr) c = (int)j;
    if (c < 0) { c = (int)reps.size(); reps.push_back(o); t = 0.0f; }
    cls.push_back(c);
    hit_ms.push_back(t);
  }
  printf("{\"bench\": \"slice_map\", \"base\": %llu, \"pair_ops\": %d, \"same_address_ms\": %.6g, "
         "\"far_pairs_ms\": [", (unsigned long long)(size_t)base, kBlocks * kThreads / 32 * kIters * 2,
         same);
  for (size_t i = 0; i < far.size(); ++i) printf("%s%.6g", i ? ", " : "", far[i]);
  printf("], \"threshold_ms\": %.6g, \"tests\": %ld, \"classes\": %zu, \"probes\": [", thr, tests,
         reps.size());
  for (size_t i = 0; i < offsets.size(); ++i)
    printf("%s[%zu, %d, %.4g]", i ? ", " : "", offsets[i], cls[i], hit_ms[i]);
  printf("], \"histogram_256\": [");
  const int n = 1 << 24;
  for (int k = 0; k < 16; ++k) {
    const size_t o = (size_t)k * 256 + (k >= 8 ? (3u << 20) : 0);
    int* bins = reinterpret_cast<int*>(base + o);
    const float ms = best_ms([&] { bins_i<<<(n + 255) / 256, 256>>>(n, 255u, bins); }, 3);
    printf("%s{\"offset\": %zu, \"ms\": %.6g}", k ? ", " : "", o, ms);
  }
  printf("]}\n");
  return 0;
}
