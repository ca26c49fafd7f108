#!/usr/bin/env bash
# The second GPU command of a session (after gpu_session.sh): time the ports at the shared
# measurements' other sizes (validation/measured/h100.json), with counters, and the user
# kernels' restrict ports. About 3 minutes on one H100.
#
# Usage: validation/gpu_sizes.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_sizes.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
m() {  # m NAME ARGS...: one measure.py run into OUTDIR/NAME.json, binaries of its own
    local name=$1; shift
    python3 "$here/validation/measure.py" --out "$out/$name.json" --bin-dir "$out/bin-$name" \
        --timeout 60 --budget 60 "$@" 2>&1 | tee "$out/$name.log"
}
m gemver-4096 --only gemver --sizes N=4096
m 2dconv-2048 --only 2dconv --sizes NI=2048,NJ=2048 --configs 32x8
m fdtd2d-2048 --only fdtd2d --sizes NX=2048,NY=2048,TMAX=100
m fdtd2d-4096-t100 --only fdtd2d --sizes NX=4096,NY=4096,TMAX=100 --configs 32x8
m n8192 --only atax,mvt --sizes NX=8192,NY=8192,N=8192
m n2048 --only gemm,syrk,gemm_tiled --sizes NI=2048,NJ=2048,NK=2048
m corr-2048 --only corr --sizes M=2048,N=2048 --no-ncu
python3 "$here/validation/measure.py" --user --port restrict --no-ncu \
    --out "$out/user-restrict.json" --bin-dir "$out/bin-user" --timeout 60 --budget 60 2>&1 |
    tee "$out/user-restrict.log"
rm -rf "$out"/bin-*
