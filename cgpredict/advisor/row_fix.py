"""Warp per row with a shuffle reduction (issue #26), for a row-wise kernel with one thread
per row (softmax): each warp takes its 32 rows in turn, its lanes splitting each row's loop
(lane l reads elements l, l + 32, ...), and every loop that reduces a row to a scalar ends in
a butterfly of __shfl_xor_sync (log2(32) = 5 shuffles and 5 operations, every lane getting
the result). The same threads and warps as now, each doing the same number of iterations.

Re-predicted from the trace with the row loops' accesses exchanged inside 32x32 tiles of rows
and columns (tile_exchange.py: lane l at iteration j reads row r0 + j mod 32, column
j - j mod 32 + l), and the shuffles added to every launch profile's instructions."""

from __future__ import annotations

import dataclasses

from ..devices import load_device
from ..memory.shared import array_layouts, array_name
from ..models import kernel_parts
from ..models import predict as model_predict
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from .advice import TILE, Fix, explained, speedup_of

#: Instructions per lane of one warp-wide reduction: 5 shuffles and 5 combining operations.
SHUFFLE_REDUCTION = 10


def row_loops(prep: Prepared, kernel: str, grid: int) -> tuple[set[int], int]:
    """The blocks of a kernel's per-thread loops, and how many of those loops store nothing
    (a loop that only reads reduces the row to a scalar: one shuffle reduction each)."""
    h = prep.trace.header
    region = h.region(kernel).index
    loops = [lp for lp in h.loops if lp.region == region and lp.depth == grid + 1]
    stores = {m.block for m in h.mem if m.region == region and m.kind == "store"}
    blocks = {b for lp in h.loops if lp.region == region and lp.depth > grid for b in lp.blocks}
    return blocks, sum(not (set(lp.blocks) & stores) for lp in loops)


def row_candidates(prep: Prepared, base: Report) -> dict[str, tuple[str, ...]]:
    """Per 1-D kernel: the 2-D arrays it reads or writes uncoalesced inside its per-thread
    loops (a row per thread), in arrays of whole 32x32 tiles at the trace size; none for a
    kernel that stores anything else inside those loops."""
    layouts = array_layouts(prep.trace.header.ir_text)
    h = prep.trace.header
    out: dict[str, tuple[str, ...]] = {}
    for k in base.kernels:
        if k.grid_dims != 1:
            continue
        blocks, _ = row_loops(prep, k.name, 1)
        inner = {m.id for m in h.mem if m.block in blocks}
        arrs = []
        for m in k.mem:
            lay = layouts.get(array_name(m.text))
            if (m.id in inner and m.pattern == "uncoalesced" and lay is not None
                    and len(lay.dims) == 2 and not lay.dims[0] % TILE
                    and not lay.dims[1] % TILE and array_name(m.text) not in arrs):
                arrs.append(array_name(m.text))
        # a store in a row loop to anything but the row itself (an accumulator kept in
        # memory, x[i] += ...) would race between the lanes: such a kernel is not offered
        racing = any(m.kind == "store" and m.block in blocks and array_name(m.base) not in arrs
                     for m in h.mem if m.region == h.region(k.name).index)
        if arrs and not racing:
            out[k.name] = tuple(arrs)
    return out


def with_shuffles(rep: Report, kernels: dict[str, int], opts: RunOptions,
                  rows: int = TILE, insts: int = SHUFFLE_REDUCTION) -> Report:
    """``rep`` with each kernel's shuffle reductions (``kernels``: name -> reduction loops)
    added to every launch profile (``rows`` rows per lane, ``insts`` instructions each),
    re-predicted."""
    device = load_device(opts.device)
    out = []
    for k in rep.kernels:
        extra = rows * insts * kernels.get(k.name, 0)
        if not extra:
            out.append(k)
            continue
        profiles = tuple((dataclasses.replace(p, comp_insts=p.comp_insts + extra), w)
                         for p, w in (k.launch_profiles or ((k.profile, float(k.launches)),)))
        t = kernel_parts(profiles, device, opts.model, opts.sync)
        first = dataclasses.replace(k.profile, comp_insts=k.profile.comp_insts + extra)
        out.append(dataclasses.replace(
            k, profile=first, result=model_predict(first, device, opts.model),
            launch_profiles=profiles, kernel_ms=t.kernel_ms, launch_ms=t.launch_ms,
            total_ms=t.kernel_ms + t.launch_ms + k.once_ms))  # the program's one module load
    return dataclasses.replace(rep, kernels=tuple(out))


CODE = "\n".join([
    "// one thread per row -> each warp takes rows 32*warp .. 32*warp+31 in turn",
    "for (int r = warp * 32; r < warp * 32 + 32; r++) {",
    "  float s = 0.0f;                       // (or the max, ...)",
    "  for (int j = lane; j < C; j += 32)    // lanes split the row: coalesced",
    "    s += f(in[r][j]);",
    "  for (int o = 16; o > 0; o >>= 1)      // butterfly: every lane gets the sum",
    "    s += __shfl_xor_sync(0xffffffff, s, o);",
    "  for (int j = lane; j < C; j += 32) out[r][j] = g(in[r][j], s);",
    "}",
])


def row_fixes(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """The row-wise kernels with lanes splitting each row, re-predicted (one fix for all)."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    found = row_candidates(prep, base)
    if not found:
        return []
    arrays = tuple(sorted({a for arrs in found.values() for a in arrs}))
    rep = _try_analyze(prep, dataclasses.replace(opts, row_exchange=arrays),
                       "a warp per row", notes)
    if rep is None:
        return []
    reductions = {k: row_loops(prep, k, 1)[1] for k in found}
    rep = with_shuffles(rep, reductions, opts)
    ev = tuple(f"{k}: {', '.join(a)} read or written a row per thread (uncoalesced), "
               f"{reductions[k]} loop(s) reducing a row: {SHUFFLE_REDUCTION} shuffle-reduction "
               f"instructions per row and lane each" for k, a in found.items())
    return [explained(Fix(
        "warp-per-row",
        f"a warp per row with a shuffle reduction in {', '.join(found)}",
        "let each warp take its 32 rows in turn, its lanes splitting each row's loop (lane l "
        "handles elements l, l + 32, ...), and finish each reduction with __shfl_xor_sync; "
        "the same threads, the same values (floating-point sums in another order)",
        ev, rep.total_ms, speedup_of(base.total_ms, rep.total_ms), code=CODE,
    ), base, rep)]
