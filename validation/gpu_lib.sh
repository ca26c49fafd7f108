# Shared by the lease scripts that profile ports into one tarball (gpu_worst.sh, gpu_worst2.sh,
# gpu_shapes.sh):
#   gpu_begin OUT NAME   checks for a GPU (exit 5 without), makes $work/$NAME and packs it into
#                        OUT/NAME.tar.gz when the script exits;
#   m RUN BUDGET ARGS... measure.py with the extended counters (3 reps, 2 profiled launches, no
#                        check runs) into $work/$NAME/RUN*, bounded by BUDGET + 60 s.
#   gpu_plain OUT        checks for a GPU (exit 5 without), writes OUT/gpu.csv, makes a scratch
#                        $work and sets start and ncu: the lease scripts whose outputs land
#                        in OUT as they are (gpu_round14.sh, gpu_dirty.sh, gpu_alloc.sh,
#                        gpu_evict.sh, gpu_fdtd_seq.sh, gpu_spread.sh)
# Source it after `set -uo pipefail`; it sets here, work, name and start.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpu_begin() {
    local out=$1
    name=$2 work=$(mktemp -d)
    mkdir -p "$out" "$work/$name"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
        > "$work/$name/gpu.csv" 2>&1 || { echo "$name: no NVIDIA GPU" >&2; exit 5; }
    start=$SECONDS
    # shellcheck disable=SC2064  # out and name are fixed now
    trap "tar -C '$work' -czf '$out/$name.tar.gz' '$name';
          echo \"$name: \$((SECONDS - start)) s, \$(du -h '$out/$name.tar.gz' | cut -f1)\"" EXIT
}
m() {
    local run=$1 budget=$2; shift 2
    timeout $((budget + 60)) python3 "$here/validation/measure.py" --no-check --reps 3 \
        --ncu-metrics extended --ncu-launches 2 --timeout 60 --budget "$budget" \
        --bin-dir "$work/bin-$run" --out "$work/$name/$run.json" "$@" \
        > "$work/$name/$run.log" 2>&1
    echo "$run: rc $? $((SECONDS - start)) s"; tail -n 1 "$work/$name/$run.log"
}
gpu_plain() {
    local out=$1
    work=$(mktemp -d) start=$SECONDS
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    mkdir -p "$out"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv \
        > "$out/gpu.csv" 2>&1 || { echo "no NVIDIA GPU" >&2; exit 5; }
}
