// What a port's reset leaves in the GPU before its first timed launch (round 17, t1; not yet
// run). docs/validation.md, "The streaming rows": a repetition's first event pair of a
// memory-heavy kernel holds 4-21 us (median 11) beyond Nsight Compute's duration of the same
// launch (which flushes the caches first) and the modelled launch costs, a compute-bound one
// none (validation/event_vs_ncu.py). The blind strided port (out[i] = in[3i] + in[3i + 2],
// N = 2^24, 128-thread blocks; its reset uploads `in`, 201 MB pageable, then cudaMemset's
// `out`, 67 MB) is timed here, one launch a state (cudaEvent pair, median of 7), after:
//   port:        the port's reset (pageable upload of in, memset of out);
//   port_clean:  the same, then a kernel that reads a 256 MB scratch array (the L2 then holds
//                clean lines of another array: whatever the reset left dirty is written back);
//   memset_only: only the memset of out;
//   upload_only: only the pageable upload of in (its first launch returns late: 15-34 us);
//   pinned:      a pinned upload of in, then the memset of out;
//   kernel_zero: out zeroed by a kernel (the SMs' writes: dirty lines of out in the L2);
//   none:        nothing (the launch before it was the same kernel).
// Each state is timed (a) on an idle GPU, as the ports do, and (b) queued behind a 200-us spin
// kernel, so that the pair holds only the GPU's part (the host's late launch call hidden).
// If the memset's write-back is the extra, port and memset_only keep it queued and
// port_clean loses it; if it is the host's, the queued pairs lose it. Pair with
//   ncu --cache-control none --metrics gpu__time_duration.sum,dram__bytes_write.sum
// of the port (dram writes over the flushed 60.4 MB: the dirty lines the reset left).
// Prints one JSON object. Usage: reset_state
#include "event_pair.h"
#include "l2_state.h"

__global__ void zero(int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.0f;
}

// one launch of f between the event pair; queued: behind a 200-us spin kernel
template <class F> static float timed(F f, bool queued) {
  if (queued) spin<<<1, 32>>>(400000);
  return timed(f);
}

int main() {
  const int n = 1 << 24, block = 128, grid = (n + block - 1) / block;
  CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
  std::vector<float> hin(3 * (size_t)n);
  for (size_t k = 0; k < hin.size(); ++k) hin[k] = (float)(k % 17);
  float *pin, *in, *out, *sink;
  float4* scratch;
  const size_t sn = (256u << 20) / sizeof(float4);
  CK(cudaMallocHost(&pin, sizeof(float) * hin.size()));
  std::copy(hin.begin(), hin.end(), pin);
  CK(cudaMalloc(&in, sizeof(float) * hin.size()));
  CK(cudaMalloc(&out, sizeof(float) * n));
  CK(cudaMalloc(&scratch, sn * sizeof(float4)));
  CK(cudaMalloc(&sink, sizeof(float)));
  CK(cudaMemset(scratch, 0, sn * sizeof(float4)));
  const size_t in_bytes = sizeof(float) * hin.size(), out_bytes = sizeof(float) * n;
  auto upload = [&] { CK(cudaMemcpy(in, hin.data(), in_bytes, cudaMemcpyHostToDevice)); };
  auto upload_pinned = [&] { CK(cudaMemcpy(in, pin, in_bytes, cudaMemcpyHostToDevice)); };
  auto memset_out = [&] { CK(cudaMemset(out, 0, out_bytes)); };
  auto launch = [&] { strided<<<grid, block>>>(n, in, out); };
  const char* names[7] = {"port", "port_clean", "memset_only", "upload_only", "pinned",
                          "kernel_zero", "none"};
  auto prepare = [&](int s) {
    if (s == 0 || s == 1 || s == 3) upload();
    if (s == 4) upload_pinned();
    if (s == 0 || s == 1 || s == 2 || s == 4) memset_out();
    if (s == 1) read_all<<<132 * 8, 256>>>(sn, scratch, sink);
    if (s == 5) zero<<<grid, block>>>(n, out);
    CK(cudaDeviceSynchronize());
  };
  upload(); memset_out(); launch(); CK(cudaDeviceSynchronize());  // warm-up
  printf("{\"bench\": \"reset_state\", \"kernel\": \"strided\", \"n\": %d, \"block\": %d", n,
         block);
  for (int q = 0; q < 2; ++q) {
    printf(", \"%s\": {", q ? "queued" : "idle");
    for (int s = 0; s < 7; ++s) {
      std::vector<float> t;
      for (int r = 0; r < 7; ++r) {
        prepare(s);
        t.push_back(timed(launch, q == 1));
      }
      CK(cudaGetLastError());
      printf("%s\"%s_ms\": %.6g", s ? ", " : "", names[s], median(t));
    }
    printf("}");
  }
  printf("}\n");
  return 0;
}
