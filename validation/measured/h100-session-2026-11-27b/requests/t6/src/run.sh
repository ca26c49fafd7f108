#!/bin/bash
# t6: row-walk fill cost vs miss latency. Usage: bash run.sh OUTDIR
set -e
OUT=${1:?OUTDIR}
mkdir -p "$OUT"
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -o "$OUT/rowwalk" rowwalk.cu
timeout 50 "$OUT/rowwalk" "$OUT/rowwalk.csv"
rm -f "$OUT/rowwalk"
cat "$OUT/rowwalk.csv"
