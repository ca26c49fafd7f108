#!/usr/bin/env bash
# The host loops of short launches split on the GPU itself (thirteenth round, t7; about 4 min on
# an H100): what validation/launch_split.py cannot separate from the committed leases.
#   1. times, 7 reps, no counters, with the ports' host clock (all_host_issue_ms, common.cuh):
#      the blind heat1d and wavefront at 32x1/128x1/256x1/1024x1, plain and restrict, and the
#      corpus 3DCONV at 32x32/32x8/16x16/64x4, all in one lease, so each row has its run's pace;
#   2. Nsight Compute on wavefront's middle diagonals (launches 998-1000 and 2040-2042 of the
#      warm-up: 999-1001 and 2041-2043 cells) at 128x1 and 1024x1, caches as the loop leaves
#      them: the GPU's time of the large launches, which the first-two-launch profiles lack;
#   3. loop_probe (validation/ubench): the host's period and the queued pairs on this host;
#   4. where nsys is installed, a CUDA trace of wavefront at 128x1 and 1024x1 and heat1d at
#      256x1: every launch's GPU start and end and the host's API calls, the split per launch.
# Everything lands in OUTDIR/loops.tar.gz. Usage: validation/gpu_loops.sh OUTDIR
set -uo pipefail
out=${1:?usage: validation/gpu_loops.sh OUTDIR}
. "$(dirname "$0")/gpu_lib.sh"
gpu_begin "$out" loops
d=$work/loops
t() {  # t RUN PORT ARGS...: times only, 7 reps, bounded
    local run=$1 port=$2; shift 2
    timeout 150 python3 "$here/validation/measure.py" --no-check --no-ncu --reps 7 \
        --timeout 30 --budget 90 --port "$port" --bin-dir "$work/bin-$run" \
        --out "$d/$run.json" "$@" > "$d/$run.log" 2>&1
    echo "$run: rc $? $((SECONDS - start)) s"; tail -n 1 "$d/$run.log"
}
mkdir -p "$work/ubin"
nvcc -O3 -arch="${ARCH:-sm_90}" -o "$work/ubin/loop_probe" "$here/validation/ubench/loop_probe.cu" \
    > "$d/loop_probe.build.log" 2>&1 &
t blind plain --set blind --only heat1d,wavefront --configs-1d 32x1,128x1,256x1,1024x1
t blind-restrict restrict --set blind --only heat1d,wavefront --configs-1d 32x1,128x1,256x1,1024x1
t corpus plain --only 3dconv --configs 32x32,32x8,16x16,64x4
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
wf=$(find "$work/bin-blind" -type f -name wavefront -perm -u+x | head -n 1)
metrics=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.max,launch__grid_size
metrics+=,launch__block_size,lts__t_sectors.sum,l1tex__data_pipe_lsu_wavefronts.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
metrics+=,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
metrics+=,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
metrics+=,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
for b in 128x1 1024x1; do
    for skip in 998 2040; do
        [ -n "$wf" ] || break
        timeout 60 "$ncu" --csv --page raw --print-units base --cache-control none \
            --metrics "$metrics" --launch-skip "$skip" --launch-count 3 \
            --log-file "$d/wavefront-$b-skip$skip.csv" "$wf" --block "$b" --reps 1 \
            > /dev/null 2>&1
        echo "ncu wavefront $b skip $skip: rc $? $((SECONDS - start)) s"
    done
done
wait  # loop_probe's build
[ -x "$work/ubin/loop_probe" ] && timeout 120 "$work/ubin/loop_probe" > "$d/loop_probe.json" \
    2> "$d/loop_probe.err"
echo "loop_probe: rc $? $((SECONDS - start)) s"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
    2>/dev/null | head -n 1)
heat=$(find "$work/bin-blind" -type f -name heat1d -perm -u+x | head -n 1)
if [ -n "$nsys" ]; then
    for job in "wavefront 128x1 $wf" "wavefront 1024x1 $wf" "heat1d 256x1 $heat"; do
        set -- $job
        [ -n "${3:-}" ] || continue
        timeout 90 "$nsys" profile -t cuda --force-overwrite true -o "$d/nsys-$1-$2" \
            "$3" --block "$2" --reps 3 > "$d/nsys-$1-$2.log" 2>&1 &&
        timeout 90 "$nsys" stats -r cuda_gpu_trace,cuda_api_trace -f csv \
            -o "$d/nsys-$1-$2" "$d/nsys-$1-$2.nsys-rep" >> "$d/nsys-$1-$2.log" 2>&1
        rc=$?
        rm -f "$d/nsys-$1-$2.nsys-rep" "$d/nsys-$1-$2.sqlite"  # the CSVs are what is kept
        echo "nsys $1 $2: rc $rc $((SECONDS - start)) s"
    done
else
    echo "nsys: not installed"
fi
