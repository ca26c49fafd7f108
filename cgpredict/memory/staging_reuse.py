"""The staging analysis of pseudo-warps regrouped for another block shape (warp_regroup), read
from the trace they came from (``Origin``), so that a block-shape sweep (the advisor's, the
sweep's) stages the trace's events once, not once per shape (issue 24's speed target).

A regrouped trace holds the same warp instructions with the same events as its source, only
the warps' numbers and order differ (blocks a whole number of warps wide: every warp is 32
consecutive pseudo-threads of one row under either shape). So (RS1): whatever staging finds
per warp instruction, or from the multiset of the staged events, is the same on both traces:

```
staged_accesses(W') = staged_accesses(W)      lane_shape(W', s) = lane_shape(W, s)
distinct sectors(W') = distinct sectors(W)                                          (RS1)
```

(each access's histogram of bank-conflict degrees, its broadcast and unit-stride shares, its
phased passes, whose per-instruction sums are integers; a warp's instructions keep their
order, so the unit stride between a warp's instances is counted over the same pairs). It is
found once, on the source, and kept there (``derived.memo``). What depends on the blocks,
each block's distinct elements and threads (``shared.block_footprints``), is counted over the
source's events with every instruction's warp number under the new shape (RS2):

```
footprint(b, W') = | { addr(e) / elem : e in i, i in W, warp'(i) div wpb' = b } |     (RS2)
```

with ``warp'(i)`` the warp of ``i``'s copy in W'. No event of W' is then copied
(``warp_regroup.MovedEvents``). A trace with moved addresses (a transposed array) is staged
as it is.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from ..warps import WarpTrace
from .derived import memo
from .shared import block_footprints, footprints_of

__all__ = ["event_source", "footprints", "reused"]

T = TypeVar("T")


def event_source(wt: WarpTrace) -> tuple[WarpTrace, np.ndarray | None]:
    """The trace whose warp instructions hold ``wt``'s events unmoved (``wt`` itself, or the
    one it was regrouped from, followed back while no address moved) and the index there of
    each of ``wt``'s warp instructions (None: the same instructions in the same order)."""
    src, idx = wt, None
    while src.origin is not None and not src.origin.moved:
        o = src.origin
        if o.inst is not None:
            idx = o.inst if idx is None else o.inst[idx]
        src = o.trace
    return src, idx


def reused(wt: WarpTrace, key: tuple, compute: Callable[[WarpTrace], T]) -> T:
    """``compute(trace)`` of what staging derives per warp instruction or from the events as
    a whole, found once on ``wt``'s event source and kept there (RS1): every block shape
    regrouped from it reads the same value."""
    src, _ = event_source(wt)
    return memo(src, ("staging", *key), lambda: compute(src))


def footprints(wt: WarpTrace, sids: dict[str, list[int]], elem_bytes: dict[str, int]):
    """``shared.block_footprints`` of ``wt``, counted over its event source's events with
    each instruction's warp under ``wt``'s block shape (RS2): a regrouped trace's events are
    not copied for it."""
    src, idx = event_source(wt)
    if src is wt or not wt.n_events:
        return block_footprints(wt, sids, elem_bytes)
    warps = _source_warps(idx, wt.inst_warp, src.n_insts)
    if warps is None:  # not one instruction of wt per instruction of src: count wt's own
        return block_footprints(wt, sids, elem_bytes)
    return footprints_of(src.addr, src.lane, src.inst_start, warps, src.inst_sid,
                         -(-wt.block.threads // 32), sids, elem_bytes)


def _source_warps(idx: np.ndarray | None, warps: np.ndarray, n: int) -> np.ndarray | None:
    """The warp under the new shape of each of the source's ``n`` instructions, from the new
    instructions' ``warps`` and their indices ``idx`` in the source; None unless ``idx`` is
    a permutation of them."""
    if idx is None:
        return warps if len(warps) == n else None
    if len(idx) != n or (n and (idx.min() < 0 or idx.max() >= n
                                or not (np.bincount(idx, minlength=n) == 1).all())):
        return None
    out = np.empty(n, dtype=warps.dtype)
    out[idx] = warps
    return out
