#!/usr/bin/env bash
# The dirty L2 a port's reset leaves (fourteenth round, second call of the lease; about 2 min on
# an H100): 1. dirty_l2 (validation/ubench/dirty_l2.cu), event pairs after S MB dirtied by
# memset, upload and a kernel, and its ncu DRAM writes per launch (3 reps); 2. the blind
# conv1d and strided ports timed (7 reps, no counters) and under ncu --cache-control none
# (warm-up + 3 reps: each rep's launch after the port's reset), the DRAM bytes each wrote.
# Everything lands in OUTDIR. Usage: validation/gpu_dirty.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_dirty.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_plain "$out"
metrics=gpu__time_duration.sum,dram__bytes_write.sum,dram__bytes_read.sum
if nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/dirty_l2" "$here/validation/ubench/dirty_l2.cu" \
    > "$out/dirty_l2.build.log" 2>&1; then
    timeout 120 "$work/dirty_l2" 7 > "$out/dirty_l2.json" 2> "$out/dirty_l2.err"
    echo "dirty_l2: rc $? $((SECONDS - start)) s"; cat "$out/dirty_l2.json"
    timeout 150 "$ncu" --csv --page raw --print-units base --cache-control none \
        --kernel-name strided --metrics "$metrics" --log-file "$out/dirty_l2_ncu.csv" \
        "$work/dirty_l2" 3 > /dev/null 2>&1
    echo "dirty_l2 ncu: rc $? $((SECONDS - start)) s"
fi
timeout 120 python3 "$here/validation/measure.py" --no-check --no-ncu --reps 7 --timeout 30 \
    --budget 60 --bin-dir "$work/bin" --out "$out/ports.json" --set blind \
    --only conv1d,strided > "$out/ports.log" 2>&1
echo "ports: rc $? $((SECONDS - start)) s"; tail -n 1 "$out/ports.log"
for k in conv1d strided; do
    b=$(find "$work/bin" -type f -name "$k" -perm -u+x | head -n 1)
    [ -n "$b" ] || continue
    timeout 60 "$ncu" --csv --page raw --print-units base --cache-control none \
        --metrics "$metrics" --log-file "$out/port_${k}_ncu.csv" "$b" --reps 3 > /dev/null 2>&1
    echo "ncu $k: rc $? $((SECONDS - start)) s"
done
