#!/usr/bin/env bash
# FDTD-2D's launches in their timed sequence (fourteenth round, last call; about 1.5 min on an
# H100): the corpus port at 16x16 and 32x8, two mid-run steps (k1, k2, k3 twice: launches
# 750-755 of the warm-up run) under Nsight Compute with the caches as the sequence leaves them
# (--cache-control none) and flushed (all), to see whether k2 at 16x16 pays for the dirty
# lines k1 leaves (docs/validation.md, "The 2-D stencils at four shapes in one lease": 12.8 us
# of k2's step appears only in the event-timed sequence). Usage: validation/gpu_fdtd_seq.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_fdtd_seq.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_plain "$out"
timeout 120 python3 "$here/validation/measure.py" --no-check --no-ncu --reps 3 --timeout 60 \
    --budget 90 --bin-dir "$work/bin" --out "$out/fdtd2d.json" --only fdtd2d \
    --configs 16x16,32x8 > "$out/fdtd2d.log" 2>&1
echo "time: rc $? $((SECONDS - start)) s"; tail -n 1 "$out/fdtd2d.log"
b=$(find "$work/bin" -type f -name fdtd2d -perm -u+x | head -n 1)
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.max
m+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
m+=,lts__t_sector_hit_rate.pct
for blk in 16x16 32x8; do
    for cc in none all; do
        [ -n "$b" ] || break
        timeout 90 "$ncu" --csv --page raw --print-units base --cache-control "$cc" \
            --metrics "$m" --launch-skip 750 --launch-count 6 \
            --log-file "$out/fdtd2d-$blk-$cc.csv" "$b" --block "$blk" --reps 1 > /dev/null 2>&1
        echo "ncu $blk $cc: rc $? $((SECONDS - start)) s"
    done
done
