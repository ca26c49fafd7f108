#!/usr/bin/env bash
# The second pass of the worst rows' counters (about 3 min on an H100): Nsight Compute's extended
# counters (NCU_METRICS_EXTENDED, with the carve-out the driver chose) at the block shapes of the
# other-block sets where the model misses or has no counters yet: the blind mandelbrot 16x16/
# 64x4, gather, conv1d, heat1d and wavefront at 32x1/128x1/1024x1; corpus 3DCONV 16x16/64x4 and
# the ATAX/MVT/BICG row walks at 128x1; user saxpy, sfu_heavy and dot_gridstride at 128x1/1024x1.
# Everything lands in OUTDIR/worst2.tar.gz. Usage: validation/gpu_worst2.sh OUTDIR [BLIND_S CORPUS_S USER_S]
set -uo pipefail
out=${1:?usage: validation/gpu_worst2.sh OUTDIR [BLIND_S CORPUS_S USER_S]}
blind_s=${2:-110} corpus_s=${3:-50} user_s=${4:-50}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mkdir -p "$out" "$work/worst2"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
    > "$work/worst2/gpu.csv" 2>&1 || { echo "gpu_worst2.sh: no NVIDIA GPU" >&2; exit 5; }
start=$SECONDS
finish() {
    tar -C "$work" -czf "$out/worst2.tar.gz" worst2
    echo "gpu_worst2.sh: $((SECONDS - start)) s, $(du -h "$out/worst2.tar.gz" | cut -f1)"
}
trap finish EXIT
m() {  # m NAME BUDGET ARGS...: measure.py with the extended counters into worst2/NAME*
    local name=$1 budget=$2; shift 2
    timeout $((budget + 60)) python3 "$here/validation/measure.py" --no-check --reps 3 \
        --ncu-metrics extended --ncu-launches 2 --timeout 60 --budget "$budget" \
        --bin-dir "$work/bin-$name" --out "$work/worst2/$name.json" "$@" \
        > "$work/worst2/$name.log" 2>&1
    echo "$name: rc $? $((SECONDS - start)) s"; tail -n 1 "$work/worst2/$name.log"
}
m blind "$blind_s" --set blind --only mandelbrot,wavefront,heat1d,gather,conv1d \
    --configs-1d 32x1,128x1,1024x1 --configs 16x16,64x4
m corpus "$corpus_s" --only atax,mvt,bicg,3dconv --configs-1d 128x1 --configs 16x16,64x4
m user "$user_s" --set user --only saxpy,sfu_heavy,dot_gridstride --configs-1d 128x1,1024x1
