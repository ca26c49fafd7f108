#!/usr/bin/env bash
# A warp's round of K DRAM loads with the L2 cold, by warps walking at once and lanes loading
# (fourteenth round, last call; about 30 s on an H100): validation/ubench/dram_spread.cu, and
# dram_inflight.cu again on the same lease for comparison. Usage: validation/gpu_spread.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_spread.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_plain "$out"
for b in dram_spread dram_inflight; do
    nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/$b" "$here/validation/ubench/$b.cu" \
        > "$out/$b.build.log" 2>&1 && timeout 90 "$work/$b" > "$out/$b.txt" 2> "$out/$b.err"
    echo "$b: rc $? $SECONDS s"
done
cat "$out/dram_spread.txt"
