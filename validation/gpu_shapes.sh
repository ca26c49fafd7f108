#!/usr/bin/env bash
# The 2-D stencils at four block shapes in one lease (about 3 min on an H100): 2DCONV and
# FDTD-2D (corpus) and Jacobi-2D (user) at 32x8, 16x16, 64x4 and 32x32, timed and with Nsight
# Compute's extended counters on 3 launches (FDTD-2D's k1, k2, k3), so that each 16x16 row is
# read beside the 32x8 row of the same lease (docs/validation.md, "The 2-D block-shape misses
# by lease": 2DCONV's event times moved 78 -> 95 us between two days at one shape).
# Everything lands in OUTDIR/shapes.tar.gz. Usage: validation/gpu_shapes.sh OUTDIR [CORPUS_S USER_S]
set -uo pipefail
out=${1:?usage: validation/gpu_shapes.sh OUTDIR [CORPUS_S USER_S]}
corpus_s=${2:-100} user_s=${3:-40}
. "$(dirname "$0")/gpu_lib.sh"
gpu_begin "$out" shapes
m corpus "$corpus_s" --only 2dconv,fdtd2d --configs 32x8,16x16,64x4,32x32 --ncu-launches 3
m user "$user_s" --set user --only jacobi2d --configs 32x8,16x16,64x4,32x32 --ncu-launches 3
