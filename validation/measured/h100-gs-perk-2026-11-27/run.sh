#!/bin/bash
# bash run.sh OUTDIR -- GRAMSCHMIDT per-column launch times (t2); about 13 x 3 x 15 ms + build
set -e
OUT=${1:?usage: bash run.sh OUTDIR}
mkdir -p "$OUT"
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -o "$OUT/gs_perk" gs_perk.cu
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader || true; "$OUT/gs_perk"; } > "$OUT/gs_perk.csv" 2>&1
rm -f "$OUT/gs_perk"
