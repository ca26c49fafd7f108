// loop_probe.cu -- what a host loop of short launches costs under cudaEvent timing (t5).
// Kernels: heat (blind heat1d, N = 65536, 256 blocks of 256), wavefront (blind wavefront,
// N = 2048, 4095 launches of 1..2048 threads), empty (1 block of 256, no work).
// Modes, each 7 repetitions after a warm-up:
//   port   : the ports' Recorder: sync; per launch eventRecord, launch, eventRecord; sum pairs
//   queued : the same loop queued behind a spin kernel (GPU busy while the host issues):
//            the pairs tile the GPU's own time per launch (w)
//   bare   : sync; one event pair around the loop, no events inside
//   bareq  : bare behind a spin kernel (the GPU's time per launch without per-launch events)
//   host   : host clock around the port loop (behind a spin: the host's own period P)
// Every mode prints host_loop_us: the host clock around the loop; in `queued` mode the GPU is
// busy throughout, so host_loop_us / launches is the host's period P of eq. (E3)
// (models/event_timing.py, loop_launch_us) and total_us / launches the GPU's queued pair w;
// eq. (E4) predicts the `port` pair as max(w, min(P, launch_call_us + w)).
// Build and run: nvcc -O3 -arch=sm_90 -o loop_probe loop_probe.cu && ./loop_probe > out.json
// (about 10-20 s on an H100; not yet run: the 2026-11-27 round-13 device call was refused).
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); std::exit(1);} } while (0)

static const int HN = 65536, HT = 200, WN = 2048;

__global__ void heat(int n, const float* src, float* dst) {
  int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) dst[i] = src[i] + 0.25f * (src[i - 1] - 2.0f * src[i] + src[i + 1]);
}
__global__ void wavefront(int ilo, int ihi, int d, const int* a, const int* b, int* H) {
  int i = ilo + blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= ihi) {
    int j = d - i;
    int s = a[i] == b[j] ? 1 : -1;
    int m = H[(i - 1) * (WN + 1) + j - 1] + s;
    int up = H[(i - 1) * (WN + 1) + j] - 1;
    int left = H[i * (WN + 1) + j - 1] - 1;
    if (up > m) m = up;
    if (left > m) m = left;
    H[i * (WN + 1) + j] = m;
  }
}
__global__ void empty() {}
__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

struct Ctx { float *a, *b; int *wa, *wb, *H; std::vector<cudaEvent_t> ev; cudaEvent_t e0, e1; };

// launch number k of kernel kind `kind` (0 heat, 1 wavefront, 2 empty); count of launches
static int count_of(int kind) { return kind == 1 ? 2 * WN - 1 : HT; }
static void launch(Ctx& c, int kind, int k) {
  if (kind == 0) {
    const float* s = (k % 2) ? c.b : c.a; float* d = (k % 2) ? c.a : c.b;
    heat<<<(HN - 2 + 255) / 256, 256>>>(HN, s, d);
  } else if (kind == 1) {
    int dd = k + 2; int ilo = dd - WN > 1 ? dd - WN : 1; int ihi = dd - 1 < WN ? dd - 1 : WN;
    int n = ihi - ilo + 1;
    wavefront<<<(n + 255) / 256, 256>>>(ilo, ihi, dd, c.wa, c.wb, c.H);
  } else {
    empty<<<1, 256>>>();
  }
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]); }

// one repetition; returns {sum of pairs or bare pair (us), host loop time (us), pairs...}
static std::vector<double> rep(Ctx& c, int kind, bool events, bool queued, std::vector<double>* pairs) {
  int n = count_of(kind);
  CK(cudaDeviceSynchronize());
  if (queued) spin<<<1, 1>>>(kind == 1 ? 80000000ull : 8000000ull);  // 80 / 8 ms
  if (!events) CK(cudaEventRecord(c.e0));
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < n; k++) {
    if (events) CK(cudaEventRecord(c.ev[2 * k]));
    launch(c, kind, k);
    if (events) CK(cudaEventRecord(c.ev[2 * k + 1]));
  }
  auto t1 = std::chrono::steady_clock::now();
  if (!events) CK(cudaEventRecord(c.e1));
  CK(cudaDeviceSynchronize());
  double host_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  double tot = 0;
  if (events) {
    for (int k = 0; k < n; k++) { float ms; CK(cudaEventElapsedTime(&ms, c.ev[2 * k], c.ev[2 * k + 1]));
      tot += ms * 1e3; if (pairs) pairs->push_back(ms * 1e3); }
  } else { float ms; CK(cudaEventElapsedTime(&ms, c.e0, c.e1)); tot = ms * 1e3; }
  return {tot, host_us};
}

int main() {
  Ctx c;
  CK(cudaMalloc(&c.a, HN * 4)); CK(cudaMalloc(&c.b, HN * 4));
  CK(cudaMemset(c.a, 0, HN * 4)); CK(cudaMemset(c.b, 0, HN * 4));
  CK(cudaMalloc(&c.wa, (WN + 1) * 4)); CK(cudaMalloc(&c.wb, (WN + 1) * 4));
  CK(cudaMalloc(&c.H, (size_t)(WN + 1) * (WN + 1) * 4));
  CK(cudaMemset(c.wa, 0, (WN + 1) * 4)); CK(cudaMemset(c.wb, 0, (WN + 1) * 4));
  CK(cudaMemset(c.H, 0, (size_t)(WN + 1) * (WN + 1) * 4));
  c.ev.resize(2 * (2 * WN));
  for (auto& e : c.ev) CK(cudaEventCreate(&e));
  CK(cudaEventCreate(&c.e0)); CK(cudaEventCreate(&c.e1));
  const char* kn[3] = {"heat", "wavefront", "empty"};
  const char* mn[4] = {"port", "queued", "bare", "bareq"};
  std::printf("{\n");
  for (int kind = 0; kind < 3; kind++) {
    rep(c, kind, true, false, nullptr);  // warm-up
    for (int m = 0; m < 4; m++) {
      bool events = m < 2, queued = m % 2 == 1;
      std::vector<double> tots, hosts, pairs, first;
      for (int r = 0; r < 7; r++) {
        std::vector<double> p;
        auto v = rep(c, kind, events, queued, &p);
        tots.push_back(v[0]); hosts.push_back(v[1]);
        pairs.insert(pairs.end(), p.begin(), p.end());
        if (r == 1) first = p;
      }
      int n = count_of(kind);
      std::printf("%s\"%s_%s\": {\"launches\": %d, \"total_us\": [", (kind || m) ? ",\n" : "", kn[kind], mn[m], n);
      for (size_t i = 0; i < tots.size(); i++) std::printf("%s%.2f", i ? ", " : "", tots[i]);
      std::printf("], \"host_loop_us\": [");
      for (size_t i = 0; i < hosts.size(); i++) std::printf("%s%.2f", i ? ", " : "", hosts[i]);
      std::printf("]");
      if (events) {
        double mn_ = *std::min_element(pairs.begin(), pairs.end()), s = 0;
        for (double x : pairs) s += x;
        std::printf(", \"pair_median_us\": %.3f, \"pair_mean_us\": %.3f, \"pair_min_us\": %.3f",
                    med(pairs), s / pairs.size(), mn_);
        if (kind != 1) {  // one repetition's pairs, in order
          std::printf(", \"pairs_rep1_us\": [");
          for (size_t i = 0; i < first.size(); i++) std::printf("%s%.2f", i ? ", " : "", first[i]);
          std::printf("]");
        } else {  // wavefront: pairs of rep 1 averaged over 64-launch windows
          std::printf(", \"pairs_rep1_win64_us\": [");
          for (size_t i = 0; i < first.size(); i += 64) { double s2 = 0; size_t j = i;
            for (; j < std::min(first.size(), i + 64); j++) s2 += first[j];
            std::printf("%s%.2f", i ? ", " : "", s2 / (j - i)); }
          std::printf("]");
        }
      }
      std::printf("}");
      std::fflush(stdout);
    }
  }
  std::printf("\n}\n");
  return 0;
}
