#!/usr/bin/env bash
# The 128x1 and 256x1 rows in one lease (seventeenth round, t3; about 3 min on an H100): the
# blind blackscholes, int_hash, strided and conv1d and the user saxpy, sfu_heavy and particles
# at 32x1, 128x1, 256x1 and 1024x1, each timed (3 reps) and profiled with Nsight Compute's
# extended counters (gpu__time_duration, sm__warps_active, smsp__issue_active, dram bytes).
# One lease times every block, so the rows' error by block is no longer the leases' spread
# (docs/validation.md, "The 128x1 and 256x1 rows"), and Black-Scholes, the one 128x1 row that
# errs the same on two leases (-7.9 / -8.2 %), gets its first profile at 128x1 and 1024x1: is
# its kernel flat in the block (the events' 134.7 / 131.8-136.5 / 138.7-143.8 us less the
# launch costs) where the model's (17) with (R1w) rises 123.2 / 130.0 / 141.1 us?
# Read with validation/block_across.py and validation/retire_gap.py OUT/r128/...-ncu.
# Everything lands in OUTDIR/r128.tar.gz. Usage: validation/gpu_128.sh OUTDIR [BLIND_S USER_S]
set -uo pipefail
out=${1:?usage: validation/gpu_128.sh OUTDIR [BLIND_S USER_S]}
blind_s=${2:-80} user_s=${3:-60}
. "$(dirname "$0")/gpu_lib.sh"
gpu_begin "$out" r128
m blind "$blind_s" --set blind --only blackscholes,int_hash,strided,conv1d \
    --configs-1d 32x1,128x1,256x1,1024x1
m user "$user_s" --set user --only saxpy,sfu_heavy,particles \
    --configs-1d 32x1,128x1,256x1,1024x1
