"""A warp per CSR row (issue #26): a 1-D kernel whose thread reduces one row reached through
an index (CSR SpMV: ``for (k = rowptr[r]; k < rowptr[r + 1]; k++) s += val[k] * x[col[k]]``)
is launched with a warp per row, its lanes striding the row's nonzeros (lane l takes k =
rowptr[r] + l, + 32, ...) and a shuffle butterfly combining their partial sums, lane 0
storing the result. Re-predicted from the trace regrouped a warp per row (row_warps.py: the
row's val and col reads coalesced, the gather of x still a gather), with the butterfly's
instructions added. Legal only when the row loop is a reduction into accumulators
(atomics.loop_reductions): a loop that stores or carries a recurrence is not split."""

from __future__ import annotations

import dataclasses

from ..atomics import loop_reductions
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from .advice import Fix, explained, speedup_of
from .row_fix import SHUFFLE_REDUCTION, row_candidates, with_shuffles

CODE = "\n".join([
    "// one thread per row -> one warp per row: launch 32 x rows threads",
    "int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;",
    "if (row < NR) {",
    "  float s = 0.0f;",
    "  for (int k = rowptr[row] + lane; k < rowptr[row + 1]; k += 32)",
    "    s += val[k] * x[col[k]];          // val, col: coalesced; x: still a gather",
    "  for (int o = 16; o > 0; o >>= 1)     // butterfly: every lane gets the row's sum",
    "    s += __shfl_xor_sync(0xffffffff, s, o);",
    "  if (lane == 0) y[row] = s;",
    "}",
])


def _row_loop(prep: Prepared, kernel: str) -> tuple[set[int], str]:
    """The static memory instructions of a 1-D kernel's thread loop, or why there is none
    to split (no loop, or not one loop of depth 2)."""
    h = prep.trace.header
    region = h.region(kernel).index
    loops = [lp for lp in h.loops if lp.region == region and lp.depth >= 2]
    if len(loops) != 1:
        return set(), f"{len(loops)} loops in a thread, not one row loop"
    blocks = set(loops[0].blocks)
    return {m.id for m in h.mem if m.region == region and m.block in blocks}, ""


def csr_candidates(prep: Prepared, base: Report, notes: list[str]) -> dict[str, int]:
    """Per 1-D kernel with uncoalesced loads in its one thread loop (one not taken by the
    2-D warp per row, row_fix): the accumulators that loop reduces; a note for a kernel
    whose loop cannot be split between lanes."""
    taken = row_candidates(prep, base)
    out: dict[str, int] = {}
    for k in base.kernels:
        if k.grid_dims != 1 or k.name in taken:
            continue
        sids, why = _row_loop(prep, k.name)
        if not any(m.id in sids and m.kind == "load" and m.pattern == "uncoalesced"
                   for m in k.mem):
            continue
        n = loop_reductions(prep.trace, prep.trace.header.region(k.name).index, 2)
        if n:
            out[k.name] = n
        else:
            what = ("reduces nothing" if n == 0
                    else "stores or carries a value other than a sum")
            notes.append(f"a warp per row is not offered in {k.name}: its row loop {what} "
                         f"(splitting it between lanes would change what it computes)")
    return out


def csr_fixes(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """Each row-reducing 1-D kernel launched a warp per row, re-predicted (one fix each)."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    fixes = []
    for kernel, n in csr_candidates(prep, base, notes).items():
        rep = _try_analyze(prep, dataclasses.replace(opts, row_warp=(kernel,)),
                           f"a warp per row in {kernel}", notes)
        if rep is None:
            continue
        rep = with_shuffles(rep, {kernel: n}, opts, rows=1)
        k = next(x for x in base.kernels if x.name == kernel)
        sids, _ = _row_loop(prep, kernel)
        texts = [m.text for m in k.mem if m.id in sids and m.kind == "load"]
        ev = (f"{kernel}: one thread per row, its loop reading {', '.join(texts)} "
              f"({', '.join(m.pattern for m in k.mem if m.id in sids and m.kind == 'load')}); "
              f"the loop reduces {n} accumulator(s): {SHUFFLE_REDUCTION} shuffle-reduction "
              f"instructions per row each",)
        fixes.append(explained(Fix(
            "warp-per-row",
            f"a warp per CSR row with a shuffle reduction in {kernel}",
            "launch 32 threads per row: lane l of a row's warp takes its nonzeros l, l + 32, "
            "..., the lanes' sums combined with __shfl_xor_sync and stored by lane 0 (the "
            "same values, the floating-point sum in another order)",
            ev, rep.total_ms, speedup_of(base.total_ms, rep.total_ms), code=CODE,
        ), base, rep))
    return fixes
