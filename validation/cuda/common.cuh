// common.cuh - shared harness of the cgpredict CUDA reference ports (validation/cuda/*.cu).
//
// Every port is one PolyBench/GPU-style benchmark: the same sizes, initialisation and loop bodies
// as its single-threaded C file in polybench_c/, each `#pragma cgp kernel` loop nest one CUDA
// kernel. This header gives the ports
//   * argument parsing: --block XxY (x fastest), --reps R (default 7), --check, --sample S,
//     --tol T;
//   * CUDA error checking (CGP_CHECK) and small device-buffer helpers;
//   * launch-geometry helpers for 2-D grids (i -> y, j -> x) and 1-D grids (i -> x);
//   * the timing method (see Recorder and run_bench below) and the JSON report on stdout.
//
// Timing method
//   1. inputs are uploaded, the whole benchmark runs once untimed (warm-up; with --check its
//      results are copied back and compared with the host reference);
//   2. R repetitions: inputs are re-uploaded (untimed), then every kernel launch of one benchmark
//      run is bracketed by its own pair of cudaEvents (recorded on the default stream
//      immediately before and after the launch, nothing else between them);
//   3. per kernel name: median_ms / mean_ms = median / mean of the single launches,
//      all_ms = that name's time per benchmark run in each repetition (sum of its launches,
//      scaled by count/timed when a host loop was sampled), run_ms = median of all_ms;
//      total_ms = the median over repetitions of the whole run's time (sum of all its launches),
//      i.e. "median of totals"; sum_of_medians_ms = sum of the run_ms values is also reported;
//      all_host_issue_ms = the host clock (steady_clock) from the start of each repetition's
//      launches to the end of its last call, before the synchronisation: the host's own pace
//      of the timed loop (its period a launch in a host loop of short launches), beside the
//      event pairs, so a loop row can be read at its run's pace (thirteenth round, t7).
//   A host loop (FDTD-2D time steps, GRAMSCHMIDT columns, 3DCONV planes) may be sampled with
//   --sample S: only S evenly spaced host iterations are launched and timed and each name's
//   per-run time is extrapolated as (sum of timed launches) * count / timed. --check always
//   runs the full loop.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

// ---------------------------------------------------------------------------------------------
// Sizes. The measured binaries are PolyBench/GPU 1.0 as PolyBench-ACC distributes it
// (/work/shared/measurements/README.md), built with `nvcc -O3` and no -D but the sizes: each
// kernel takes the sizes as int parameters (`gemm_kernel(int ni, int nj, int nk, ...)`) and
// bounds its loops and guards by `_PB_NK` = POLYBENCH_LOOP_BOUND(NK, nk), which is the run-time
// `nk` unless POLYBENCH_USE_SCALAR_LB is defined (it is not: CUDA/utilities/polybench.h and
// common.mk); its array strides are the macros (`c[i * NJ + j]`). The ports here do the same:
// loop bounds and guards are kernel parameters, strides and the sizes of host arrays macros. So
// nvcc does not know a per-thread loop's trip count: it unrolls it 4 times with a remainder
// loop and a zero-trip check, and keeps a store before the loop that the loop overwrites (the
// loop may run no iteration). One exception, as measured: SYR2K's kernel bounds its k loop and
// guard by NI and NJ themselves (syr2k.cu).
// ---------------------------------------------------------------------------------------------
// Which CUDA port is built (cgpredict --port plain|restrict).
//   * default (plain): every array reaches a kernel as a plain `float*` parameter, without
//     `const` or `__restrict__`, exactly as in PolyBench/GPU, whose times are measured. nvcc must
//     then assume the arrays may alias: it stores an accumulator such as C[i*NJ+j] += ... on
//     every iteration of the inner loop and hoists no load across a store.
//   * -DCGP_PORT_RESTRICT=1 (restrict): every array is `__restrict__` and inputs are
//     `const float* __restrict__`: the accumulator stays in a register (one load, one store per
//     thread) and inputs may use the read-only path (ld.global.nc).
//   `const` alone changes nothing nvcc may assume (a const pointer may still alias a written
//   one), so the plain port drops it to match PolyBench/GPU literally.
#ifndef CGP_PORT_RESTRICT
#define CGP_PORT_RESTRICT 0
#endif
#if CGP_PORT_RESTRICT
#define CGP_RESTRICT __restrict__
#define CGP_CONST const
#else
#define CGP_RESTRICT
#define CGP_CONST
#endif

#define CGP_CHECK(call)                                                                    \
  do {                                                                                     \
    cudaError_t cgp_err_ = (call);                                                         \
    if (cgp_err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", __FILE__, __LINE__, #call,    \
                   cudaGetErrorString(cgp_err_));                                          \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

namespace cgp {

struct Options {
  int bx = 32;          // threads per block in x (fastest)
  int by = 1;           // threads per block in y
  int reps = 7;         // timed repetitions
  bool check = false;   // compare with the host reference
  long sample = 0;      // host-loop iterations to time (0 = all)
  double tol = 1e-3;    // relative tolerance of --check (relative to max |reference|)
};

[[noreturn]] inline void usage(const char* prog, const char* msg) {
  if (msg) std::fprintf(stderr, "%s: %s\n", prog, msg);
  std::fprintf(stderr,
               "usage: %s [--block XxY] [--reps R] [--check] [--sample S] [--tol T]\n"
               "  --block XxY  threads per block, x fastest (1-D kernels use X*Y threads in x)\n"
               "  --reps R     timed repetitions (default 7)\n"
               "  --check      compare the result with the host reference (use small sizes)\n"
               "  --sample S   time only S evenly spaced iterations of a host loop\n"
               "  --tol T      relative tolerance of --check (default 1e-3)\n",
               prog);
  std::exit(msg ? 1 : 0);
}

inline Options parse_args(int argc, char** argv, int def_bx, int def_by) {
  Options o;
  o.bx = def_bx;
  o.by = def_by;
  for (int a = 1; a < argc; ++a) {
    std::string s = argv[a];
    auto value = [&](const char* what) -> const char* {
      if (a + 1 >= argc) usage(argv[0], (std::string(what) + " needs a value").c_str());
      return argv[++a];
    };
    if (s == "--block") {
      const char* v = value("--block");
      int x = 0, y = 0;
      char tail = 0;
      int got = std::sscanf(v, "%dx%d%c", &x, &y, &tail);
      if (got == 1) y = 1;
      if (got < 1 || got > 2 || x <= 0 || y <= 0 || x * y > 1024)
        usage(argv[0], "--block wants XxY with 1 <= X*Y <= 1024");
      o.bx = x;
      o.by = y;
    } else if (s == "--reps") {
      o.reps = std::atoi(value("--reps"));
      if (o.reps < 1) usage(argv[0], "--reps wants a positive integer");
    } else if (s == "--check") {
      o.check = true;
    } else if (s == "--sample") {
      o.sample = std::atol(value("--sample"));
      if (o.sample < 0) usage(argv[0], "--sample wants a non-negative integer");
    } else if (s == "--tol") {
      o.tol = std::atof(value("--tol"));
    } else if (s == "--help" || s == "-h") {
      usage(argv[0], nullptr);
    } else {
      usage(argv[0], ("unknown argument " + s).c_str());
    }
  }
  return o;
}

inline unsigned div_up(long n, long d) { return n <= 0 ? 1u : (unsigned)((n + d - 1) / d); }

// 2-D grid: the outer mapped loop (i, ni iterations) -> y, the inner one (j, nj iterations) -> x.
inline dim3 block2d(const Options& o) { return dim3(o.bx, o.by); }
inline dim3 grid2d(const Options& o, long ni, long nj) {
  return dim3(div_up(nj, o.bx), div_up(ni, o.by));
}
// 1-D grid: the mapped loop (i, ni iterations) -> x; the block is flattened to X*Y threads.
inline dim3 block1d(const Options& o) { return dim3(o.bx * o.by); }
inline dim3 grid1d(const Options& o, long ni) { return dim3(div_up(ni, (long)o.bx * o.by)); }

// ---------------------------------------------------------------------------------------------
// Shared-memory tiles of the tiled variants (`#pragma cgp shared X tile 32x32`).
// The reduction dimension is strip-mined by TILE = 32; a bx x by block stages, per strip, the
// by x 32 tile of each i-indexed operand (X[i][k]) and the 32 x bx tile (X[k][j]) or bx x 32 tile
// (X[j][k]) of each j-indexed operand, laid out as in global memory. With the reference 32x32
// block every tile is 32x32 and every thread loads one element of each tile, as in the
// standard tiled matrix multiply. CGP_TILE_PAD (default 0: the literal 32x32 tile) pads each
// tile row to reduce bank conflicts.
#ifndef CGP_TILE_PAD
#define CGP_TILE_PAD 0
#endif
constexpr int TILE = 32;

// tile[r * ts + c] = src[(row0 + r) * ld + col0 + c] for r < rows, c < cols (0 outside the
// nrows x ncols matrix); all threads of the block take part, x fastest (coalesced).
__device__ __forceinline__ void stage(float* tile, int ts, CGP_CONST float* CGP_RESTRICT src,
                                      int ld, int nrows, int ncols, int row0, int col0, int rows,
                                      int cols) {
  int nthreads = blockDim.x * blockDim.y;
  for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < rows * cols; e += nthreads) {
    int r = e / cols, c = e - r * cols;
    int gr = row0 + r, gc = col0 + c;
    tile[r * ts + c] = (gr < nrows && gc < ncols) ? src[(size_t)gr * ld + gc] : 0.0f;
  }
}
// Row stride of a tile of `cols` columns, and the bytes of dynamic shared memory for `ntiles`
// tiles of a kernel (each at most max(bx, by, 32) x (max(bx, 32) + pad) floats).
__host__ __device__ inline int tile_stride(int cols) { return cols + CGP_TILE_PAD; }

// Row stride of the 32 x bx tile (X[k][j]) of a j-indexed operand: the compile-time
// tile_stride(TILE), as the 32x32 `__shared__` arrays of the textbook kernel that was measured
// (/work/shared/measurements/README.md, `smem32`) and the C file's `tile 32x32`: ptxas then
// folds the 32 row addresses the compute phase reads into LDS immediate offsets (with the
// run-time stride bx + pad it recomputed 17 of them every tile phase, IMAD/LEA). A block
// wider than TILE does not fit such a tile: the port exits with a message.
constexpr int COL_TILE_STRIDE = TILE + CGP_TILE_PAD;
inline void require_col_tile(int bx) {
  if (bx > TILE) {
    std::fprintf(stderr, "block width %d exceeds the %d columns of a 32x32 tile\n", bx, TILE);
    std::exit(1);
  }
}

// Bytes of dynamic shared memory for tiles given as {rows, row stride}; exits with a message
// when the block shape needs more than the 48 KiB a block gets without opting in.
inline size_t shared_bytes(std::initializer_list<std::pair<int, int>> tiles) {
  size_t floats = 0;
  for (const auto& t : tiles) floats += (size_t)t.first * t.second;
  size_t bytes = floats * sizeof(float);
  if (bytes > 48 * 1024) {
    std::fprintf(stderr, "block shape needs %zu bytes of shared memory for its tiles (max 49152)\n",
                 bytes);
    std::exit(1);
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Device buffers.
template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  explicit DevBuf(size_t count) : n(count) { CGP_CHECK(cudaMalloc(&p, n * sizeof(T))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void upload(const T* h) { CGP_CHECK(cudaMemcpy(p, h, n * sizeof(T), cudaMemcpyHostToDevice)); }
  void upload(const std::vector<T>& h) { upload(h.data()); }
  void download(T* h) const {
    CGP_CHECK(cudaMemcpy(h, p, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> download() const {
    std::vector<T> h(n);
    download(h.data());
    return h;
  }
  void zero() { CGP_CHECK(cudaMemset(p, 0, n * sizeof(T))); }
  operator T*() const { return p; }
};

// Max |dev - ref| / max |ref| over n elements; NaN/Inf mismatches give +inf.
inline double rel_err(const float* dev, const float* ref, size_t n) {
  double max_ref = 0.0, max_diff = 0.0;
  for (size_t k = 0; k < n; ++k) {
    double r = ref[k], d = dev[k];
    bool rf = std::isfinite(r), df = std::isfinite(d);
    if (!rf || !df) {
      if (std::isnan(r) && std::isnan(d)) continue;
      if (!rf && !df && r == d) continue;
      return INFINITY;
    }
    max_ref = std::max(max_ref, std::fabs(r));
    max_diff = std::max(max_diff, std::fabs(d - r));
  }
  if (max_diff == 0.0) return 0.0;
  return max_diff / std::max(max_ref, 1e-30);
}
inline double rel_err(const std::vector<float>& dev, const std::vector<float>& ref) {
  if (dev.size() != ref.size()) return INFINITY;
  return rel_err(dev.data(), ref.data(), ref.size());
}

// ---------------------------------------------------------------------------------------------
// Timing of kernel launches.
class Recorder {
 public:
  explicit Recorder(const Options& o) : opt_(o) {}
  ~Recorder() {
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Launch `f` (which must enqueue exactly one kernel on the default stream) under `name`.
  template <class F>
  void launch(const char* name, F&& f) {
    int s = index_of(name);
    if (!timing_) {
      f();
      CGP_CHECK(cudaGetLastError());
      return;
    }
    while (pool_.size() < used_ + 2) {
      cudaEvent_t e;
      CGP_CHECK(cudaEventCreate(&e));
      pool_.push_back(e);
    }
    CGP_CHECK(cudaEventRecord(pool_[used_]));
    f();
    CGP_CHECK(cudaGetLastError());
    CGP_CHECK(cudaEventRecord(pool_[used_ + 1]));
    used_ += 2;
    which_.push_back(s);
  }

  // A host loop lo <= k < hi whose body launches the kernels `names`. Returns the iterations to
  // run: all of them, or --sample S evenly spaced ones (never when checking a result).
  std::vector<long> host_loop(long lo, long hi, std::initializer_list<const char*> names) {
    long count = std::max(0L, hi - lo);
    for (const char* nm : names) stats_[index_of(nm)].count = count;
    std::vector<long> ks;
    long s = (full_ || opt_.sample <= 0 || opt_.sample >= count) ? count : opt_.sample;
    if (s == count) {
      for (long k = lo; k < hi; ++k) ks.push_back(k);
    } else {
      sampled_ = true;
      for (long t = 0; t < s; ++t) ks.push_back(lo + (2 * t + 1) * count / (2 * s));
    }
    return ks;
  }

  void set_mode(bool timing, bool full) {
    timing_ = timing;
    full_ = full;
  }

  void begin_rep() {
    used_ = 0;
    which_.clear();
    t0_ = std::chrono::steady_clock::now();
  }

  void end_rep() {
    std::chrono::duration<double, std::milli> issued = std::chrono::steady_clock::now() - t0_;
    host_.push_back(issued.count());
    CGP_CHECK(cudaDeviceSynchronize());
    std::vector<double> sum(stats_.size(), 0.0);
    std::vector<long> timed(stats_.size(), 0);
    for (size_t l = 0; l < which_.size(); ++l) {
      float ms = 0.f;
      CGP_CHECK(cudaEventElapsedTime(&ms, pool_[2 * l], pool_[2 * l + 1]));
      Stat& st = stats_[which_[l]];
      st.launches.push_back(ms);
      sum[which_[l]] += ms;
      timed[which_[l]] += 1;
    }
    double total = 0.0;
    for (size_t s = 0; s < stats_.size(); ++s) {
      Stat& st = stats_[s];
      st.timed = timed[s];
      if (st.count < 0) st.count = timed[s];
      double run = timed[s] > 0 ? sum[s] * (double)st.count / (double)timed[s] : 0.0;
      st.per_rep.push_back(run);
      total += run;
    }
    totals_.push_back(total);
  }

  void print_json(FILE* out) const;

  bool sampled() const { return sampled_; }

 private:
  struct Stat {
    std::string name;
    long count = -1;  // launches per benchmark run (logical, before sampling)
    long timed = 0;   // launches timed per repetition
    std::vector<double> launches;  // every timed launch, ms
    std::vector<double> per_rep;   // this name's time per benchmark run, ms, per repetition
  };
  int index_of(const char* name) {
    for (size_t s = 0; s < stats_.size(); ++s)
      if (stats_[s].name == name) return (int)s;
    Stat st;
    st.name = name;
    stats_.push_back(st);
    return (int)stats_.size() - 1;
  }
  static double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  }
  static double mean(const std::vector<double>& v) {
    double s = 0.0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / v.size();
  }

  const Options& opt_;
  bool timing_ = false;
  bool full_ = true;
  bool sampled_ = false;
  std::vector<cudaEvent_t> pool_;
  size_t used_ = 0;
  std::vector<int> which_;
  std::vector<Stat> stats_;
  std::vector<double> totals_;
  std::vector<double> host_;  // host clock of each repetition's launches, ms (before the sync)
  std::chrono::steady_clock::time_point t0_;
};

inline void json_list(FILE* out, const std::vector<double>& v) {
  std::fputc('[', out);
  for (size_t k = 0; k < v.size(); ++k) std::fprintf(out, "%s%.6g", k ? ", " : "", v[k]);
  std::fputc(']', out);
}

inline void Recorder::print_json(FILE* out) const {
  std::fprintf(out, "  \"launches\": [");
  double sum_of_medians = 0.0;
  for (size_t s = 0; s < stats_.size(); ++s) {
    const Stat& st = stats_[s];
    double run = median(st.per_rep);
    sum_of_medians += run;
    std::fprintf(out,
                 "%s\n    {\"name\": \"%s\", \"count\": %ld, \"timed\": %ld, \"median_ms\": %.6g, "
                 "\"mean_ms\": %.6g, \"min_ms\": %.6g, \"run_ms\": %.6g, \"all_ms\": ",
                 s ? "," : "", st.name.c_str(), st.count, st.timed, median(st.launches),
                 mean(st.launches),
                 st.launches.empty() ? 0.0
                                     : *std::min_element(st.launches.begin(), st.launches.end()),
                 run);
    json_list(out, st.per_rep);
    std::fputc('}', out);
  }
  std::fprintf(out, "\n  ],\n  \"total_ms\": %.6g,\n  \"sum_of_medians_ms\": %.6g,\n",
               median(totals_), sum_of_medians);
  std::fprintf(out, "  \"all_total_ms\": ");
  json_list(out, totals_);
  std::fprintf(out, ",\n  \"all_host_issue_ms\": ");
  json_list(out, host_);
  std::fprintf(out, ",\n");
}

// ---------------------------------------------------------------------------------------------
struct Size {
  const char* name;
  long value;
};

// Run one benchmark and print its JSON report. `reset()` uploads the inputs; `run(rec)` enqueues
// one whole benchmark run through rec.launch(); `check()` (called after a full run when --check
// is given) copies the results back, computes the host reference and returns the max relative
// error. Returns the process exit status (1 when the check fails).
template <class Reset, class Run, class Check>
int run_bench(const char* kernel, const Options& opt, std::initializer_list<Size> sizes,
              int grid_dims, Reset reset, Run run, Check check) {
  int dev = 0;
  cudaDeviceProp prop;
  CGP_CHECK(cudaGetDevice(&dev));
  CGP_CHECK(cudaGetDeviceProperties(&prop, dev));
  Recorder rec(opt);

  reset();
  rec.set_mode(false, opt.check);  // warm-up (full when checking)
  run(rec);
  CGP_CHECK(cudaDeviceSynchronize());
  double err = NAN;
  const char* status = "skipped";
  if (opt.check) {
    err = check();
    status = (err <= opt.tol) ? "pass" : "fail";
  }
  rec.set_mode(true, false);
  for (int r = 0; r < opt.reps; ++r) {
    reset();
    CGP_CHECK(cudaDeviceSynchronize());
    rec.begin_rep();
    run(rec);
    rec.end_rep();
  }

  FILE* out = stdout;
  std::fprintf(out, "{\n  \"kernel\": \"%s\",\n  \"sizes\": {", kernel);
  bool first = true;
  for (const Size& s : sizes) {
    std::fprintf(out, "%s\"%s\": %ld", first ? "" : ", ", s.name, s.value);
    first = false;
  }
  int bx = grid_dims == 1 ? opt.bx * opt.by : opt.bx, by = grid_dims == 1 ? 1 : opt.by;
  std::fprintf(out, "},\n  \"grid_dims\": %d,\n  \"block\": [%d, %d],\n", grid_dims, bx, by);
  std::fprintf(out, "  \"device\": \"%s\",\n  \"reps\": %d,\n  \"sampled\": %s,\n", prop.name,
               opt.reps, rec.sampled() ? "true" : "false");
  rec.print_json(out);
  std::fprintf(out, "  \"check\": \"%s\",\n  \"tol\": %g,\n", status, opt.tol);
  if (std::isnan(err))
    std::fprintf(out, "  \"max_rel_err\": null\n}\n");
  else if (std::isinf(err))
    std::fprintf(out, "  \"max_rel_err\": \"inf\"\n}\n");
  else
    std::fprintf(out, "  \"max_rel_err\": %.6g\n}\n", err);
  std::fflush(out);
  return (opt.check && !(err <= opt.tol)) ? 1 : 0;
}

}  // namespace cgp
