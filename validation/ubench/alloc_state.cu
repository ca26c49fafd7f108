// What a fresh process's arrays leave in the L2 before its one timed launch (fourteenth round):
// the PolyBench/GPU host code of the shared measurements cudaMalloc's its arrays, uploads the
// inputs (pageable cudaMemcpy), then times one launch with the host clock around the launch and
// cudaThreadSynchronize; our ports zero their outputs with cudaMemset, whose dirty lines
// (up to 24.4 MB on the H100, dirty_l2.cu) the launch writes back. One process runs one
// variant of the blind strided kernel (out[i] = in[3i] + in[3i+2], n = 2^24, 128-thread
// blocks) and prints the launch's host-clock and event-pair times:
//   polybench: malloc in/out, upload in (out never written by the host);
//   upload_all: malloc, upload in and out;
//   memset:    malloc, upload in, cudaMemset out (the ports' reset);
//   clean:     polybench, then a read of a 256 MB scratch array (the L2 clean).
// Under ncu --cache-control none, dram__bytes_write.sum of the strided launch gives the dirty
// bytes it wrote back. Usage: alloc_state VARIANT
#include <chrono>
#include <cstring>
#include <string>
#include "event_pair.h"
#include "l2_state.h"

int main(int argc, char** argv) {
  const std::string v = argc > 1 ? argv[1] : "polybench";
  const int n = 1 << 24, block = 128, grid = (n + block - 1) / block;
  std::vector<float> hin(3 * (size_t)n), hout(n, 0.0f);
  for (size_t k = 0; k < hin.size(); ++k) hin[k] = (float)(k % 17);
  float *in, *out, *sink = nullptr;
  float4* scratch = nullptr;
  const size_t sn = (256u << 20) / sizeof(float4);
  CK(cudaMalloc(&in, sizeof(float) * hin.size()));
  CK(cudaMalloc(&out, sizeof(float) * n));
  CK(cudaMemcpy(in, hin.data(), sizeof(float) * hin.size(), cudaMemcpyHostToDevice));
  if (v == "upload_all")
    CK(cudaMemcpy(out, hout.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  if (v == "memset") CK(cudaMemset(out, 0, sizeof(float) * n));
  if (v == "clean") {
    CK(cudaMalloc(&scratch, sn * sizeof(float4)));
    CK(cudaMalloc(&sink, sizeof(float)));
    CK(cudaMemset(scratch, 0, sn * sizeof(float4)));
    read_all<<<132 * 8, 256>>>(sn, scratch, sink);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  auto t0 = std::chrono::steady_clock::now();
  CK(cudaEventRecord(ev0));
  strided<<<grid, block>>>(n, in, out);
  CK(cudaEventRecord(ev1));
  CK(cudaDeviceSynchronize());
  std::chrono::duration<double, std::milli> host = std::chrono::steady_clock::now() - t0;
  float ms;
  CK(cudaEventElapsedTime(&ms, ev0, ev1));
  CK(cudaGetLastError());
  printf("{\"variant\": \"%s\", \"host_ms\": %.6g, \"event_ms\": %.6g}\n", v.c_str(),
         host.count(), ms);
  return 0;
}
