// Shared helpers of the cgpredict calibration micro-benchmarks (cgpredict/calibration/run.py).
//
// Every micro-benchmark is one program that takes `key=value` arguments and prints exactly one
// JSON object on one line to stdout: raw numbers only (cycles from clock64(), event times,
// byte / operation counts, host wall-clock windows for the power sampler). The analysis lives
// in Python (cgpredict/calibration/analysis.py). Diagnostics go to stderr.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

// ---- key=value arguments ---------------------------------------------------------------
static const char* arg_str(int argc, char** argv, const char* key, const char* def) {
  size_t n = strlen(key);
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], key, n) && argv[i][n] == '=') return argv[i] + n + 1;
  return def;
}
static long long arg_int(int argc, char** argv, const char* key, long long def) {
  const char* s = arg_str(argc, argv, key, nullptr);
  return s ? atoll(s) : def;
}
static double arg_double(int argc, char** argv, const char* key, double def) {
  const char* s = arg_str(argc, argv, key, nullptr);
  return s ? atof(s) : def;
}
static std::vector<long long> arg_list(int argc, char** argv, const char* key, const char* def) {
  std::vector<long long> out;
  const char* s = arg_str(argc, argv, key, def);
  while (s && *s) {
    out.push_back(atoll(s));
    s = strchr(s, ',');
    if (s) ++s;
  }
  return out;
}

// Host wall clock in ns since the Unix epoch (Python's time.time_ns()): the window in which a
// kernel ran, so that the power sampler can integrate energy over exactly that window.
static long long wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- one-line JSON writer ----------------------------------------------------------------
struct Json {
  std::string s = "{";
  bool first = true;
  void key(const char* k) {
    if (!first) s += ", ";
    first = false;
    s += "\"";
    s += k;
    s += "\": ";
  }
  void num(const char* k, double v) {
    key(k);
    char b[64];
    snprintf(b, sizeof b, "%.10g", v);
    s += b;
  }
  void integer(const char* k, long long v) {
    key(k);
    s += std::to_string(v);
  }
  void str(const char* k, const char* v) {
    key(k);
    s += "\"";
    for (const char* p = v; *p; ++p) {
      if (*p == '"' || *p == '\\') s += '\\';
      if ((unsigned char)*p >= 0x20) s += *p;
    }
    s += "\"";
  }
  void nums(const char* k, const std::vector<double>& v) {
    key(k);
    s += "[";
    for (size_t i = 0; i < v.size(); ++i) {
      char b[64];
      snprintf(b, sizeof b, "%s%.10g", i ? ", " : "", v[i]);
      s += b;
    }
    s += "]";
  }
  void ints(const char* k, const std::vector<long long>& v) {
    key(k);
    s += "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    s += "]";
  }
  void print() { printf("%s}\n", s.c_str()); fflush(stdout); }
};

static int attr(cudaDeviceAttr a, int dev = 0) {
  int v = 0;
  CK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}
static int sm_count() { return attr(cudaDevAttrMultiProcessorCount); }

// ---- timing --------------------------------------------------------------------------
struct Timer {
  cudaEvent_t a, b;
  Timer() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
  ~Timer() { cudaEventDestroy(a); cudaEventDestroy(b); }
  void start() { CK(cudaEventRecord(a)); }
  float stop_ms() {
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

__global__ void cgp_spin_kernel(long long cycles, long long* out) {
  long long t0 = clock64();
  long long t;
  do { t = clock64(); } while (t - t0 < cycles);
  if (threadIdx.x == 0) out[blockIdx.x] = t - t0;
}

// Effective SM clock under load (MHz): clock64() cycles spun on every SM over event time.
static double measure_clock_mhz(long long cycles = 100000000LL) {
  int n = sm_count();
  long long* d;
  CK(cudaMalloc(&d, n * sizeof(long long)));
  cgp_spin_kernel<<<n, 32>>>(cycles / 10, d);  // wake the clocks up
  CK(cudaDeviceSynchronize());
  Timer t;
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    t.start();
    cgp_spin_kernel<<<n, 32>>>(cycles, d);
    float ms = t.stop_ms();
    double mhz = cycles / (ms * 1e3);
    if (mhz > best) best = mhz;
  }
  CK(cudaFree(d));
  return best;
}

// Fields every micro-benchmark prints first; returns the measured clock (MHz).
static double common_fields(Json& j, const char* bench) {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  j.str("bench", bench);
  j.str("gpu_name", p.name);
  j.integer("sm_count", p.multiProcessorCount);
  double mhz = measure_clock_mhz();
  j.num("clock_mhz", mhz);
  return mhz;
}
