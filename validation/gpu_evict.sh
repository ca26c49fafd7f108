#!/usr/bin/env bash
# Which launches write back a memset's dirty lines (fourteenth round, fourth call; about 1 min
# on an H100): dirty_evict (validation/ubench/dirty_evict.cu) timed (7 reps) and under
# ncu --cache-control none (3 reps). Usage: validation/gpu_evict.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_evict.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_plain "$out"
nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/dirty_evict" "$here/validation/ubench/dirty_evict.cu" \
    > "$out/dirty_evict.build.log" 2>&1 || exit 3
timeout 60 "$work/dirty_evict" 7 > "$out/dirty_evict.json" 2> "$out/dirty_evict.err"
echo "dirty_evict: rc $? $((SECONDS - start)) s"; cat "$out/dirty_evict.json"
timeout 120 "$ncu" --csv --page raw --print-units base --cache-control none \
    --kernel-name strided \
    --metrics gpu__time_duration.sum,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_write.sum \
    --log-file "$out/dirty_evict_ncu.csv" "$work/dirty_evict" 3 > /dev/null 2>&1
echo "dirty_evict ncu: rc $? $((SECONDS - start)) s"
