// Which launches write back the dirty lines a cudaMemset left in the L2 (fourteenth round):
// dirty_l2.cu found the H100's L2 keeps at most 24.4 MB dirty after a memset or a kernel's
// stores, and that a 268 MB streaming launch writes all of it back. Here the strided kernel
// (out[i] = in[3i] + in[3i+2], 128-thread blocks) runs at n = 2^18 .. 2^24 (4 .. 268 MB of
// traffic) after a 256 MB scratch read has left the L2 clean (S = 0) and after a 64 MB
// cudaMemset of a junk buffer the kernel never touches (S = 64: 24.4 MB dirty). The event pair
// (median of REPS) is printed per n and S; under ncu --cache-control none --kernel-name strided
// dram__bytes_write.sum of each launch (warm-up first, then n x S x REPS in the printed order)
// gives the dirty bytes the launch wrote back: how that share grows with the launch's footprint.
// Usage: dirty_evict [REPS=5]
#include "event_pair.h"
#include "l2_state.h"

int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 5;
  const int nmax = 1 << 24, block = 128;
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  const size_t junk_bytes = 64u << 20, sn = (256u << 20) / sizeof(float4);
  float *in, *out, *junk, *sink;
  float4* scratch;
  CK(cudaMalloc(&in, sizeof(float) * 3 * (size_t)nmax));
  CK(cudaMalloc(&out, sizeof(float) * nmax));
  CK(cudaMalloc(&junk, junk_bytes));
  CK(cudaMalloc(&scratch, sn * sizeof(float4)));
  CK(cudaMalloc(&sink, sizeof(float)));
  CK(cudaMemset(in, 0, sizeof(float) * 3 * (size_t)nmax));
  CK(cudaMemset(scratch, 0, sn * sizeof(float4)));
  strided<<<nmax / block, block>>>(nmax, in, out);  // warm-up
  CK(cudaDeviceSynchronize());
  printf("{\"bench\": \"dirty_evict\", \"kernel\": \"strided\", \"reps\": %d, \"junk_mb\": 64",
         reps);
  for (int lg = 18; lg <= 24; ++lg) {
    const int n = 1 << lg, grid = (n + block - 1) / block;
    for (int s = 0; s < 2; ++s) {
      std::vector<float> t;
      for (int r = 0; r < reps; ++r) {
        read_all<<<132 * 8, 256>>>(sn, scratch, sink);  // the L2 clean
        if (s) CK(cudaMemset(junk, 0, junk_bytes));
        CK(cudaDeviceSynchronize());
        t.push_back(timed([&] { strided<<<grid, block>>>(n, in, out); }));
      }
      CK(cudaGetLastError());
      printf(", \"n%d_s%d_ms\": %.6g", lg, s ? 64 : 0, median(t));
    }
  }
  printf("}\n");
  return 0;
}
