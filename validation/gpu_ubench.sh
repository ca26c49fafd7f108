#!/bin/bash
# Build and run every micro-benchmark of validation/ubench/ on the GPU of this machine, one JSON
# file each in OUT (default validation/measured/ubench-$(date +%F)): atomics.cu (atomics per
# address and per L2 slice), dep_chain.cu (dependent-chain latencies of the div/sqrt expansions),
# l1_lines.cu (sustained L1-hit warp loads an SM a cycle: one-line requests, line, broadcast
# and gemm modes, give the device field l1_request_cycles, fitted until then; 32-line ones,
# rows mode, / 32 give l1_line_cycles: eq. (B2r), docs/models.md).
# Each run is bounded by 120 s; a build or run that fails is logged and the others go on.
# Needs nvcc and an sm_90 GPU (override with ARCH=sm_XX). About 30 s on an H100.
set -u
cd "$(dirname "$0")/.."
OUT=${1:-validation/measured/ubench-$(date +%F)}
ARCH=${ARCH:-sm_90}
mkdir -p "$OUT/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.csv" 2>&1
for src in validation/ubench/*.cu; do
  name=$(basename "$src" .cu)
  if nvcc -O3 -arch="$ARCH" -o "$OUT/bin/$name" "$src" > "$OUT/$name.build.log" 2>&1; then
    timeout 120 "$OUT/bin/$name" > "$OUT/$name.json" 2> "$OUT/$name.err" \
      || echo "$name: run failed (rc $?)" | tee -a "$OUT/failures.log"
  else
    echo "$name: build failed, see $name.build.log" | tee -a "$OUT/failures.log"
  fi
done
rm -rf "$OUT/bin"
ls -l "$OUT"
