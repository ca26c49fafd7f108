#!/usr/bin/env bash
# The mechanism probes of issue 24, in one command that fits a short device run (about 3 min on
# an H100): what the shared and own measurements could not tell apart.
#   1. validation/ubench/*.cu: l1_lines (L1 load and store line rates, eqs. (B2r), (B2s)),
#      dep_chain (arithmetic chain latencies), atomics (L2 atomic throughput), launch_state
#      (what an upload leaves in the L2 before a timed launch; the SM clock), slice_map (the L2
#      slice classes of addresses by atomic contention, eq. (A2)), slice_probe (built, not run here: its
#      use is under ncu, see its header; ncu 2025.3 gives no per-slice values, only max/sum);
#   2. the histogram port's atomic requests on the busiest L2 slice and in all (ncu max, sum);
#   3. the single-launch user ports (saxpy, sfu_heavy, particles) under Nsight Compute without
#      its cache flush (--cache-control none, one pass: the state the timed run sees) and with
#      it (as measured), their own event times beside.
# Usage: validation/gpu_probes.sh OUTDIR      (writes OUTDIR/*; ARCH=sm_XX for another GPU)
set -uo pipefail
out=${1:?usage: validation/gpu_probes.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
arch=${ARCH:-sm_90}
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
mkdir -p "$out/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
    > "$out/gpu.csv" 2>&1 || { echo "gpu_probes.sh: no NVIDIA GPU" >&2; exit 5; }
start=$SECONDS

for src in "$here"/validation/ubench/*.cu; do   # builds in parallel
    n=$(basename "$src" .cu)
    nvcc -O3 -arch="$arch" -o "$out/bin/$n" "$src" > "$out/build-$n.log" 2>&1 &
done
for p in saxpy sfu_heavy particles histogram; do
    nvcc -O3 -arch="$arch" -std=c++17 -o "$out/bin/$p" "$here/validation/cuda/user/$p.cu" \
        > "$out/build-$p.log" 2>&1 &
done
wait
echo "builds: $((SECONDS - start)) s"; ls "$out/bin"

for b in l1_lines dep_chain atomics launch_state slice_map; do
    [ -x "$out/bin/$b" ] || { echo "$b: not built"; continue; }
    timeout 120 "$out/bin/$b" > "$out/$b.json" 2> "$out/$b.err"
    echo "$b: rc $? $((SECONDS - start)) s"
done

probe() {  # probe NAME METRICS ARGS...: ncu with per-instance values into OUTDIR/NAME.csv
    local name=$1 metrics=$2; shift 2
    timeout 150 "$ncu" --csv --page raw --print-units base --print-metric-instances values \
        --cache-control none --clock-control none --metrics "$metrics" \
        --log-file "$out/$name.csv" "$@"
}
red=lts__t_sectors_op_red.sum,lts__t_requests_srcunit_tex_op_red.sum
probe histogram-slices "$red,gpu__time_duration.sum" --launch-skip 1 --launch-count 1 \
    "$out/bin/histogram" --block 256x1 --reps 1 > "$out/histogram.json" 2> "$out/histogram.err"
echo "histogram slices: rc $? $((SECONDS - start)) s"

counters=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum
for p in saxpy sfu_heavy particles; do
    "$out/bin/$p" --block 256x1 --reps 7 > "$out/$p-events.json" 2>&1
    for cc in none all; do   # the first launches are the warm-up run's
        timeout 90 "$ncu" --csv --page raw --print-units base --cache-control $cc \
            --clock-control none --metrics $counters --log-file "$out/$p-cache-$cc.csv" \
            "$out/bin/$p" --block 256x1 --reps 3 > "$out/$p-cache-$cc.json" 2>&1
    done
    echo "$p: $((SECONDS - start)) s"
done
rm -rf "$out/bin"
echo "gpu_probes.sh: $((SECONDS - start)) s"
