#!/bin/bash
# t7: loop trips of 8 dependent ops with and without register-bank conflicts, 1..32 warps on
# one SM (eq. (LT)). Usage: bash run.sh OUTDIR   (about 5 s on an H100)
set -u
OUT="${1:?usage: bash run.sh OUTDIR}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")"
B=$(mktemp -d)
nvcc -O3 -arch=sm_90 -o "$B/loop_trip2" loop_trip2.cu > "$OUT/build.log" 2>&1 || { echo "build failed" >> "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> "$OUT/build.log" 2>&1
timeout 50 "$B/loop_trip2" 4096 > "$OUT/loop_trip2.json" 2> "$OUT/loop_trip2.err"
echo "rc=$?" >> "$OUT/build.log"
rm -rf "$B"
