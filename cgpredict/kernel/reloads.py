"""The loads of a launch that reload the plain port's accumulator (``port.reloading_loads``),
kept across the analyses of one trace (``AnalysisMemo.reloads``).

``reloading_loads`` decides each static load from its own events and the restoring stores'
events, through distinct (pseudo-thread, address) pairs and addresses only. Every block shape
numbers the same pseudo-threads one to one (a lane of a warp each, as for the restoring
stores, analysis_memo), so with the same restoring stores the answer is the same in every
shape: kept per ``(region, launch, grid_dims, restores)``. A layout change (transposition,
AoS->SoA, tile or row exchange) moves only the addresses of the arrays it names: when no
restoring store is among them, the other loads keep the kept answer and only the moved
loads are decided anew (SYR2K: 0.2 s of a 0.85 s block re-analysis, per shape).
"""

from __future__ import annotations

import numpy as np

from ..analysis_memo import AnalysisMemo, ReloadsKey
from ..frontend.port import reloading_loads
from ..frontend.tracefile import Trace
from ..memory.shared import array_name
from ..prediction import RunOptions
from ..warps import WarpTrace
from .region import is_store

__all__ = ["launch_reloads", "moved_instructions"]


def moved_instructions(trace: Trace, opts: RunOptions) -> np.ndarray:
    """True per static memory instruction whose addresses a layout change of ``opts`` moves
    (every access of an array it names: a superset of what it remaps, so exact to redo)."""
    changed = set(opts.transpose) | set(opts.soa) | set(opts.tile_exchange) \
        | set(opts.row_exchange)
    return np.array([array_name(m.base) in changed for m in trace.header.mem] or [False])


def launch_reloads(
    trace: Trace, key: ReloadsKey, plain: WarpTrace, laid_out: WarpTrace, wt: WarpTrace,
    opts: RunOptions, memo: AnalysisMemo | None,
) -> frozenset[int]:
    """``reloading_loads`` of the launch's warps ``wt`` with the restoring stores ``key[3]``:
    kept in ``memo`` when ``wt`` is ``laid_out`` (``plain`` with the layout changes of
    ``opts`` and nothing more: its threads are not regrouped by a halo tile, a warp per row
    or register blocking, which decide anew), see the module docstring."""
    store = is_store(trace)
    restores = key[3]
    if memo is None or wt is not laid_out:
        return reloading_loads(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid,
                               store, restores)
    moved = moved_instructions(trace, opts) if wt is not plain else None
    if moved is not None and any(moved[s] for s in restores):
        # the stored pairs moved: every load decided anew
        return reloading_loads(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid,
                               store, restores)
    if key not in memo.reloads:
        memo.reloads[key] = reloading_loads(
            plain.addr, plain.lane, plain.inst_start, plain.inst_warp, plain.inst_sid, store,
            restores)
    kept = memo.reloads[key]
    loads = moved & ~store if moved is not None else None
    if loads is None or not loads.any():
        return kept
    # the second pass of reloading_loads skips what it is told are stores: only the moved
    # loads are decided again
    again = reloading_loads(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid,
                            store | ~loads, restores)
    return frozenset(s for s in kept if not loads[s]) | again
