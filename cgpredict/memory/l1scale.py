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
from .reuse import _lines_between, _touch

__all__ = ["LoopGrowth", "executions", "live_room", "scale_l1_gathered", "scale_l1_hits",
           "sweep_growth", "unit_runs"]


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
    (LoopGrowth), still fit ``capacity_lines``; a sweep counts as spanned from its trip less
    the executions a unit lasts (unit_runs, eq. (L1u))."""
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
    sm_o = np.ascontiguousarray(sm[order], np.int64)
    units, n_units, lines, n_lines = _sm_ids(sm_o, sector_keys[order], line_shift)
    prev, dist = _grouped_distances(units, lines, sm_o, n_units, n_lines)
    runs = unit_runs(sector_keys, warp, sid, loads, n_sids)  # (L1u)
    thr = np.where(thr == np.iinfo(np.int64).max, thr,
                   np.maximum(thr - np.minimum(runs[:, None], thr // 2) + 1, 1))
    keep = _keep(prev, dist, *(np.asarray(a[order], np.int64) for a in (warp, sid, ordinal)),
                 thr, grow, capacity_lines)  # one copy each (the gather), not two
    out = hits.copy()
    out[order] &= keep
    return out


def unit_runs(sector_keys: np.ndarray, warp: np.ndarray, sid: np.ndarray, loads: np.ndarray,
              n_sids: int) -> np.ndarray:
    """Per static load: the executions a warp reads one L1 unit for (its transactions over
    its distinct (warp, unit) pairs, at least 1), eq. (L1u): a lane walking its own row of
    4-B floats stays 8 executions on a 32-B sector, a coalesced walk 1, so a reuse one sweep
    later lies that many executions short of a whole sweep."""
    out = np.ones(n_sids, np.int64)
    if not loads.any():
        return out
    s = sid[loads].astype(np.int64)
    who = s.astype(np.uint64) << np.uint64(32) | warp[loads].astype(np.uint64)
    k = np.asarray(sector_keys, np.uint64)[loads]
    k = k - k.min()
    bits = int(k.max()).bit_length()
    if bits + int(who.max()).bit_length() <= 64:  # one word a pair: a 1-D sort
        pair = np.sort(who << np.uint64(bits) | k)  # a sort, not np.unique's hash table
        first = pair[np.r_[True, pair[1:] != pair[:-1]]] >> np.uint64(bits)
    else:
        o = np.lexsort((k, who))
        w, kk = who[o], k[o]
        new = np.r_[True, (w[1:] != w[:-1]) | (kk[1:] != kk[:-1])]
        first = w[new]
    n_pairs = np.bincount((first >> np.uint64(32)).astype(np.int64), minlength=n_sids)
    n_tr = np.bincount(s, minlength=n_sids)
    have = n_pairs > 0
    out[have] = np.maximum(n_tr[have] // n_pairs[have], 1)
    return out


def scale_l1_gathered(
    sector_keys: np.ndarray,
    line_shift: int,
    sm: np.ndarray,
    sid: np.ndarray,
    loads: np.ndarray,
    hits: np.ndarray,
    capacity_lines: int,
    gathers: tuple[tuple[int, float], ...],
) -> np.ndarray:
    """Hits at the work size of the per-SM L1 for the gathers (``gathers``: static load,
    growth of the array it picks from; footprint.size_check): a gather's hit stays one only
    if the SM's distinct lines since the line's previous use, grown by that growth, still
    fit the L1, the L2's rule (reuse.scale_gathered) on each SM's own stream:

        hit  <=>  distance_SM x growth < L1 lines - live                  (LP2), (LP2v)

    A random pick reuses a line only when another pick of the same SM chose it first, and
    the picks between them spread over an array that grows by ``growth``; at the work size
    the SM's other loads' kept sectors (``live``, live_room) always lie between and hold
    their room, where the trace's lockstep can put a step's picks side by side."""
    if not gathers or not len(sector_keys):
        return hits
    grow = np.ones(int(max(int(sid.max()), max(s for s, _ in gathers))) + 1)
    for s, g in gathers:
        grow[s] = g
    order = _loads_by_sm(sm, loads)
    sm_o = np.ascontiguousarray(sm[order], np.int64)
    units, n_units, lines, n_lines = _sm_ids(sm_o, sector_keys[order], line_shift)
    prev, dist = _grouped_distances(units, lines, sm_o, n_units, n_lines)
    g = grow[sid[order]]
    room = capacity_lines - live_room(prev, hits[order] & (g <= 1.0), sm_o)  # (LP2v)
    out = hits.copy()
    out[order] &= (g <= 1.0) | (dist < 0) | (dist * g < room)
    return out


def live_room(prev: np.ndarray, kept: np.ndarray, sm: np.ndarray) -> np.ndarray:
    """Per access (grouped by SM): the L1 units its SM's ``kept`` reuses hold on average,
    the sum of their reuse intervals (positions since the unit's previous use) over the SM's
    accesses (Little's law), eq. (LP2v)."""
    if not len(sm):
        return np.zeros(0)
    pos = np.arange(len(sm), dtype=np.int64)
    span = np.where(kept & (prev >= 0), pos - prev, 0).astype(np.float64)
    base = int(sm.min())
    held = np.bincount(sm - base, weights=span)
    runs = np.bincount(sm - base).astype(np.float64)
    return (held / np.maximum(runs, 1.0))[sm - base]


_SM_SHIFT = 44  # a key of (SM, sector): the SM above the sector's 44 bits


def _sm_ids(sm: np.ndarray, keys: np.ndarray, line_shift: int
            ) -> tuple[np.ndarray, int, np.ndarray, int]:
    """(ids, count) of the (SM, sector) pairs and of the (SM, line) pairs of a stream whose
    accesses are grouped by SM (``_loads_by_sm``): ``dense_ids`` of the keys ``sm << 44 |
    sector`` and of those keys >> ``line_shift``, the same ids (0, 1, ... in order of first
    use). One pass over tables indexed by sector and by line (``_grouped_ids``), where those
    keys span the SMs times 2^44 and take dense_ids' hash table; dense_ids itself when the
    sectors span far more values than the accesses or reach bit 44."""
    k = np.ascontiguousarray(keys, np.uint64)
    if len(k):
        lo, hi = int(k.min()), int(k.max())
        if hi < 1 << _SM_SHIFT and hi - lo < max(4 * len(k), 1 << 20):
            return _grouped_ids(np.ascontiguousarray(sm, np.int64), k, np.uint64(lo),
                                hi - lo + 1, int(line_shift))
    keyed = (sm.astype(np.uint64) << np.uint64(_SM_SHIFT)) | k
    units, unit_vals = dense_ids(keyed)
    lines, line_vals = dense_ids(keyed, line_shift)
    return units, len(unit_vals), lines, len(line_vals)


@njit(cache=True, nogil=True)
def _grouped_ids(sm, keys, lo, span, shift):  # pragma: no cover - numba
    """_sm_ids by tables: per sector (and per line) the SM that last numbered it and its id
    there. An SM's accesses are contiguous, so a sector whose stamp is not this SM is new to
    it: it gets the next id, as a new (SM, sector) key gets the next id in dense_ids."""
    n = keys.shape[0]
    sh = np.uint64(shift)
    lo_line = lo >> sh
    n_line = np.int64(((lo + np.uint64(span - 1)) >> sh) - lo_line) + 1
    unit_sm = np.full(span, -1, np.int64)
    unit_id = np.empty(span, np.int64)
    line_sm = np.full(n_line, -1, np.int64)
    line_id = np.empty(n_line, np.int64)
    units = np.empty(n, np.int64)
    lines = np.empty(n, np.int64)
    m_u, m_l = 0, 0
    for t in range(n):
        s = sm[t]
        v = np.int64(keys[t] - lo)
        if unit_sm[v] != s:
            unit_sm[v] = s
            unit_id[v] = m_u
            m_u += 1
        units[t] = unit_id[v]
        w = np.int64((keys[t] >> sh) - lo_line)
        if line_sm[w] != s:
            line_sm[w] = s
            line_id[w] = m_l
            m_l += 1
        lines[t] = line_id[w]
    return units, m_u, lines, m_l


@njit(cache=True, nogil=True)
def _grouped_distances(units, lines, sm, n_units, n_lines):  # pragma: no cover - numba
    """``reuse._reuse_distances`` of a stream grouped by SM whose units and lines are (SM,
    sector) and (SM, line) pairs (``_sm_ids``): a reuse and its previous use lie in one SM's
    run, and so does every access between them, so each run is counted on its own, with a
    Fenwick tree over the run's positions (an SM's share of the stream, where one tree over
    the whole stream left the CPU's caches). The same previous uses (positions in the whole
    stream) and distances."""
    n = units.shape[0]
    prev = np.full(n, -1, np.int64)
    dist = np.full(n, -1, np.int64)
    last_unit = np.full(n_units, -1, np.int64)
    last_line = np.full(n_lines, -1, np.int64)
    longest, s = 0, 0
    for t in range(1, n + 1):
        if t == n or sm[t] != sm[s]:
            longest, s = max(longest, t - s), t
    tree = np.zeros(longest + 1, np.int64)
    s = 0
    while s < n:
        e = s + 1
        while e < n and sm[e] == sm[s]:
            e += 1
        run = tree[: e - s + 1]
        run[:] = 0
        for t in range(s, e):
            p = last_unit[units[t]]
            q = last_line[lines[t]]
            if p >= 0:
                prev[t] = p
                dist[t] = _lines_between(run, p - s, q - s, t - s)
            _touch(run, q - s if q >= 0 else -1, t - s)
            last_unit[units[t]] = t
            last_line[lines[t]] = t
        s = e
    return prev, dist


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
    what counts is how much of its loops the reusing load swept meanwhile, and, where the
    same warp's other load used it before the reusing load ran at all, also that load's
    executions after the use (the rest of its walk, eq. (L1g))."""
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
        if j == 0 and warp[p] == warp[t] and sid[p] != sid[t]:  # (L1g): another load's walk
            lo_p = start[key[p]]
            k = np.searchsorted(order[lo_p:start[key[p] + 1]], t)  # its accesses before t
            gap += ordinal[order[lo_p + k - 1]] - ordinal[p]
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
