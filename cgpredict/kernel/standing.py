"""The launch whose pseudo-warps stand for every launch of a region, eq. (RL).

A region's launches share one memory analysis: the pseudo-warps of one recorded launch
(coalescing, sectors, L1 passes, bank ways) stand for all of them, each launch then weighted
by its own counts. That launch was the first recorded one. A host loop whose first launches
are narrower than a warp hides the lanes' pattern: wavefront's first anti-diagonal is one
thread, so its three ``H`` loads, 32 rows of one bank in a full warp (32 data-stage passes
each, eq. (B2w)), were a line each, and the 1024x1 launches of 1000-2048 cells got 9 L1
passes a warp for the loads where Nsight Compute counts 4194-4424 wavefronts a 32-warp block.
The launch that stands for the region is therefore

    the first recorded launch with at least min(warp, widest recorded launch) threads   (RL)

(the first launch wherever it fills a warp: every region but such host loops keeps it), and
the tracer records launches up to the first that fills a warp when the default first two do
not (``launches_to_record``; capped by the events the recorded launches let one estimate).
"""

from __future__ import annotations

import numpy as np

from ..frontend.tracefile import Trace
from ..warps import mapped_loops, perfectly_nested

__all__ = ["WARP", "launch_threads", "launches_to_record", "standing_row", "standing_launch"]

WARP = 32  # lanes a pseudo-warp must have for its lane pattern to be a warp's


def launch_threads(trace: Trace, region: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, threads): every launch row of ``region`` in the trace, recorded or not, and its
    pseudo-threads (the iterations of the depth-2 loop of a 2-D region, else of the depth-1
    loop; trace_sizes.min_threads counts a trace's smallest launch by it); empty without a
    mapped loop."""
    rows = np.flatnonzero(trace.launches["region"] == region)
    d1, d2 = mapped_loops(trace, region)
    recorded = rows[trace.launches["recorded"][rows] == 1]
    if not len(rows) or not d1 or not len(recorded):
        return rows[:0], np.zeros(0, np.int64)
    info = trace.header.region(region)
    stores = np.array([m.kind == "store" for m in trace.header.mem] or [False])
    two_d = info.grid == 2 or (
        info.grid == 0 and perfectly_nested(trace, region, int(recorded[0]), stores))
    loops = d2 if two_d and d2 else d1
    return rows, trace.loop_iters[rows][:, loops].sum(axis=1).astype(np.int64)


def standing_row(threads: np.ndarray, warp: int = WARP) -> int:
    """Eq. (RL) on the recorded launches' ``threads`` (in launch order): the index of the first
    with at least min(warp, the widest) threads; -1 for none."""
    if not len(threads):
        return -1
    need = min(warp, int(threads.max()))
    return int(np.flatnonzero(threads >= need)[0])


def standing_launch(trace: Trace, region: int) -> int | None:
    """The trace row of the recorded launch that stands for ``region``, eq. (RL); None when no
    launch was recorded or the region maps no loop (the caller's rule applies)."""
    rows, threads = launch_threads(trace, region)
    rec = trace.launches["recorded"][rows] == 1
    k = standing_row(threads[rec])
    return int(rows[rec][k]) if k >= 0 else None


def launches_to_record(trace: Trace, recorded: int, max_events: int) -> int:
    """The launches a region the tracer must record (its ``max_launches``) so that eq. (RL)
    finds a launch that fills a warp in every region: 0 where the ``recorded`` first launches
    already hold one in each region (or no later launch does), or where recording up to it
    would take more than half of ``max_events`` (estimated from the recorded launches' events
    a thread)."""
    need = 0
    for r in trace.header.regions:
        rows, threads = launch_threads(trace, r.index)
        rec = trace.launches["recorded"][rows] == 1
        if not len(rows) or not rec.any() or threads[rec].max() >= WARP:
            continue
        wide = np.flatnonzero(threads >= WARP)
        if not len(wide):
            continue
        k = int(wide[0])  # the region's launch index of its first full-warp launch
        per_thread = trace.launches["n_events"][rows[rec]].sum() / max(threads[rec].sum(), 1)
        if per_thread * threads[: k + 1].sum() > max_events / 2:
            continue
        need = max(need, k + 1)
    return need if need > recorded > 0 else 0
