#!/bin/bash
# t1: kernel spans of 2DCONV and sfu_heavy at the boost clock (see span.cu). Usage: bash run.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
mkdir -p "$OUT"
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -o "$OUT/span" span.cu > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
timeout 50 "$OUT/span" > "$OUT/span.json" 2> "$OUT/span.err"
echo "rc=$?" >> "$OUT/span.err"
rm -f "$OUT/span"
