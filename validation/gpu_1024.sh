#!/usr/bin/env bash
# The 1024x1 streaming rows' event pairs against the kernel in the state the reset leaves
# (sixteenth round, t2; about 2 min on an H100): Nsight Compute's extended counters with
# --cache-control none (the reset's dirty L2 lines and its uploads' L2 contents kept, as the
# event-timed launch sees them) on the blind spmv_ell, strided and conv1d and the user
# particles, dot_gridstride and saxpy at 256x1 and 1024x1, 3 timed reps each. Read with
# validation/block_split.py (--launches for particles) against the committed flushed profiles
# (docs/validation.md, "The 1024x1 streaming rows"): does spmv_ell's 5 us more of event pair
# at 1024x1 sit inside the kernel once ncu keeps the reset's state?
# Seventeenth round (t4): also the flushed profiles no lease has taken at 1024x1 (nbody_f64,
# sfu_heavy and the own gesummv; spmv_csr again beside its 256x1): does nbody_f64's chain
# sit between (LTq2)'s 620 and (CV)'s cycles a j iteration, and is gesummv's 1024x1 gap its
# 256x1 one (docs/validation.md, "The 1024x1 rows, seventeenth round")? About 1 min more.
# Everything lands in OUTDIR/r1024.tar.gz. Usage: validation/gpu_1024.sh OUTDIR [BLIND_S USER_S]
set -uo pipefail
out=${1:?usage: validation/gpu_1024.sh OUTDIR [BLIND_S USER_S]}
blind_s=${2:-60} user_s=${3:-60}
. "$(dirname "$0")/gpu_lib.sh"
gpu_begin "$out" r1024
m blind "$blind_s" --set blind --only spmv_ell,strided,conv1d --configs-1d 256x1,1024x1 \
    --ncu-cache-control none
m user "$user_s" --set user --only particles,dot_gridstride,saxpy --configs-1d 256x1,1024x1 \
    --ncu-cache-control none
m user2 "$user_s" --set user --only nbody_f64,sfu_heavy,spmv_csr --configs-1d 256x1,1024x1
m corpus "$user_s" --set corpus --only gesummv --configs-1d 256x1,1024x1
