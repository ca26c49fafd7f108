// What the host leaves in the GPU before a timed launch (issue 24: the single-launch user rows,
// event-timed 18-32 % above Nsight Compute's time of the same kernel, which flushes the caches
// before it measures). The ports re-upload their inputs before each timed repetition
// (validation/cuda/common.cuh, run_bench); the copy engines write through the L2, so a launch
// may begin with the L2 full of dirty lines that it must write back to DRAM as it evicts them.
// For SAXPY (y = a x + y, 256-thread blocks) at N = 2^22, 2^24 and 2^26, and the SFU kernel of
// examples/user/sfu_heavy.c at N = 2^22, one launch is timed (cudaEvent pair, median of 7)
// after each of:
//   upload: x and y copied from the host (y zeroed for sfu), as the ports do;
//   clean:  upload, then a kernel that reads a 256 MB scratch array (the L2 then holds clean
//           lines of another array: the upload's dirty lines have gone back to DRAM);
//   dirty:  upload, then a kernel that writes the scratch array (dirty lines of another array);
//   again:  the launch right after the same launch (its own lines in the L2).
// Then, SAXPY at 2^24 only, which upload and when: the host waits 0.1, 1 or 10 ms after the
// upload; only x, only y, 4 KB of x, or 128 MB of another array is uploaded; the upload is
// from pinned host memory.
// And whether the extra time is the GPU's or the host's: after each upload kind, the launch is
// timed (a) as above, (b) queued behind a 200 us spin kernel, so that the GPU is busy while the
// host submits it and the event pair holds only the GPU's part, and (c) on the host clock
// around the launch call alone.
// Also: an empty kernel's event pair (the floor of any timed launch), and the SM clock just after
// an upload and just after a busy kernel (one warp spins 2^18 cycles; clock64 / %globaltimer).
// Prints one JSON object. Usage: launch_state
#include <chrono>
#include <thread>
#include "event_pair.h"
#include "l2_state.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void sfu(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = expf(x[i]) / sqrtf(x[i] + 1.0f);
}
__global__ void empty() {}
__global__ void write_all(size_t n, float4* s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    s[i] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
}
__global__ void clock_probe(long long spin, unsigned long long* out) {
  unsigned long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  long long c0 = clock64();
  while (clock64() - c0 < spin) {}
  long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  if (threadIdx.x == 0) { out[0] = c1 - c0; out[1] = g1 - g0; }
}

struct Scratch { float4* p; size_t n; float* sink; };

// prepare() before each of 7 timed launches of f; state: what runs between prepare and f
template <class P, class F>
static float median_after(P prepare, const char* state, const Scratch& s, F f) {
  std::vector<float> t;
  for (int r = 0; r < 7; ++r) {
    prepare();
    const int blocks = 132 * 8;
    if (state[0] == 'c') read_all<<<blocks, 256>>>(s.n, s.p, s.sink);
    if (state[0] == 'd') write_all<<<blocks, 256>>>(s.n, s.p);
    if (state[0] == 'a') f();
    CK(cudaDeviceSynchronize());
    t.push_back(timed(f));
  }
  CK(cudaGetLastError());
  return median(t);
}

static double clock_mhz(unsigned long long* d) {
  clock_probe<<<1, 32>>>(1LL << 18, d);
  CK(cudaDeviceSynchronize());
  unsigned long long h[2];
  CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  return h[1] ? 1e3 * (double)h[0] / (double)h[1] : 0.0;
}

int main() {
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  const char* states[4] = {"upload", "clean", "dirty", "again"};
  Scratch s;
  s.n = (256u << 20) / sizeof(float4);
  CK(cudaMalloc(&s.p, s.n * sizeof(float4)));
  CK(cudaMalloc(&s.sink, sizeof(float)));
  CK(cudaMemset(s.p, 0, s.n * sizeof(float4)));
  unsigned long long* dclk;
  CK(cudaMalloc(&dclk, 2 * sizeof(unsigned long long)));
  std::vector<float> e;
  for (int r = 0; r < 9; ++r) e.push_back(timed([] { empty<<<1, 32>>>(); }));
  printf("{\"bench\": \"launch_state\", \"empty_kernel_ms\": %.6g", median(e));
  const int sizes[3] = {1 << 22, 1 << 24, 1 << 26};
  for (int k = 0; k < 4; ++k) {
    const bool is_sfu = k == 3;
    const int n = is_sfu ? 1 << 22 : sizes[k];
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) { hx[i] = (float)(i % 97) * 0.01f; hy[i] = (float)(i % 13); }
    float *x, *y;
    CK(cudaMalloc(&x, sizeof(float) * n)); CK(cudaMalloc(&y, sizeof(float) * n));
    auto upload = [&] {
      CK(cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
      if (is_sfu) CK(cudaMemset(y, 0, sizeof(float) * n));
      else CK(cudaMemcpy(y, hy.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    };
    const int grid = (n + 255) / 256;
    auto launch = [&] {
      if (is_sfu) sfu<<<grid, 256>>>(n, x, y);
      else saxpy<<<grid, 256>>>(n, 2.0f, x, y);
    };
    upload(); launch(); CK(cudaDeviceSynchronize());  // warm-up
    printf(", \"%s_%d\": {\"bytes\": %.0f", is_sfu ? "sfu" : "saxpy", n,
           (is_sfu ? 8.0 : 12.0) * n);
    for (const char* st : states)
      printf(", \"%s_ms\": %.6g", st, median_after(upload, st, s, launch));
    printf("}");
    CK(cudaFree(x)); CK(cudaFree(y));
  }
  {  // SAXPY 2^24 after uploads of other kinds and ages
    const int n = 1 << 24, grid = (n + 255) / 256;
    std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
    float *x, *y, *other, *px, *py;
    CK(cudaMalloc(&x, sizeof(float) * n)); CK(cudaMalloc(&y, sizeof(float) * n));
    CK(cudaMalloc(&other, sizeof(float) * 2 * n));
    CK(cudaMallocHost(&px, sizeof(float) * n)); CK(cudaMallocHost(&py, sizeof(float) * n));
    std::copy(hx.begin(), hx.end(), px); std::copy(hy.begin(), hy.end(), py);
    std::vector<float> ho(2 * (size_t)n, 3.0f);
    auto launch = [&] { saxpy<<<grid, 256>>>(n, 2.0f, x, y); };
    auto up = [&](const float* hxp, const float* hyp, size_t nx, size_t ny) {
      if (nx) CK(cudaMemcpy(x, hxp, sizeof(float) * nx, cudaMemcpyHostToDevice));
      if (ny) CK(cudaMemcpy(y, hyp, sizeof(float) * ny, cudaMemcpyHostToDevice));
    };
    auto variant = [&](const char* name, auto prepare, int wait_us) {
      std::vector<float> t;
      for (int r = 0; r < 7; ++r) {
        prepare();
        CK(cudaDeviceSynchronize());
        if (wait_us) std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
        t.push_back(timed(launch));
      }
      printf(", \"%s_ms\": %.6g", name, median(t));
    };
    up(hx.data(), hy.data(), n, n); launch(); CK(cudaDeviceSynchronize());
    printf(", \"saxpy_16777216_variants\": {\"bytes\": %.0f", 12.0 * n);
    auto both = [&] { up(hx.data(), hy.data(), n, n); };
    variant("upload", both, 0);
    variant("upload_wait_100us", both, 100);
    variant("upload_wait_1ms", both, 1000);
    variant("upload_wait_10ms", both, 10000);
    variant("x_only", [&] { up(hx.data(), hy.data(), n, 0); }, 0);
    variant("y_only", [&] { up(hx.data(), hy.data(), 0, n); }, 0);
    variant("x_4kb", [&] { up(hx.data(), hy.data(), 1024, 0); }, 0);
    variant("other_128mb", [&] {
      CK(cudaMemcpy(other, ho.data(), sizeof(float) * ho.size(), cudaMemcpyHostToDevice)); }, 0);
    variant("pinned", [&] { up(px, py, n, n); }, 0);
    variant("pinned_wait_1ms", [&] { up(px, py, n, n); }, 1000);
    variant("none", [] {}, 0);
    printf("}");
    // (a) events, (b) events behind a spin, (c) host clock of the launch call; per upload kind
    auto split = [&](const char* name, auto prepare) {
      std::vector<float> a, b, c;
      for (int r = 0; r < 7; ++r) {
        prepare(); CK(cudaDeviceSynchronize());
        a.push_back(timed(launch));
        prepare(); CK(cudaDeviceSynchronize());
        spin<<<1, 32>>>(400000);
        b.push_back(timed(launch));
        prepare(); CK(cudaDeviceSynchronize());
        auto h0 = std::chrono::steady_clock::now();
        launch();
        auto h1 = std::chrono::steady_clock::now();
        CK(cudaDeviceSynchronize());
        c.push_back(std::chrono::duration<float, std::micro>(h1 - h0).count());
      }
      printf(", \"%s\": {\"events_ms\": %.6g, \"behind_spin_ms\": %.6g, "
             "\"host_launch_us\": %.4g}", name, median(a), median(b), median(c));
    };
    printf(", \"saxpy_16777216_host_or_gpu\": {\"bytes\": %.0f", 12.0 * n);
    split("pageable", both);
    split("pinned", [&] { up(px, py, n, n); });
    split("none", [] {});
    printf("}");
    {
      std::vector<float> e;
      for (int r = 0; r < 9; ++r) { spin<<<1, 32>>>(400000); e.push_back(timed([] { empty<<<1, 32>>>(); })); }
      printf(", \"empty_kernel_behind_spin_ms\": %.6g", median(e));
    }
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(other));
    CK(cudaFreeHost(px)); CK(cudaFreeHost(py));
  }
  {  // the SM clock right after an upload, and right after a busy second
    std::vector<float> hx(1 << 24);
    float* x;
    CK(cudaMalloc(&x, sizeof(float) * hx.size()));
    CK(cudaMemcpy(x, hx.data(), sizeof(float) * hx.size(), cudaMemcpyHostToDevice));
    const double after_upload = clock_mhz(dclk);
    for (int r = 0; r < 40; ++r) write_all<<<132 * 8, 256>>>(s.n, s.p);
    const double after_busy = clock_mhz(dclk);
    printf(", \"sm_clock_mhz_after_upload\": %.1f, \"sm_clock_mhz_after_busy\": %.1f",
           after_upload, after_busy);
    CK(cudaFree(x));
  }
  printf("}\n");
  return 0;
}
