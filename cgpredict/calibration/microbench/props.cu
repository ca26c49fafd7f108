// Device query: the CUDA runtime's description of GPU 0 (no timing). Fields that are facts
// of the chip (SM count, resident limits, register file, shared memory, L2 size, memory size)
// replace the base device file's datasheet values. Also measures the effective SM clock.
#include "common.cuh"

int main(int argc, char** argv) {
  (void)argc; (void)argv;
  Json j;
  common_fields(j, "props");
  int major = attr(cudaDevAttrComputeCapabilityMajor), minor = attr(cudaDevAttrComputeCapabilityMinor);
  j.str("compute_capability", (std::to_string(major) + "." + std::to_string(minor)).c_str());
  j.integer("warp_size", attr(cudaDevAttrWarpSize));
  j.integer("max_threads_per_sm", attr(cudaDevAttrMaxThreadsPerMultiProcessor));
  j.integer("max_blocks_per_sm", attr(cudaDevAttrMaxBlocksPerMultiprocessor));
  j.integer("max_threads_per_block", attr(cudaDevAttrMaxThreadsPerBlock));
  j.integer("registers_per_sm", attr(cudaDevAttrMaxRegistersPerMultiprocessor));
  j.integer("registers_per_block_max", attr(cudaDevAttrMaxRegistersPerBlock));
  j.integer("shared_mem_per_sm_bytes", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  j.integer("shared_mem_per_block_max_bytes", attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  j.integer("shared_mem_reserved_per_block_bytes", attr(cudaDevAttrReservedSharedMemoryPerBlock));
  j.integer("l2_bytes", attr(cudaDevAttrL2CacheSize));
  j.integer("global_l1_cache_supported", attr(cudaDevAttrGlobalL1CacheSupported));
  j.integer("memory_bus_width_bits", attr(cudaDevAttrGlobalMemoryBusWidth));
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  j.integer("dram_bytes", (long long)total_b);
  j.integer("free_bytes", (long long)free_b);
  char bus[64] = {0};
  CK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  j.str("pci_bus_id", bus);
  int rt = 0, drv = 0;
  CK(cudaRuntimeGetVersion(&rt));
  CK(cudaDriverGetVersion(&drv));
  j.integer("cuda_runtime_version", rt);
  j.integer("cuda_driver_version", drv);
  j.print();
  return 0;
}
