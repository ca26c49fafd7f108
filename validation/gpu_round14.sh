#!/usr/bin/env bash
# The fourteenth round's one lease (about 8 min on an H100), in the order of what the open misses
# need: 1. reset_state (validation/ubench/reset_state.cu) and Nsight Compute's DRAM writes of its
# strided launches, the first-event-pair extra of the streaming rows; 2. gpu_loops.sh, the host
# loops of short launches (heat1d, wavefront, 3DCONV) with the host clock, ncu and nsys;
# 3. gpu_shapes.sh, the 2-D stencils at four shapes in one lease.
# Everything lands in OUTDIR (reset_state.json, reset_ncu.csv, loops.tar.gz, shapes.tar.gz).
# Usage: validation/gpu_round14.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_round14.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_plain "$out"
rs=$work/reset_state
if nvcc -O3 -arch="${ARCH:-sm_90}" -o "$rs" "$here/validation/ubench/reset_state.cu" \
    > "$out/reset_state.build.log" 2>&1; then
    timeout 90 "$rs" > "$out/reset_state.json" 2> "$out/reset_state.err"
    echo "reset_state: rc $? $((SECONDS - start)) s"; cat "$out/reset_state.json"
    timeout 90 "$ncu" --csv --page raw --print-units base --cache-control none \
        --kernel-name strided --launch-count 15 \
        --metrics gpu__time_duration.sum,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_write.sum \
        --log-file "$out/reset_ncu.csv" "$rs" > /dev/null 2>&1
    echo "reset_state ncu: rc $? $((SECONDS - start)) s"
fi
timeout 300 bash "$here/validation/gpu_loops.sh" "$out"
echo "loops: rc $? $((SECONDS - start)) s"
timeout 200 bash "$here/validation/gpu_shapes.sh" "$out" 90 35
echo "shapes: rc $? $((SECONDS - start)) s"
