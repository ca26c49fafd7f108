"""The busiest SM's share of a launch's work when its threads work unequally (eq. (B1)).

The throughput bounds (models/bounds.py: issue, pipe, the L2 path) spread a launch's warp
instructions evenly over the SMs it uses. A launch of at most one block per SM whose threads
do unequal work does not spread evenly: each SM holds one block from start to end, and the
launch lasts as long as its busiest block. CORR's symmat kernel (``corr_corr``, 1023 threads
in 4 blocks of 256, thread ``ja`` running ``m - 1 - ja`` rows of the triangle) gives block 0
895.5 rows a thread against a mean of 511.5: its SM stores 1.75x the mean SM's sectors,
and that SM's store path sets the time (ncu on the H100: 325 ms at the base clock, the
busiest SM's 2.35e8 store sectors).

The trace runs a smaller grid than the work: each traced pseudo-thread stands for the work
threads at the same relative position of the grid, so a work block's work is the mean
memory events of the traced threads that fall inside it, times its threads inside the grid.
"""

from __future__ import annotations

import numpy as np

from .block import Block
from .memory.derived import memo
from .warp_order import event_records
from .warps import WarpTrace

__all__ = ["block_share", "busiest_share", "busiest_sm_share", "launch_sm_share",
           "events_per_thread"]


def block_share(events: np.ndarray, grid: tuple[int, int], work: tuple[float, float],
                block: Block) -> float:
    """The busiest work block's work over a whole block of the mean thread's (eqs. (B1),
    (B1w)); the mean block's where every block is whole: ``events``, the
    memory events of each traced pseudo-thread (``grid`` (gx, gy), index y * gx + x),
    stand for the work threads at the same relative position of the ``work`` grid (x, y
    threads) cut into ``block``s. A block no traced thread falls in takes the mean thread's
    events; 1 for an empty trace."""
    gx, gy = max(grid[0], 1), max(grid[1], 1)
    wx, wy = max(work[0], 1.0), max(work[1], 1.0)
    nbx, nby = int(np.ceil(wx / block.x)), int(np.ceil(wy / block.y))
    ev = np.asarray(events, np.float64).reshape(gy, gx)
    if ev.sum() <= 0:
        return 1.0
    bxs = np.minimum(((np.arange(gx) + 0.5) / gx * wx // block.x).astype(np.int64), nbx - 1)
    bys = np.minimum(((np.arange(gy) + 0.5) / gy * wy // block.y).astype(np.int64), nby - 1)
    ids = (bys[:, None] * nbx + bxs[None, :]).ravel()
    sums = np.bincount(ids, weights=ev.ravel(), minlength=nbx * nby)
    counts = np.bincount(ids, minlength=nbx * nby)
    mean = ev.mean()
    per_thread = np.where(counts > 0, sums / np.maximum(counts, 1), mean)
    inside_x = np.minimum(wx - np.arange(nbx) * block.x, block.x)  # threads inside the grid
    inside_y = np.minimum(wy - np.arange(nby) * block.y, block.y)
    work_b = per_thread * (inside_y[:, None] * inside_x[None, :]).ravel()
    # over a whole block of mean threads, the block the bounds price (their warps count a
    # partial last block whole): a launch of 1030 equal threads in blocks of 1024 is 1, not
    # 1024 / 515 (its busiest SM holds one block's warps), eq. (B1w)
    full = work_b.sum() / (wx * wy) * block.x * block.y
    return max(float(work_b.max() / full), 1.0) if full > 0 else 1.0


def busiest_sm_share(wt: WarpTrace, work: tuple[float, float], block: Block,
                     sm_count: int) -> float:
    """The busiest SM's work over the mean SM's for a launch of the trace ``wt``'s kernel on
    a ``work`` grid: block_share when its blocks are at most ``sm_count`` (one block an SM,
    each from start to end); 1 for more blocks (an SM that finishes early takes the next
    block, which evens the SMs out) or no events."""
    blocks = int(np.ceil(max(work[0], 1) / block.x) * np.ceil(max(work[1], 1) / block.y))
    if blocks > sm_count or blocks <= 1 or not wt.n_events:
        return 1.0
    per = memo(wt, ("events_per_thread",), lambda: events_per_thread(wt))
    return block_share(per, (wt.grid_x, wt.grid_y), work, block)


def events_per_thread(wt: WarpTrace) -> np.ndarray:
    """The memory events of each traced pseudo-thread of ``wt`` (index y * gx + x): a
    function of the pseudo-warps alone, found once per trace (memory.derived.memo) for
    every work grid its launches ask busiest_sm_share about (GRAMSCHMIDT's gs_k3 on the
    H100: 497 grids of one trace; finding them for each made its analysis 51 s of CPU)."""
    threads = event_records(wt.ordered, wt.grid_x, wt.grid_y, wt.block)["thread"]
    threads = threads[threads >= 0]
    return np.bincount(threads, minlength=max(wt.grid_x, 1) * max(wt.grid_y, 1))


def launch_sm_share(wt: WarpTrace | None, work: tuple[float, float], block: Block,
                    sm_count: int) -> float:
    """busiest_sm_share once per trace and work grid (a kernel's launches share it); 1
    without the region's warps."""
    if wt is None:
        return 1.0
    key = ("sm_share", float(work[0]), float(work[1]), block.x, block.y, sm_count)
    return memo(wt, key, lambda: busiest_sm_share(wt, work, block, sm_count))


def busiest_share(wt) -> float:
    """How many times the mean pseudo-thread's memory events the busiest thread makes: a
    warp instruction holds at most one event of each lane, so the busiest warp's instruction
    count is its busiest lane's events at most (1 when every thread works alike)."""
    threads = max(wt.grid_x, 1) * max(wt.grid_y, 1)
    if not wt.n_events or not len(wt.inst_warp):
        return 1.0
    most = float(np.bincount(wt.inst_warp).max())
    return max(most / (wt.n_events / threads), 1.0)
