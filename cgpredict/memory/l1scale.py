"""L1 hits at the work size from the trace size's (SPEC §2.3, the L1 counterpart of reuse.py).

The L1 analysis (``transactions.l1_hits``) is exact on the trace. A warp that reuses a sector
through the same load after a whole sweep of a per-thread loop touched, in between, every line
that sweep touches on its SM: at the work size that sweep is its loop's trip ratio longer, so
the reuse distance grows by it. A hit stays a hit only if that grown distance (distinct lines
of the SM, LRU keeps whole lines) still fits the L1. Reuse inside one sweep (the next
iteration's sector, a neighbour's) spans the same iterations at both sizes and keeps its result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..hashing import dense_ids
from .reuse import _reuse_distances

__all__ = ["LoopGrowth", "executions", "scale_l1_hits", "sweep_growth"]


@dataclass(frozen=True)
class LoopGrowth:
    """How one static load's same-warp reuse grows: ``steps`` are (executions of the load
    between use and reuse at which a reuse spans whole sweeps of its loops, innermost first:
    the product of their trace-size trips; growth of the reuse distance from there: the
    product of those loops' trip ratios work / trace)."""

    sid: int
    steps: tuple[tuple[int, float], ...]


def sweep_growth(sid: int, loops: tuple[tuple[float, float], ...]) -> LoopGrowth:
    """LoopGrowth of a load inside per-thread ``loops`` (trace trip, work trip), innermost
    first: spanning the first k loops' sweeps (gap >= T1...Tk) grows the distance by r1...rk."""
    steps: list[tuple[int, float]] = []
    span, grow = 1.0, 1.0
    for t_trace, t_work in loops:
        if t_trace <= 0:
            break
        span *= t_trace
        grow *= max(t_work / t_trace, 1.0)
        steps.append((max(int(round(span)), 1), grow))
    return LoopGrowth(sid=sid, steps=tuple(steps))


def scale_l1_hits(
    sector_keys: np.ndarray,
    line_shift: int,
    sm: np.ndarray,
    warp: np.ndarray,
    sid: np.ndarray,
    ordinal: np.ndarray,
    loads: np.ndarray,
    hits: np.ndarray,
    capacity_lines: int,
    growth: tuple[LoopGrowth, ...],
) -> np.ndarray:
    """Hits at the work size of the per-SM L1 (transactions in issue order): a load's hit on
    a sector the same warp's same load used ``ordinal`` executions before stays one only if
    the SM's distinct lines in between, times the growth of the sweeps it spans
    (LoopGrowth), still fit ``capacity_lines``."""
    if not growth or not len(sector_keys) or not any(g.steps and g.steps[-1][1] > 1.0
                                                     for g in growth):
        return hits
    k = max(len(g.steps) for g in growth)
    n_sids = int(max(int(sid.max()), max(g.sid for g in growth))) + 1
    thr = np.full((n_sids, k), np.iinfo(np.int64).max, np.int64)
    grow = np.ones((n_sids, k))
    for g in growth:
        for i, (t, r) in enumerate(g.steps):
            thr[g.sid, i], grow[g.sid, i] = t, r
    order = _loads_by_sm(sm, loads)  # each SM's loads together, in issue order
    keyed = (sm[order].astype(np.uint64) << np.uint64(44)) | sector_keys[order].astype(np.uint64)
    units, unit_vals = dense_ids(keyed)
    lines, line_vals = dense_ids(keyed, line_shift)
    prev, dist = _reuse_distances(units, lines, len(unit_vals), len(line_vals))
    keep = _keep(prev, dist, warp[order].astype(np.int64), sid[order].astype(np.int64),
                 ordinal[order].astype(np.int64), thr, grow, capacity_lines)
    out = hits.copy()
    out[order] &= keep
    return out


@njit(cache=True, nogil=True)
def _loads_by_sm(sm, loads):  # pragma: no cover - numba
    """The positions of the loads, grouped by SM (ascending), in issue order within each: a
    stable counting sort, O(n), the order a stable argsort of their SMs gives."""
    lo, hi, m = np.int64(0), np.int64(-1), 0
    for t in range(sm.shape[0]):
        if loads[t]:
            lo = sm[t] if m == 0 else min(lo, sm[t])
            hi = sm[t] if m == 0 else max(hi, sm[t])
            m += 1
    fill = np.zeros(hi - lo + 2, np.int64)
    for t in range(sm.shape[0]):
        if loads[t]:
            fill[sm[t] - lo + 1] += 1
    for k in range(1, fill.shape[0]):
        fill[k] += fill[k - 1]
    out = np.empty(m, np.int64)
    for t in range(sm.shape[0]):
        if loads[t]:
            out[fill[sm[t] - lo]] = t
            fill[sm[t] - lo] += 1
    return out


@njit(cache=True, nogil=True)
def _keep(prev, dist, warp, sid, ordinal, thr, grow, capacity):  # pragma: no cover - numba
    """Per access: False where a reuse's distance, grown by the sweeps the reusing warp's load
    ran through since the previous use (its executions in between), no longer fits the
    capacity. Whoever used the sector before (this load, another, another warp of the SM):
    what counts is how much of its loops the reusing load swept meanwhile."""
    n = prev.shape[0]
    n_sids = thr.shape[0]
    out = np.ones(n, np.bool_)
    # per (warp, load): its accesses' positions in this stream, in order (CSR: a stable
    # counting sort by key, O(n), the order a stable argsort gives)
    key = warp * n_sids + sid
    start = np.zeros(int(key.max()) + 2, np.int64)
    for t in range(n):
        start[key[t] + 1] += 1
    for k in range(1, start.shape[0]):
        start[k] += start[k - 1]
    order = np.empty(n, np.int64)
    fill = start[:-1].copy()
    for t in range(n):
        order[fill[key[t]]] = t
        fill[key[t]] += 1
    for t in range(n):
        p = prev[t]
        if p < 0 or dist[t] < 0:
            continue
        lo, hi = start[key[t]], start[key[t] + 1]
        j = np.searchsorted(order[lo:hi], p, side="right")  # its accesses at or before p
        gap = ordinal[t] - (ordinal[order[lo + j - 1]] if j > 0 else -1)
        g = 1.0
        for i in range(thr.shape[1]):
            if gap >= thr[sid[t], i]:
                g = grow[sid[t], i]
        out[t] = dist[t] * g < capacity
    return out


@njit(cache=True, nogil=True)
def executions(inst_warp, inst_sid, n_warps, n_sids):  # pragma: no cover - numba
    """Per warp instruction: how many times its warp executed its static instruction before
    (instructions of a warp are in its program order)."""
    count = np.zeros((n_warps, n_sids), np.int64)
    out = np.empty(inst_warp.shape[0], np.int64)
    for i in range(inst_warp.shape[0]):
        w, s = inst_warp[i], inst_sid[i]
        out[i] = count[w, s]
        count[w, s] += 1
    return out
