// Which L2 slice an address lands on (issue 24: the histogram's atomic slice share, eq. (A2),
// cgpredict/l2_slices.py, whose interleave and XOR bit were fitted to atomics.cu's sweep because
// the slice hash is not published). One launch per probed address: a single thread adds to it 8
// times (RED). Run under Nsight Compute with per-instance values, so that the L2 slice whose
// counters move is the address's slice:
//   ncu --csv --page raw --print-metric-instances values --cache-control none \
//       --metrics lts__t_sectors_op_red.sum -k touch slice_probe > slices.csv
// Offsets probed from a 64 MB cudaMalloc (2 MB pages: the low 21 bits of the virtual address are
// the physical ones): 0 .. 32 KB in steps of 128 B (256 launches, in order), then 2^15 .. 2^25.
// Prints one JSON object (the base address and the offsets, in launch order) on stdout.
// Usage: slice_probe
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 2; } } while (0)

__global__ void touch(unsigned* p) {
  if (threadIdx.x == 0)
    for (int k = 0; k < 8; ++k) atomicAdd(p, 1u);
}

int main() {
  const size_t bytes = 64u << 20;
  char* base;
  CK(cudaMalloc(&base, bytes));
  CK(cudaMemset(base, 0, bytes));
  std::vector<size_t> offsets;
  for (size_t o = 0; o < (32u << 10); o += 128) offsets.push_back(o);
  for (int b = 15; b <= 25; ++b) offsets.push_back((size_t)1 << b);
  for (size_t o : offsets) {
    touch<<<1, 32>>>(reinterpret_cast<unsigned*>(base + o));
    CK(cudaDeviceSynchronize());
  }
  printf("{\"bench\": \"slice_probe\", \"base\": %llu, \"offsets\": [",
         (unsigned long long)(size_t)base);
  for (size_t i = 0; i < offsets.size(); ++i)
    printf("%s%zu", i ? ", " : "", offsets[i]);
  printf("]}\n");
  return 0;
}
