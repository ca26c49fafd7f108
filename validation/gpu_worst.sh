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
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mkdir -p "$out" "$work/worst/ubench" "$work/ubin"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
    > "$work/worst/gpu.csv" 2>&1 || { echo "gpu_worst.sh: no NVIDIA GPU" >&2; exit 5; }
start=$SECONDS
finish() {
    tar -C "$work" -czf "$out/worst.tar.gz" worst
    echo "gpu_worst.sh: $((SECONDS - start)) s, $(du -h "$out/worst.tar.gz" | cut -f1)"
}
trap finish EXIT
ubench=(block_rate dram_random dram_inflight l1_wavefronts l1_banks loop_probe sm_bandwidth)
for name in "${ubench[@]}"; do
    nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/ubin/$name" "$here/validation/ubench/$name.cu" \
        > "$work/worst/ubench/$name.build.log" 2>&1 &
done
m() {  # m NAME BUDGET ARGS...: measure.py with the extended counters into worst/NAME*
    local name=$1 budget=$2; shift 2
    timeout $((budget + 60)) python3 "$here/validation/measure.py" --no-check --reps 3 \
        --ncu-metrics extended --ncu-launches 2 --timeout 60 --budget "$budget" \
        --bin-dir "$work/bin-$name" --out "$work/worst/$name.json" "$@" \
        > "$work/worst/$name.log" 2>&1
    echo "$name: rc $? $((SECONDS - start)) s"; tail -n 1 "$work/worst/$name.log"
}
m user "$user_s" --set user --only softmax,spmv_csr --configs-1d 32x1,128x1,256x1,1024x1
m blind "$blind_s" --set blind --only trmv_t,spmv_ell,strided --configs-1d 32x1,128x1,1024x1
wait  # the micro-benchmarks' builds
for name in "${ubench[@]}"; do
    [ -x "$work/ubin/$name" ] || { echo "$name: build failed"; continue; }
    timeout 120 "$work/ubin/$name" > "$work/worst/ubench/$name.json" \
        2> "$work/worst/ubench/$name.err"
    echo "$name: rc $? $((SECONDS - start)) s"
done
m more "$more_s" --set user --only particles,nbody --configs-1d 1024x1
