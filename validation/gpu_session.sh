#!/usr/bin/env bash
# Everything that needs the GPU, in one command that fits a 10-minute device run:
#   1. validation/measure.py: build, check and time every CUDA port (reference configurations);
#   2. cgpredict calibrate: micro-benchmarks and NVML energy -> a device file + its raw results.
# Needs nvidia-smi, nvcc and a python3 with click and numpy (no install: the checkout is put on
# PYTHONPATH, and calibrate imports neither llvmlite nor numba).
#
# Usage: validation/gpu_session.sh OUTDIR [BUDGET_S]        (BUDGET_S default 480)
# Writes into OUTDIR: gpu.csv, measured.json, measure.log (+ measured-ncu/, the counters),
# measured-user.json, measure-user.log (the user kernels' ports, validation/cuda/user),
# measured-restrict.json, measure-restrict.log (--port restrict), calibrated.toml,
# calibrated.raw.json, calibrate.log. Then, on any machine (no GPU needed):
#   cp OUTDIR/measured.json validation/measured/<gpu-slug>.json
#   cp OUTDIR/calibrated.toml cgpredict/devices/<name>.toml   (and the .raw.json beside it)
#   cgpredict validate --device <name> --measured validation/measured/<gpu-slug>.json
set -uo pipefail
out=${1:?usage: validation/gpu_session.sh OUTDIR [BUDGET_S]}
budget=${2:-480}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
start=$SECONDS

if ! nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version,memory.total \
        --format=csv >"$out/gpu.csv" 2>/dev/null; then
    echo "gpu_session.sh: nvidia-smi found no NVIDIA GPU: run this on a machine with one" >&2
    exit 5
fi
cat "$out/gpu.csv"

# The ports get ~40% of the budget (a run already started may overrun it by --timeout).
python3 "$here/validation/measure.py" --out "$out/measured.json" \
    --budget $((budget * 40 / 100)) --timeout 60 2>&1 | tee "$out/measure.log"
measure_rc=${PIPESTATUS[0]}

# The user kernels' ports (13 programs of about a second each) get ~12% of the budget.
python3 "$here/validation/measure.py" --user --out "$out/measured-user.json" \
    --budget $((budget * 12 / 100)) --timeout 60 2>&1 | tee "$out/measure-user.log"
user_rc=${PIPESTATUS[0]}

# The restrict ports (every array __restrict__), without counters, get ~18%: the plain port is
# the default prediction, the pair says what --port restrict is worth on this GPU.
python3 "$here/validation/measure.py" --port restrict --no-ncu --out "$out/measured-restrict.json" \
    --budget $((budget * 18 / 100)) --timeout 60 2>&1 | tee "$out/measure-restrict.log"
restrict_rc=${PIPESTATUS[0]}

left=$((budget - (SECONDS - start)))
# about a dozen programs of seconds each (~1.5 min in all, estimated); a stuck one may take a
# quarter of what is left, so that the others still run
per_bench=$((left / 4 > 60 ? left / 4 : 60))
python3 -m cgpredict calibrate -o "$out/calibrated.toml" --force --timeout "$per_bench" 2>&1 |
    tee "$out/calibrate.log"
calibrate_rc=${PIPESTATUS[0]}

echo "gpu_session.sh: measure exit $measure_rc, user ports exit $user_rc," \
    "restrict ports exit $restrict_rc, calibrate exit $calibrate_rc, $((SECONDS - start)) s"
[ "$measure_rc" -le 1 ] && [ "$user_rc" -le 1 ] && [ "$restrict_rc" -le 1 ] &&
    [ "$calibrate_rc" -eq 0 ]
