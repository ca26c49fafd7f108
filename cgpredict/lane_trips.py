"""A warp runs its slowest lane's trips (SPEC §2.2, divergence): the loops below the mapped
ones whose trip counts differ between the lanes of a warp.

Under SIMT a warp issues the body of a loop as often as the lane that iterates it longest;
the lanes that left wait, masked off. The per-thread counts of the trace (block executions
over threads, ``LaunchContext.per_thread``) are means over the lanes. The runtime writes one
``cgp_trip`` record per entry of a region loop at depth >= 2 of a recorded launch
(``runtime/cgp_runtime.h``: the loop, its iterations, the indices of the mapped loops at the
entry), from which, per loop L::

    F_L = sum_g n_g * sum_k max_{lanes of g} t(lane, k) / sum_lanes sum_k t(lane, k)   (D1)

where g runs over the groups of trace lanes one work-size warp spans (eq. (D2)), n_g is the
group's lanes in the trace grid, and t(lane, k) is the iterations of the lane's k-th entry of
L (0 when the lane has fewer entries: the warp runs the k-th entry while any lane does).
A warp's executions of a block whose innermost loop is L are the mean thread's times F_L
(eq. (D3), ``per_warp``); the compute instructions are counted from them.

**The window (D2).** A work-size warp spans ``wx = min(32, bx)`` threads along x and
``wy = min(32 / wx, by)`` rows; the groups of eq. (D1) are windows of as many neighbouring
trace lanes, ``kx = min(wx, X_trace)`` by ``ky = min(wy, Y_trace)``. At the work size these
are the warp's lanes; a smaller trace's lanes stand s work threads apart, and eq. (D4)
(``lane_scale``) carries the windows' factor to lanes s times closer (the round-eleven rule,
groups of ``floor(w * X_trace / X_work)`` lanes inside one warp's extent, was a lower bound:
one lane, F = 1, for mandelbrot's 16x16 warps traced at 128 of 2048).

Not modelled: loops of helper functions (their trips are not recorded), and the memory
instructions of such a loop (the memory analysis counts the trace's masked warp
instructions at the mean thread's count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .block import Block
from .frontend.tracefile_format import NO_INDEX, TRIP_DTYPE
from .instrument.records import LoopInfo

WARP_LANES = 32

__all__ = ["LaneRecords", "LaneSpan", "lane_records", "launch_trip_factors", "per_warp",
           "warp_span", "warp_trip_factors"]


@dataclass(frozen=True)
class LaneSpan:
    """The trace lanes of one eq. (D1) group (eq. (D2)): ``x`` along x, ``y`` along y."""

    x: int
    y: int


def warp_span(block: Block, trace_xy: tuple[float, float]) -> LaneSpan:
    """Eq. (D2): the window of neighbouring trace lanes shaped as one work-size warp, for a
    grid of ``trace_xy`` pseudo-threads traced (at most the traced lanes along each axis)."""
    wx = min(WARP_LANES, block.x)
    wy = min(max(WARP_LANES // wx, 1), block.y)

    def lanes(w: int, traced: float) -> int:
        return max(1, min(w, math.floor(traced + 1e-9))) if traced > 0 else 1

    return LaneSpan(lanes(wx, trace_xy[0]), lanes(wy, trace_xy[1]))


def lane_indices(trips: np.ndarray, grid: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The records of ``trips`` (TRIP_DTYPE) a grid of ``grid`` mapped loops keeps and each
    one's lane (x, y): a 2-D grid's lanes are (index2, index1), a 1-D grid's (index1, 0); a
    record without its lane's index is dropped. None for a grid of neither 1 nor 2 loops."""
    t = np.asarray(trips, TRIP_DTYPE)
    if grid == 2:
        t = t[t["index2"] != NO_INDEX]
        x, y = t["index2"].astype(np.int64), t["index1"].astype(np.int64)
    elif grid == 1:
        t = t[(t["index2"] == NO_INDEX) | (t["index1"] != NO_INDEX)]
        x, y = t["index1"].astype(np.int64), np.zeros(len(t), np.int64)
    else:
        return None
    keep = x < NO_INDEX
    return t[keep], x[keep], y[keep]


def warp_trip_factors(trips: np.ndarray, grid: int, span: LaneSpan,
                      trace_xy: tuple[int, int]) -> dict[int, float]:
    """Eq. (D1): per loop below the mapped ones (depth > ``grid``), the warp's iterations
    over the mean lane's, from ``trips`` (TRIP_DTYPE records of the launches to pool) with
    lanes grouped by ``span``. Loops whose factor is 1 (every group's lanes run the same
    trips) are left out."""
    got = lane_indices(trips, grid)
    if got is None or span.x * span.y <= 1 or not len(got[0]):
        return {}
    t, x, y = got
    loop, row = t["loop"].astype(np.int64), t["row"].astype(np.int64)
    n = t["trips"].astype(np.int64)
    k = _entry_ordinals(loop, row, y * (int(x.max()) + 1) + x)
    gx, gy = x // span.x, y // span.y
    first, inverse = _groups((loop, row, gy, gx, k))
    most = np.zeros(len(first), np.int64)
    np.maximum.at(most, inverse, n)
    lanes = _group_lanes(gx[first], gy[first], span, trace_xy)
    out = {}
    for lid in np.unique(loop):
        mean = float(n[loop == lid].sum())
        warp = float((lanes * most)[loop[first] == lid].sum())
        if mean > 0 and warp > mean * (1 + 1e-12):
            out[int(lid)] = warp / mean
    return out


@dataclass(frozen=True)
class LaneRecords:
    """The trip records of a region's launches as eq. (D1) reads them at any span (the
    records a grid of ``grid`` mapped loops keeps, ``lane_records``): per record its loop,
    launch row, lane (``x``, ``y``), iterations and entry ordinal k, in the trace's order."""

    grid: int
    loop: np.ndarray
    row: np.ndarray
    x: np.ndarray
    y: np.ndarray
    trips: np.ndarray
    entry: np.ndarray


def lane_records(trips: np.ndarray, grid: int) -> LaneRecords:
    """The LaneRecords of ``trips`` (TRIP_DTYPE) under a grid of ``grid`` mapped loops: the
    records warp_trip_factors keeps (a 2-D grid's lanes are (index2, index1), a 1-D grid's
    index1; a record without its lane's index is dropped) and their entry ordinals, which
    do not depend on the span. None kept for a grid of neither 1 nor 2 loops."""
    got = lane_indices(trips, grid)
    t, x, y = got if got is not None else (
        np.zeros(0, TRIP_DTYPE), np.zeros(0, np.int64), np.zeros(0, np.int64))
    loop, row = t["loop"].astype(np.int64), t["row"].astype(np.int64)
    k = _entry_ordinals(loop, row, y * (int(x.max()) + 1) + x) if len(t) else loop
    return LaneRecords(grid, loop, row, x, y, t["trips"].astype(np.int64), k)


def launch_trip_factors(rec: LaneRecords, spans: Mapping[int, tuple[LaneSpan, tuple[int, int]]]
                        ) -> dict[int, dict[int, float]]:
    """Eq. (D1) for each launch row of ``spans`` on its own records of ``rec``, with its own
    span and traced grid (``spans[row]``: (LaneSpan, (X, Y))): the factors
    warp_trip_factors gives on the row's records alone, for every row in one pass (a
    region launched from a host loop: GRAMSCHMIDT's 512 launches a kernel, a call each took
    about 1 ms of numpy overhead). The same integer sums, so the same factors."""
    out: dict[int, dict[int, float]] = {int(r): {} for r in spans}
    rows = np.array(sorted(spans), np.int64)
    if not len(rows) or not len(rec.row):
        return out
    pos = np.searchsorted(rows, rec.row)
    pos = np.minimum(pos, len(rows) - 1)
    sx, sy, tx, ty = np.array([(s.x, s.y, *xy) for s, xy in (spans[int(r)] for r in rows)],
                              np.int64).reshape(-1, 4).T
    keep = (rows[pos] == rec.row) & (sx * sy > 1)[pos]
    p, loop, n = pos[keep], rec.loop[keep], rec.trips[keep]
    if not len(n):
        return out
    gx, gy = rec.x[keep] // sx[p], rec.y[keep] // sy[p]
    first, most = _group_most((loop, p, gy, gx, rec.entry[keep]), n)
    gp = p[first]
    nx = np.clip(tx[gp] - gx[first] * sx[gp], 1, sx[gp])
    ny = np.clip(ty[gp] - gy[first] * sy[gp], 1, sy[gp])  # n_g: _group_lanes, row by row
    loops = int(rec.loop.max()) + 1
    cell = len(rows) * loops
    mean = np.bincount(p * loops + loop, weights=n, minlength=cell)
    warp = np.bincount(gp * loops + loop[first], weights=nx * ny * most, minlength=cell)
    for c in np.flatnonzero((mean > 0) & (warp > mean * (1 + 1e-12))):
        out[int(rows[c // loops])][int(c % loops)] = float(warp[c]) / float(mean[c])
    return out


def _group_most(columns: tuple[np.ndarray, ...], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The groups of records with equal non-negative ``columns``: the index of each group's
    first record and the group's largest ``n`` (one stable sort of a mixed-radix key, then
    a maximum per run: ``np.maximum.at`` over a million records is slow)."""
    radix = [int(c.max()) + 1 for c in columns]
    if math.prod(radix) >= 2**62:
        first, inverse = _groups(columns)
        most = np.zeros(len(first), np.int64)
        np.maximum.at(most, inverse, n)
        return first, most
    key = np.zeros(len(n), np.int64)
    for c, r in zip(columns, radix):
        key = key * r + c
    order = np.argsort(key, kind="stable")
    sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    return order[starts], np.maximum.reduceat(n[order], starts)


def _groups(columns: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the non-negative integer ``columns``: the index of each one's
    first record and each record's group. One int64 key in mixed radix where it fits (a
    sort of one column: ``np.unique(axis=0)`` took 0.25 s on 82,048 records, advise's 27
    block shapes of 3MM tiled 6.7 s), else the rows themselves."""
    radix = [int(c.max()) + 1 for c in columns]
    if math.prod(radix) < 2**62:
        key = np.zeros(len(columns[0]), np.int64)
        for c, r in zip(columns, radix):
            key = key * r + c
    else:
        key = np.stack(columns, axis=1)
    _, first, inverse = np.unique(key, axis=0 if key.ndim > 1 else None,
                                  return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _entry_ordinals(loop: np.ndarray, row: np.ndarray, thread: np.ndarray) -> np.ndarray:
    """k of every record: its entry's ordinal among the same thread's entries of the same
    loop in the same launch (records are written in entry order per loop)."""
    order = np.lexsort((np.arange(len(loop)), thread, row, loop))
    sl, sr, st = loop[order], row[order], thread[order]
    new = np.ones(len(order), np.bool_)
    new[1:] = (sl[1:] != sl[:-1]) | (sr[1:] != sr[:-1]) | (st[1:] != st[:-1])
    first = np.maximum.accumulate(np.where(new, np.arange(len(order)), 0))
    k = np.empty(len(order), np.int64)
    k[order] = np.arange(len(order)) - first
    return k


def _group_lanes(gx: np.ndarray, gy: np.ndarray, span: LaneSpan, trace_xy: tuple[int, int]
                 ) -> np.ndarray:
    """n_g of eq. (D1): the lanes of each group inside the traced grid (edge groups fewer)."""
    nx = np.clip(trace_xy[0] - gx * span.x, 1, span.x)
    ny = np.clip(trace_xy[1] - gy * span.y, 1, span.y)
    return nx * ny


def per_warp(per_thread: Mapping[int, float], loops: Sequence[LoopInfo],
             factors: Mapping[int, float]) -> dict[int, float]:
    """Eq. (D3): each block's executions per lane slot of a warp: the mean thread's times
    the factor F_L of its innermost loop that has one (the blocks of L outside a nested
    loop with a factor of its own take L's)."""
    if not factors:
        return dict(per_thread)
    depth: dict[int, int] = {}
    factor: dict[int, float] = {}
    for lid, f in factors.items():
        lp = loops[lid]
        for b in lp.blocks:
            if lp.depth > depth.get(b, -1):
                depth[b], factor[b] = lp.depth, f
    return {b: n * factor.get(b, 1.0) for b, n in per_thread.items()}
