// How many dirty bytes the L2 holds for the next launch to write back (fourteenth round).
// reset_state.cu found the ports' first-event-pair extra: the blind strided launch after the
// port's reset (upload of in, cudaMemset of out) writes 23.7 MB more to DRAM than after a clean
// L2 (ncu --cache-control none: 81.5 vs 57.8 MB) and its event pair is 9.4 us longer idle,
// 5.2 us queued. Here a 256 MB junk buffer the kernel never touches is dirtied by S MB before
// the strided launch (n = 2^24, 128-thread blocks), after a read of a 256 MB scratch array has
// left the L2 clean, in three ways: cudaMemset (mode memset), a pageable cudaMemcpy (upload)
// and a kernel's stores (kernel). The launch's event pair (median of REPS, idle) is printed per
// mode and S; under ncu --cache-control none --kernel-name strided, dram__bytes_write.sum of
// each launch gives the dirty bytes that the launch wrote back (launch 0 is the warm-up, then
// modes x sizes x REPS in the printed order). Usage: dirty_l2 [REPS=5]
#include <string>
#include "event_pair.h"
#include "l2_state.h"

__global__ void fill(size_t n, float* p) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = 1.0f;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 5;
  const int n = 1 << 24, block = 128, grid = (n + block - 1) / block;
  const int sizes_mb[] = {0, 4, 8, 16, 24, 32, 40, 48, 64, 128};
  const char* modes[] = {"memset", "upload", "kernel"};
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  const size_t junk_bytes = 256u << 20, sn = (256u << 20) / sizeof(float4);
  std::vector<char> host(junk_bytes, 1);
  float *in, *out, *junk, *sink;
  float4* scratch;
  CK(cudaMalloc(&in, sizeof(float) * 3 * (size_t)n));
  CK(cudaMalloc(&out, sizeof(float) * n));
  CK(cudaMalloc(&junk, junk_bytes));
  CK(cudaMalloc(&scratch, sn * sizeof(float4)));
  CK(cudaMalloc(&sink, sizeof(float)));
  CK(cudaMemset(in, 0, sizeof(float) * 3 * (size_t)n));
  CK(cudaMemset(scratch, 0, sn * sizeof(float4)));
  auto launch = [&] { strided<<<grid, block>>>(n, in, out); };
  launch(); CK(cudaDeviceSynchronize());  // warm-up
  printf("{\"bench\": \"dirty_l2\", \"kernel\": \"strided\", \"n\": %d, \"reps\": %d", n, reps);
  for (int m = 0; m < 3; ++m) {
    printf(", \"%s\": {", modes[m]);
    for (int k = 0; k < 10; ++k) {
      const size_t bytes = (size_t)sizes_mb[k] << 20;
      std::vector<float> t;
      for (int r = 0; r < reps; ++r) {
        read_all<<<132 * 8, 256>>>(sn, scratch, sink);  // the L2 clean
        if (bytes && m == 0) CK(cudaMemset(junk, 0, bytes));
        if (bytes && m == 1) CK(cudaMemcpy(junk, host.data(), bytes, cudaMemcpyHostToDevice));
        if (bytes && m == 2) fill<<<132 * 8, 256>>>(bytes / sizeof(float), junk);
        CK(cudaDeviceSynchronize());
        t.push_back(timed(launch));
      }
      CK(cudaGetLastError());
      printf("%s\"%d_ms\": %.6g", k ? ", " : "", sizes_mb[k], median(t));
    }
    printf("}");
  }
  printf("}\n");
  return 0;
}
