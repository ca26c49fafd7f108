// cuda_runtime.h -- host emulation of the small CUDA subset that validation/cuda/*.cu use.
//
// Only for checking the ports' index logic and host references on a machine without a GPU
// (validation/emu/nvcc_emu.py translates `k<<<g, b, smem>>>(...)` and builds with g++ -std=c++20).
// Kernels run on the CPU block by block; blocks with dynamic shared memory run one std::thread
// per CUDA thread so that __syncthreads() is a real barrier, and so do all blocks when the port
// shuffles (nvcc_emu.py defines CGP_EMU_WARP_SYNC): __shfl_down_sync exchanges through the
// block's barrier, which every thread of the block must reach (cgp::warp_sum: all lanes call
// it). atomicAdd takes a lock. Timings are host wall-clock and mean nothing. Device memory is filled with 0x7f bytes so that reads of unwritten data show.
#pragma once
#include <chrono>
#include <barrier>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <tuple>
#include <thread>
#include <vector>
#include <cstdio>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __restrict__ __restrict
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
namespace emu {
inline thread_local dim3 blockIdx, threadIdx, blockDim, gridDim;
inline thread_local std::barrier<>* bar = nullptr;
inline thread_local float* smem_ptr = nullptr;
inline thread_local unsigned char* xch_ptr = nullptr;  // 8 bytes per thread: shuffles
inline float* dyn_smem() { return smem_ptr; }
#ifdef CGP_EMU_WARP_SYNC
constexpr bool warp_sync = true;
#else
constexpr bool warp_sync = false;
#endif
struct Launcher {
  dim3 g, b; size_t smem;
  Launcher(dim3 g_, dim3 b_, size_t s = 0) : g(g_), b(b_), smem(s) {}
  template <class... P, class... A> void operator()(void (*f)(P...), A&&... aa) {
    std::tuple<P...> a(static_cast<P>(aa)...);
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        dim3 bi(bx, by);
        if (smem == 0 && !warp_sync) {
          blockIdx = bi; blockDim = b; gridDim = g; bar = nullptr;
          for (unsigned ty = 0; ty < b.y; ++ty)
            for (unsigned tx = 0; tx < b.x; ++tx) { threadIdx = dim3(tx, ty); std::apply(f, a); }
        } else {
          std::vector<float> sm(smem / sizeof(float) + 1, NAN);
          std::barrier<> br(b.x * b.y);
          std::vector<unsigned char> xch(8 * (size_t)b.x * b.y);
          std::vector<std::thread> ts;
          for (unsigned ty = 0; ty < b.y; ++ty)
            for (unsigned tx = 0; tx < b.x; ++tx)
              ts.emplace_back([&, tx, ty] {
                blockIdx = bi; blockDim = b; gridDim = g; threadIdx = dim3(tx, ty);
                bar = &br; smem_ptr = sm.data(); xch_ptr = xch.data(); std::apply(f, a);
              });
          for (auto& t : ts) t.join();
        }
      }
  }
};
}
#define blockIdx ::emu::blockIdx
#define threadIdx ::emu::threadIdx
#define blockDim ::emu::blockDim
#define gridDim ::emu::gridDim
inline void __syncthreads() { if (!::emu::bar) { fprintf(stderr, "syncthreads without barrier\n"); abort(); } ::emu::bar->arrive_and_wait(); }
// v of lane + delta of the same warp (v itself past the warp's last lane), all threads at once.
template <class T> T __shfl_down_sync(unsigned, T v, unsigned delta) {
  if (!::emu::bar) { fprintf(stderr, "shuffle without barrier\n"); abort(); }
  unsigned tid = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  memcpy(::emu::xch_ptr + 8 * tid, &v, sizeof(T));
  ::emu::bar->arrive_and_wait();
  T out = v;
  if ((tid & 31u) + delta < 32u && tid + delta < n) memcpy(&out, ::emu::xch_ptr + 8 * (tid + delta), sizeof(T));
  ::emu::bar->arrive_and_wait();
  return out;
}
namespace emu { inline std::mutex atomic_lock; }
template <class T> T atomicAdd(T* p, T v) { std::lock_guard<std::mutex> g(::emu::atomic_lock); T old = *p; *p = old + v; return old; }
typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };
inline const char* cudaGetErrorString(cudaError_t) { return "emu error"; }
inline cudaError_t cudaMalloc(void* p, size_t n) { *(void**)p = malloc(n); memset(*(void**)p, 0x7f, n); return 0; }
inline cudaError_t cudaFree(void* p) { free(p); return 0; }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { memcpy(d, s, n); return 0; }
inline cudaError_t cudaMemset(void* d, int v, size_t n) { memset(d, v, n); return 0; }
inline cudaError_t cudaDeviceSynchronize() { return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return 0; }
struct cudaDeviceProp { char name[256]; };
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) { strcpy(p->name, "host emulation"); return 0; }
typedef double* cudaEvent_t;
inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = new double(0); return 0; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return 0; }
inline cudaError_t cudaEventRecord(cudaEvent_t e) { *e = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); return 0; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) { *ms = (float)(*b - *a); return 0; }
