#!/usr/bin/env bash
# The second pass of the worst rows' counters (about 3 min on an H100): Nsight Compute's extended
# counters (NCU_METRICS_EXTENDED, with the carve-out the driver chose) at the block shapes of the
# other-block sets where the model misses or has no counters yet: the blind mandelbrot 16x16/
# 64x4, gather, conv1d, heat1d and wavefront at 32x1/128x1/1024x1; corpus 3DCONV 16x16/64x4 and
# the ATAX/MVT/BICG row walks at 128x1; user saxpy, sfu_heavy and dot_gridstride at 128x1/1024x1.
# Everything lands in OUTDIR/worst2.tar.gz. Usage: validation/gpu_worst2.sh OUTDIR [BLIND_S CORPUS_S USER_S]
set -uo pipefail
out=${1:?usage: validation/gpu_worst2.sh OUTDIR [BLIND_S CORPUS_S USER_S]}
blind_s=${2:-110} corpus_s=${3:-50} user_s=${4:-50}
. "$(dirname "$0")/gpu_lib.sh"
gpu_begin "$out" worst2
m blind "$blind_s" --set blind --only mandelbrot,wavefront,heat1d,gather,conv1d \
    --configs-1d 32x1,128x1,1024x1 --configs 16x16,64x4
m corpus "$corpus_s" --only atax,mvt,bicg,3dconv --configs-1d 128x1 --configs 16x16,64x4
m user "$user_s" --set user --only saxpy,sfu_heavy,dot_gridstride --configs-1d 128x1,1024x1
