"""Uneven blocks on more blocks than SMs: the block scheduler's makespan (eqs. (B3)-(B5)).

Eq. (B1) (sm_share.py) charges the busiest SM when a launch holds at most one block an SM.
With more blocks, the block scheduler hands the next block (in block index order) to an SM as
soon as one of its ``slots`` (the blocks an SM holds, B of the occupancy) frees; the blocks
resident on an SM share its issue slots, so a block that stays alone at the end runs at the
whole SM's rate. When the blocks' work differs (the blind mandelbrot: blocks over the set's
interior run 100+ iterations a pixel, those outside a few), the SMs finish at different times
and the launch lasts as long as the last one::

    SM s: resident blocks share its rate equally (processor sharing); a block leaves
          when its work is done and block next (in index order) takes its slot      (B3)
    M(w) = max over SMs of the time its last block leaves                           (B3)
    share = M(w_1..w_n) / M(mean w, .., mean w)                                     (B4)

The share is the uneven schedule's makespan over that of equal blocks of the same launch:
the equal schedule's own granularity (an SM holding one block more than another) is the same
for every kernel of a block count, and is not what this charges (1 for equal blocks): the
bounds charge it apart, eq. (B1g) (models/bounds.whole_block_share).

A block's work comes from the trace's pseudo-threads: each work block takes the mean weight
of the traced threads inside it, or, when none falls inside (the trace is coarser than the
blocks), the traced thread at its centre, times its threads inside the grid::

    w_b = mean_{t in b} u(t) * threads(b),  u(t) = (1 - f) + f * T(t) / mean T          (B5)

where T(t) is the pseudo-thread's iterations of the loops whose trips differ between threads
(the trace's trip records, lane_trips.py) and f the mean thread's share of its compute
instructions inside those loops (the rest, the code around them, every thread runs alike).

Since the fifteenth round a launch's share is (B7) on its warps (smsp_schedule.py, a coarse
trace's warps drawn by warp_spread.py's (B8)); (B3)-(B5) stay as the block-level case of
that schedule, which validation/smsp_balance.py and the tests compare with it.
"""

from __future__ import annotations

import numpy as np

from .block import Block
from .frontend.tracefile_format import TRIP_DTYPE
from .lane_trips import lane_indices
from .smsp_schedule import warp_makespan, warp_share

__all__ = ["block_work", "makespan", "schedule_share", "thread_trips"]


def makespan(work: np.ndarray, sms: int, slots: int) -> float:
    """Eq. (B3): the time the last SM finishes when ``work`` (one entry a block, in block
    index order, in units of an SM's work a unit time) is dispatched to ``sms`` SMs of
    ``slots`` blocks each: (B6)'s makespan (smsp_schedule) with one scheduler an SM and one
    warp a block, so that an SM's resident blocks share its rate and each next block takes
    the slot of the block that left."""
    w = np.asarray(work, np.float64).reshape(-1, 1)
    return warp_makespan(w, sms, slots, 1)  # (B3) = (B6) on blocks of one alike warp


def schedule_share(work: np.ndarray, sms: int, slots: int) -> float:
    """Eq. (B4): the makespan of ``work``'s blocks over that of as many equal blocks of
    their mean work (1 for equal blocks, an empty launch or no work): (B7) on blocks of one
    warp on one scheduler, as makespan is (B6)'s."""
    return warp_share(np.asarray(work, np.float64).reshape(-1, 1), sms, slots, 1)


def block_work(weights: np.ndarray, grid: tuple[int, int], work: tuple[float, float],
               block: Block) -> np.ndarray:
    """Eq. (B5): each work block's work, in block index order (x fastest), from the
    ``weights`` of the traced pseudo-threads (``grid`` (gx, gy), index y * gx + x) standing
    for the work threads at the same relative position of the ``work`` grid: the mean of the
    traced threads inside the block, else the traced thread at its centre, times the
    block's threads inside the grid."""
    gx, gy = max(grid[0], 1), max(grid[1], 1)
    wx, wy = max(work[0], 1.0), max(work[1], 1.0)
    nbx, nby = int(np.ceil(wx / block.x)), int(np.ceil(wy / block.y))
    u = np.asarray(weights, np.float64).reshape(gy, gx)
    bxs = np.minimum(((np.arange(gx) + 0.5) / gx * wx // block.x).astype(np.int64), nbx - 1)
    bys = np.minimum(((np.arange(gy) + 0.5) / gy * wy // block.y).astype(np.int64), nby - 1)
    ids = (bys[:, None] * nbx + bxs[None, :]).ravel()
    sums = np.bincount(ids, weights=u.ravel(), minlength=nbx * nby)
    counts = np.bincount(ids, minlength=nbx * nby)
    cx = np.minimum(((np.arange(nbx) + 0.5) * block.x / wx * gx).astype(np.int64), gx - 1)
    cy = np.minimum(((np.arange(nby) + 0.5) * block.y / wy * gy).astype(np.int64), gy - 1)
    centre = u[cy[:, None], cx[None, :]].ravel()
    per_thread = np.where(counts > 0, sums / np.maximum(counts, 1), centre)
    inside_x = np.minimum(wx - np.arange(nbx) * block.x, block.x)
    inside_y = np.minimum(wy - np.arange(nby) * block.y, block.y)
    return per_thread * (inside_y[:, None] * inside_x[None, :]).ravel()


def thread_trips(trips: np.ndarray, grid: int, loops: set[int], trace_xy: tuple[int, int]
                 ) -> np.ndarray:
    """T(t) of eq. (B5): each traced pseudo-thread's iterations (index y * gx + x) of the
    ``loops`` in ``trips`` (TRIP_DTYPE records; ``grid`` 1 or 2 mapped loops, as in
    lane_trips.warp_trip_factors); zeros for another grid."""
    gx, gy = max(trace_xy[0], 1), max(trace_xy[1], 1)
    out = np.zeros(gx * gy, np.float64)
    t = np.asarray(trips, TRIP_DTYPE)
    got = lane_indices(t[np.isin(t["loop"].astype(np.int64), sorted(loops))], grid)
    if got is None:
        return out
    t, x, y = got
    keep = (x < gx) & (y < gy) & (x >= 0) & (y >= 0)
    np.add.at(out, (y * gx + x)[keep], t["trips"][keep].astype(np.float64))
    return out
