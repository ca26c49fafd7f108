#!/usr/bin/env bash
# The PolyBench/GPU host code's L2 state (fourteenth round, third call; about 1.5 min on an
# H100): alloc_state (validation/ubench/alloc_state.cu), 5 processes a variant timed, then one
# a variant under ncu --cache-control none (the launch's DRAM writes). Usage: gpu_alloc.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_alloc.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_plain "$out"
nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/alloc_state" "$here/validation/ubench/alloc_state.cu" \
    > "$out/alloc_state.build.log" 2>&1 || exit 3
for v in polybench upload_all memset clean; do
    for r in 1 2 3 4 5; do timeout 30 "$work/alloc_state" "$v"; done
done > "$out/alloc_state.jsonl" 2> "$out/alloc_state.err"
echo "alloc_state: $((SECONDS - start)) s"; cat "$out/alloc_state.jsonl"
for v in polybench upload_all memset clean; do
    timeout 60 "$ncu" --csv --page raw --print-units base --cache-control none \
        --kernel-name strided \
        --metrics gpu__time_duration.sum,dram__bytes_write.sum,dram__bytes_read.sum \
        --log-file "$out/alloc_ncu_$v.csv" "$work/alloc_state" "$v" > /dev/null 2>&1
    echo "ncu $v: rc $? $((SECONDS - start)) s"
done
