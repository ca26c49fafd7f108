#!/usr/bin/env bash
# DRAM traffic as a timed run leaves it and the dynamic SASS per opcode, in one short device run
# (about 5 min on an H100): every plain port, the user kernels' ports and the restrict ports,
# profiled by Nsight Compute without its cache flush (--ncu-cache-control none) for
# NCU_METRICS_OPCODES on at most 3 launches of a timed run (measure.py --ncu-metrics opcodes).
# Everything lands in OUTDIR/opcodes.tar.gz.
# Usage: validation/gpu_opcodes.sh OUTDIR [PLAIN_S USER_S RESTRICT_S]   (budgets in seconds)
set -uo pipefail
out=${1:?usage: validation/gpu_opcodes.sh OUTDIR [PLAIN_S USER_S RESTRICT_S]}
plain_s=${2:-120} user_s=${3:-45} restrict_s=${4:-90}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mkdir -p "$out" "$work/opcodes"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
    > "$work/opcodes/gpu.csv" 2>&1 || { echo "gpu_opcodes.sh: no NVIDIA GPU" >&2; exit 5; }
start=$SECONDS
trap 'tar -C "$work" -czf "$out/opcodes.tar.gz" opcodes; echo "gpu_opcodes.sh: $((SECONDS - start)) s"' EXIT
m() {  # m NAME BUDGET ARGS...
    local name=$1 budget=$2; shift 2
    timeout $((budget + 90)) python3 "$here/validation/measure.py" --no-check --reps 3 \
        --ncu-metrics opcodes --ncu-cache-control none --ncu-launches 3 --timeout 60 \
        --budget "$budget" --bin-dir "$work/bin-$name" --out "$work/opcodes/$name.json" "$@" \
        > "$work/opcodes/$name.log" 2>&1
    echo "$name: rc $? $((SECONDS - start)) s"; tail -n 1 "$work/opcodes/$name.log"
}
m user "$user_s" --user --only sfu_heavy,particles,saxpy,jacobi2d,transpose,softmax,spmv_csr,histogram,nbody,nbody_f64,dot_gridstride,dot_reduce,index_decomp
m plain "$plain_s" --only gemm_tiled,2mm_tiled,3mm_tiled,syrk_tiled,syr2k_tiled,gesummv,gemver,gramschmidt,2dconv,deriche,gemm,2mm,3mm,syrk,syr2k,atax,bicg,mvt,corr,covar,dct1d,fdtd2d,3dconv,mm,syrk_transposed
m restrict "$restrict_s" --port restrict --only gemm_tiled,2mm_tiled,3mm_tiled,syrk_tiled,syr2k_tiled,gesummv,atax,bicg,gemm,3mm,dct1d,deriche,gemver,mvt,2mm,syrk,syr2k,mm
