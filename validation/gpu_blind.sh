#!/usr/bin/env bash
# The blind check's measurements, in one short device run (about 5 min on an H100): the ports
# of examples/blind (validation/cuda/blind), written after the model and predicted before this
# run (validation/results/blind-predictions.*), timed with their --check runs:
#   1. plain ports, timed, and profiled by Nsight Compute with NCU_METRICS_EXTENDED (a superset
#      of what `cgpredict explain` reads) on at most 3 launches of a timed run;
#   2. restrict ports, timed (no counters);
#   3. plain ports at other block shapes (BLOCKS_1D, BLOCKS_2D), timed (no counters, no check):
#      what the advisor's block sweep predicts;
#   4. plain ports profiled without ncu's cache flush for DRAM bytes and per-opcode SASS
#      (NCU_METRICS_OPCODES, --ncu-cache-control none).
# Everything lands in OUTDIR/blind.tar.gz (one file: a device run returns at most 8).
# Usage: validation/gpu_blind.sh OUTDIR [PLAIN_S RESTRICT_S BLOCKS_S OPCODES_S]  (seconds each)
set -uo pipefail
out=${1:?usage: validation/gpu_blind.sh OUTDIR [PLAIN_S RESTRICT_S BLOCKS_S OPCODES_S]}
plain_s=${2:-150} restrict_s=${3:-60} blocks_s=${4:-60} opcodes_s=${5:-60}
BLOCKS_1D=32x1,128x1,1024x1 BLOCKS_2D=16x16,64x4  # validation/blind_predict.py predicts these
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mkdir -p "$out" "$work/blind"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
    > "$work/blind/gpu.csv" 2>&1 || { echo "gpu_blind.sh: no NVIDIA GPU" >&2; exit 5; }
start=$SECONDS
finish() {
    tar -C "$work" -czf "$out/blind.tar.gz" blind
    echo "gpu_blind.sh: $((SECONDS - start)) s, $(du -h "$out/blind.tar.gz" | cut -f1)"
}
trap finish EXIT
m() {  # m NAME BUDGET ARGS...: measure.py --set blind into blind/NAME*
    local name=$1 budget=$2; shift 2
    timeout $((budget + 90)) python3 "$here/validation/measure.py" --set blind --timeout 60 \
        --budget "$budget" --bin-dir "$work/bin-$name" --out "$work/blind/$name.json" "$@" \
        > "$work/blind/$name.log" 2>&1
    echo "$name: rc $? $((SECONDS - start)) s"; tail -n 1 "$work/blind/$name.log"
}
m plain "$plain_s" --ncu-metrics extended --ncu-launches 3
m restrict "$restrict_s" --port restrict --no-ncu
m blocks "$blocks_s" --no-check --no-ncu --configs-1d "$BLOCKS_1D" --configs "$BLOCKS_2D"
m opcodes "$opcodes_s" --no-check --reps 3 --ncu-metrics opcodes --ncu-cache-control none \
    --ncu-launches 3
