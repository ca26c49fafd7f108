#!/usr/bin/env bash
# The extended counters of a lease, in one command that fits a short device run (about 7 min on
# an H100): every plain port, the user kernels' ports and the restrict ports that bear on the
# open mechanisms, each profiled by Nsight Compute with NCU_METRICS_EXTENDED (the L1's
# requests and data-stage wavefronts, the L2's read and write sectors, the SM's cycles and
# issue, every pipe and stall reason, the dynamic SASS instructions per opcode) on at most 3
# launches of a timed run, plus validation/ubench/loop_trip.cu (eq. (LT) with several warps).
# Everything lands in OUTDIR/counters.tar.gz (one file: a device run returns at most 8).
# Usage: validation/gpu_counters.sh OUTDIR [PLAIN_S USER_S RESTRICT_S]   (budgets in seconds)
set -uo pipefail
out=${1:?usage: validation/gpu_counters.sh OUTDIR [PLAIN_S USER_S RESTRICT_S]}
plain_s=${2:-170} user_s=${3:-50} restrict_s=${4:-90}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mkdir -p "$out" "$work/counters"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
    > "$work/counters/gpu.csv" 2>&1 || { echo "gpu_counters.sh: no NVIDIA GPU" >&2; exit 5; }
start=$SECONDS
finish() {
    tar -C "$work" -czf "$out/counters.tar.gz" counters
    echo "gpu_counters.sh: $((SECONDS - start)) s, $(du -h "$out/counters.tar.gz" | cut -f1)"
}
trap finish EXIT

nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/loop_trip" "$here/validation/ubench/loop_trip.cu" \
    > "$work/counters/build-loop_trip.log" 2>&1 &&
    timeout 60 "$work/loop_trip" > "$work/counters/loop_trip.json" 2> "$work/counters/loop_trip.err"
echo "loop_trip: rc $? $((SECONDS - start)) s"

m() {  # m NAME BUDGET ARGS...: measure.py with the extended counters into counters/NAME*
    local name=$1 budget=$2; shift 2
    timeout $((budget + 90)) python3 "$here/validation/measure.py" --no-check --reps 3 \
        --ncu-metrics extended --ncu-launches 3 --timeout 60 --budget "$budget" \
        --bin-dir "$work/bin-$name" --out "$work/counters/$name.json" "$@" \
        > "$work/counters/$name.log" 2>&1
    echo "$name: rc $? $((SECONDS - start)) s"; tail -n 1 "$work/counters/$name.log"
}
m plain "$plain_s" --only gramschmidt,2dconv,gesummv,gemver,gemm_tiled,deriche,gemm,2mm,3mm,syrk,syr2k,syrk_tiled,syr2k_tiled,2mm_tiled,3mm_tiled,atax,bicg,mvt,corr,covar,dct1d,fdtd2d,3dconv,mm,syrk_transposed
m user "$user_s" --user --only sfu_heavy,particles,jacobi2d,histogram,softmax,spmv_csr,transpose,saxpy,nbody,nbody_f64,dot_gridstride,dot_reduce,index_decomp
m restrict "$restrict_s" --port restrict --only 3mm,gemm_tiled,gemm,2mm,syrk,syr2k,dct1d,2dconv,deriche,mm,3mm_tiled,2mm_tiled,atax,bicg,gesummv
