"""The advisor's fixes for reductions and atomics (atomics.py): a reduction combined per
block (warp shuffles, the warps' partials through shared memory, one atomicAdd per block)
instead of one atomicAdd per warp; a histogram's bins privatised per block in shared memory
(shared-memory atomics, each block's bins merged into the global ones with one atomicAdd per
bin), the grid cut to the blocks the GPU holds at once. Both re-predicted from the same
trace with ``RunOptions.reduce = "block"``, each with a CUDA snippet."""

from __future__ import annotations

import dataclasses

from ..pipeline import Prepared, Report, RunOptions
from ..prediction import PredictionError
from .advice import Fix, _explained, _speedup

__all__ = ["atomic_fixes", "BLOCK_REDUCTION", "PRIVATISATION"]

BLOCK_REDUCTION = """\
__global__ void k(const float *x, const float *y, float *s, int n) {
  __shared__ float part[32];                       // one partial per warp
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += x[i] * y[i];                              // the loop body, into a register
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) atomicAdd(s, v);         // one atomic per block
  }
}"""

PRIVATISATION = """\
__global__ void k(const int *data, int *hist, int n) {
  __shared__ int bins[BINS];                       // this block's private histogram
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) bins[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[data[i] & (BINS - 1)], 1);     // shared-memory atomics
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    atomicAdd(&hist[b], bins[b]);                  // merged once per bin and block
}
// launch as many blocks as the GPU holds at once: SMs x blocks per SM"""


def _sites(base: Report) -> dict[str, set[str]]:
    """Kernel -> the kinds of its atomic sites ("reduction", "atomic") from its report."""
    out: dict[str, set[str]] = {}
    for k in base.kernels:
        if k.profile.atomics.ops <= 0:
            continue
        kinds = out.setdefault(k.name, set())
        if any("reduction over the threads" in w for w in k.warnings):
            kinds.add("reduction")
        if any(m.pattern == "atomic" for m in k.mem) and any(
                "data-dependent locations" in w for w in k.warnings):
            kinds.add("atomic")
    return out


def _evidence(base: Report, found: dict[str, set[str]], rep: Report) -> tuple[str, ...]:
    """Per kernel: its atomic operations and bound, before and with the fix."""
    now = {k.name: k for k in rep.kernels}
    out = []
    for k in base.kernels:
        if k.name not in found or k.name not in now:
            continue
        b, a = k.result.bounds, now[k.name].result.bounds
        out.append(
            f"{k.name}: {b.atomic_ops:.4g} atomic operations at the L2 "
            f"({b.atomic_cycles:.4g} cycles on the busiest address) -> {a.atomic_ops:.4g} "
            f"({a.atomic_cycles:.4g} cycles); time set by the {k.result.binding} -> "
            f"{now[k.name].result.binding}"
        )
    return tuple(out)


def atomic_fixes(prep: Prepared, opts: RunOptions, base: Report) -> list[Fix]:
    """The block reduction and the privatisation of the kernels that have such sites,
    re-predicted (none when no kernel has one, or the re-prediction fails)."""
    found = _sites(base)
    if not found or opts.reduce == "block":
        return []
    try:
        rep = prep.analyze(dataclasses.replace(opts, reduce="block"))
    except PredictionError:
        return []
    kinds = set().union(*found.values())
    names = ", ".join(sorted(found))
    evidence = _evidence(base, found, rep)
    fixes = []
    if "reduction" in kinds:
        fixes.append(Fix(
            "block-reduction", f"reduce per block in {names}",
            "combine each block's partial sums through warp shuffles and shared memory and "
            "add them with one atomicAdd per block (not one per warp):\n" + BLOCK_REDUCTION,
            evidence, rep.total_ms, _speedup(base.total_ms, rep.total_ms)))
    if "atomic" in kinds:
        fixes.append(Fix(
            "privatisation", f"privatise the histogram bins per block in {names}",
            "keep a private copy of the bins per block in shared memory, update it with "
            "shared-memory atomics and merge it into the global bins once per block:\n"
            + PRIVATISATION,
            evidence, rep.total_ms, _speedup(base.total_ms, rep.total_ms)))
    return [_explained(f, base, rep) for f in fixes]
