#!/usr/bin/env bash
# The worst rows' counters and the waiting micro-benchmarks, in one short device run (about
# 6 min on an H100):
#   1. the micro-benchmarks no lease had yet run (validation/ubench: block_rate, dram_random,
#      dram_inflight, l1_wavefronts, l1_banks, loop_probe, sm_bandwidth), built in parallel
#      while the profiles run, then run one at a time (120 s bound each);
#   2. Nsight Compute's extended counters (NCU_METRICS_EXTENDED, with the L1/shared carve-out
#      the driver chose) at the block shapes the model misses most: softmax and spmv_csr at
#      32x1..1024x1 (user ports), trmv_t, spmv_ell and strided at 32x1/128x1/1024x1 (blind
#      ports), particles and nbody at 1024x1.
# Everything lands in OUTDIR/worst.tar.gz (one file: a device run returns at most 8).
# Usage: validation/gpu_worst.sh OUTDIR [USER_S BLIND_S MORE_S]   (budgets in seconds)
set -uo pipefail
out=${1:?usage: validation/gpu_worst.sh OUTDIR [USER_S BLIND_S MORE_S]}
user_s=${2:-90} blind_s=${3:-100} more_s=${4:-40}
. "$(dirname "$0")/gpu_lib.sh"
gpu_begin "$out" worst
mkdir -p "$work/worst/ubench" "$work/ubin"
ubench=(block_rate dram_random dram_inflight l1_wavefronts l1_banks loop_probe sm_bandwidth)
for ub in "${ubench[@]}"; do
    nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/ubin/$ub" "$here/validation/ubench/$ub.cu" \
        > "$work/worst/ubench/$ub.build.log" 2>&1 &
done
m user "$user_s" --set user --only softmax,spmv_csr --configs-1d 32x1,128x1,256x1,1024x1
m blind "$blind_s" --set blind --only trmv_t,spmv_ell,strided --configs-1d 32x1,128x1,1024x1
wait  # the micro-benchmarks' builds
for ub in "${ubench[@]}"; do
    [ -x "$work/ubin/$ub" ] || { echo "$ub: build failed"; continue; }
    timeout 120 "$work/ubin/$ub" > "$work/worst/ubench/$ub.json" \
        2> "$work/worst/ubench/$ub.err"
    echo "$ub: rc $? $((SECONDS - start)) s"
done
m more "$more_s" --set user --only particles,nbody --configs-1d 1024x1
