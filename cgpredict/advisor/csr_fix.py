"""A warp per CSR row (issue #26): a 1-D kernel whose thread reduces one row reached through
an index (CSR SpMV: ``for (k = rowptr[r]; k < rowptr[r + 1]; k++) s += val[k] * x[col[k]]``)
is launched with a warp per row, its lanes striding the row's nonzeros (lane l takes k =
rowptr[r] + l, + 32, ...) and a shuffle butterfly combining their partial sums, lane 0
storing the result; for rows shorter than a warp, also with the lanes that fit the mean row
(CUSP's CSR-vector kernel: 16 lanes for rows of 9 to 16 entries, two rows a warp).
Re-predicted from the trace regrouped a warp per row (row_warps.py: the row's val and col
reads coalesced, the gather of x still a gather), with the butterfly's instructions added.
Legal only when the row loop is a reduction into accumulators (atomics.loop_reductions): a
loop that stores or carries a recurrence is not split."""

from __future__ import annotations

import dataclasses

from ..atomics import loop_reductions
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from .advice import Fix, explained, speedup_of
from .row_fix import row_candidates, with_shuffles


def csr_code(lanes: int, loads: list[str]) -> str:
    """The CSR-vector kernel in CUDA with ``lanes`` lanes a row (``loads``: the row loop's
    reads, named in a comment)."""
    who = "a warp" if lanes == 32 else f"{lanes} lanes ({32 // lanes} rows a warp)"
    return "\n".join([
        f"// one thread per row -> {who} per row: launch {lanes} x rows threads",
        f"int row = (blockIdx.x * blockDim.x + threadIdx.x) / {lanes}, "
        f"lane = threadIdx.x % {lanes};",
        "if (row < rows) {",
        "  float s = 0.0f;",
        f"  for (int k = rowptr[row] + lane; k < rowptr[row + 1]; k += {lanes})",
        f"    s += ...;   // the row loop's body: {', '.join(loads)} (consecutive k: coalesced)",
        f"  for (int o = {lanes // 2}; o > 0; o >>= 1)  // butterfly within the row's lanes",
        "    s += __shfl_xor_sync(0xffffffff, s, o);",
        "  if (lane == 0) y[row] = s;",
        "}",
    ])


def fitted_lanes(entries: float) -> int:
    """Lanes a row for rows of ``entries`` on average: the least power of two from 2 to 32
    that holds them (CUSP's CSR-vector choice, Bell & Garland 2009)."""
    lanes = 2
    while lanes < 32 and lanes < entries:
        lanes *= 2
    return lanes


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


def _fix(base: Report, rep: Report, kernel: str, lanes: int, n: int, loads) -> Fix:
    """The fix of ``lanes`` lanes a row in ``kernel`` (``rep``: its re-prediction)."""
    steps = lanes.bit_length() - 1
    ev = (f"{kernel}: one thread per row, its loop reading "
          f"{', '.join(f'{m.text} ({m.pattern})' for m in loads)}, "
          f"{loads[0].per_thread:.3g} times a thread; the loop reduces {n} accumulator(s): "
          f"{2 * steps} shuffle-reduction instructions a row each",)
    who = "a warp" if lanes == 32 else f"{lanes} lanes"
    how = f"{lanes} threads a row" if lanes == 32 else f"{32 // lanes} rows a warp"
    return explained(Fix(
        "warp-per-row",
        f"{who} per row ({how}) with a shuffle reduction in {kernel}",
        f"launch {lanes} threads per row: lane l of a row takes its nonzeros l, l + {lanes}, "
        f"..., the lanes' sums combined with __shfl_xor_sync and stored by lane 0 (the same "
        f"values, the floating-point sum in another order)",
        ev, rep.total_ms, speedup_of(base.total_ms, rep.total_ms),
        code=csr_code(lanes, [m.text for m in loads]),
    ), base, rep)


def csr_fixes(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """Each row-reducing 1-D kernel launched a warp per row, and, for rows shorter than a
    warp, with the lanes that fit them, re-predicted (one fix each)."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    fixes = []
    for kernel, n in csr_candidates(prep, base, notes).items():
        k = next(x for x in base.kernels if x.name == kernel)
        sids, _ = _row_loop(prep, kernel)
        loads = [m for m in k.mem if m.id in sids and m.kind == "load"]
        for lanes in sorted({32, fitted_lanes(loads[0].per_thread)}, reverse=True):
            rep = _try_analyze(prep, dataclasses.replace(opts, row_warp=((kernel, lanes),)),
                               f"{lanes} lanes per row in {kernel}", notes)
            if rep is not None:
                steps = lanes.bit_length() - 1
                rep = with_shuffles(rep, {kernel: n}, opts, rows=1, insts=2 * steps)
                fixes.append(_fix(base, rep, kernel, lanes, n, loads))
    return fixes
