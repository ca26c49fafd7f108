"""A loop's L1 hits on sectors a load outside the loop fetched, at the work size (eq. (L1x)).

A thread that loads its own element before a loop (nbody's ``p[i]``) and then walks the same
array in the loop (``p[j]``, j over every particle) finds in its SM's L1 the sectors its
block's prologue fetched. In the trace that prologue covers the traced block's share of a
small array: with one traced block of 1024 threads and NP = 1024 it covers all of it, and
the loop's walk never misses. At the work size the prologue still covers the SM's own
threads' elements, but the walk is its loop's trip ratio g longer, so only 1 / g of the
walk's sectors are the prologue's; the others are fetched by the walk itself (by the SM's
first warp to reach them; the others ride that fetch, eq. (C1)). So of the first hits of a
walking load on sectors that a load outside every per-thread loop fetched, a share

    1 - 1 / g        (g: the walking load's innermost loop trip, work over trace)     (L1x)

becomes a miss at the work size; the selection is a fixed hash of the sector, so a run is
reproducible. A walking load is one whose warps touch new sectors as the loop runs: its
distinct (warp, sector) pairs exceed twice its transactions over its innermost trace trip
(a loop-invariant load, ``a[i]`` read in every iteration, touches the same sectors each
trip and keeps its hits). Loads inside growing loops keep the hits they take on each other's
fills (``p[j].y`` on the sector ``p[j].x`` fetched): their walks grow together.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .l1scale import LoopGrowth

__all__ = ["cross_fill_misses", "walking_loads"]

_HASH = np.uint64(0x9E3779B97F4A7C15)  # a sector's fixed pseudo-random share, (L1x)


def walking_loads(sid: np.ndarray, warp: np.ndarray, keys: np.ndarray, loads: np.ndarray,
                  growth: tuple[LoopGrowth, ...]) -> np.ndarray:
    """Per static instruction: eq. (L1x)'s g where it is a walking load inside a per-thread
    loop that grows to the work size (its distinct (warp, sector) pairs above twice its
    transactions over its innermost trace trip), else 0; -1 where it is a load outside every
    per-thread loop (a prologue whose fills the walks may hit)."""
    n_sids = int(max(int(sid.max(initial=0)), max((g.sid for g in growth), default=0))) + 1
    out = np.full(n_sids, -1.0)
    out[np.unique(sid[~loads])] = 0.0  # stores fill nothing
    for g in growth:
        out[g.sid] = 0.0
        if not g.steps or g.steps[0][1] <= 1.0:
            continue
        mine = loads & (sid == g.sid)
        n = int(mine.sum())
        if n == 0:
            continue
        pairs = np.unique(np.stack([warp[mine].astype(np.uint64), keys[mine]]), axis=1).shape[1]
        if pairs > 2.0 * n / max(g.steps[0][0], 1):
            out[g.sid] = g.steps[0][1]
    return out


def cross_fill_misses(keys: np.ndarray, sm: np.ndarray, sid: np.ndarray, warp: np.ndarray,
                      loads: np.ndarray, hits: np.ndarray,
                      growth: tuple[LoopGrowth, ...]) -> np.ndarray:
    """The L1 hit mask (per transaction, issue order) with eq. (L1x) applied: the first hit of
    a walking load on an SM's sector that a prologue load fetched becomes a miss for a share
    1 - 1 / g of the sectors (then the walking load is the sector's fetcher)."""
    if not len(keys) or not growth:
        return hits
    g = walking_loads(sid, warp, keys, loads, growth)
    if not (g > 1.0).any():
        return hits
    order = np.lexsort((np.arange(len(keys)), keys, sm))
    out = hits.copy()
    _convert(np.ascontiguousarray(keys[order]), np.ascontiguousarray(sm[order], np.int64),
             np.ascontiguousarray(sid[order], np.int64), np.ascontiguousarray(loads[order]),
             np.ascontiguousarray(hits[order]), order, g, out)
    return out


@njit(cache=True)
def _convert(keys, sm, sid, loads, hits, order, g, out):  # pragma: no cover - numba
    """Walk the transactions grouped by (SM, sector) in issue order, tracking each sector's
    fetcher (the load whose miss filled it); a walking load's hit on a prologue's fill turns
    into a miss where the sector's hash share is below 1 - 1 / g (eq. (L1x))."""
    filler = -1
    for i in range(len(keys)):
        if i == 0 or keys[i] != keys[i - 1] or sm[i] != sm[i - 1]:
            filler = -1
        if not loads[i]:
            continue
        s = sid[i]
        if not hits[i]:
            filler = s
            continue
        if filler >= 0 and g[filler] < 0.0 and g[s] > 1.0:
            share = float((keys[i] * _HASH) >> np.uint64(40)) / 16777216.0
            if share < 1.0 - 1.0 / g[s]:  # (L1x)
                out[order[i]] = False
                filler = s
