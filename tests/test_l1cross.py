"""Eq. (L1x): a walking load's first hits on sectors a prologue load fetched (memory/l1cross.py)."""

from __future__ import annotations

import numpy as np

from cgpredict.memory.l1cross import cross_fill_misses, walking_loads
from cgpredict.memory.l1scale import sweep_growth

N = 4096  # sectors the prologue fetches and the walk reads


def _stream(walk_sid: int = 1):
    """One SM: warp 0's prologue (sid 0) fetches sectors 0..N-1 (misses), then warps 0 and 1
    walk them with sid ``walk_sid`` (all hits in the exact analysis)."""
    keys = np.concatenate([np.arange(N), np.arange(N), np.arange(N)]).astype(np.uint64)
    warp = np.concatenate([np.zeros(N), np.zeros(N), np.ones(N)]).astype(np.int64)
    sid = np.concatenate([np.zeros(N), np.full(2 * N, walk_sid)]).astype(np.int64)
    hits = np.concatenate([np.zeros(N, bool), np.ones(2 * N, bool)])
    return keys, np.zeros(3 * N, np.int64), sid, warp, np.ones(3 * N, bool), hits


def _hash_share(key: int) -> float:
    """The sector's share of eq. (L1x), written out in Python (64-bit wrap-around product)."""
    return ((key * 0x9E3779B97F4A7C15) % (1 << 64) >> 40) / 16777216.0


def test_walk_longer_by_g_misses_all_but_one_in_g_of_the_prologue_sectors() -> None:
    keys, sm, sid, warp, loads, hits = _stream()
    for g in (4.0, 16.0):
        out = cross_fill_misses(keys, sm, sid, warp, loads, hits, (sweep_growth(1, ((N, N * g),)),))
        first, second = out[N:2 * N], out[2 * N:]
        expect = np.array([_hash_share(k) >= 1 - 1 / g for k in range(N)])  # brute force
        assert (first == expect).all()
        assert abs((~first).mean() - (1 - 1 / g)) < 0.02  # the share 1 - 1/g, (L1x)
        assert second.all()  # the second warp rides the walk's own fetch: still hits
        assert not out[:N].any()  # the prologue's misses stay misses


def test_no_growth_keeps_every_hit() -> None:
    keys, sm, sid, warp, loads, hits = _stream()
    out = cross_fill_misses(keys, sm, sid, warp, loads, hits, (sweep_growth(1, ((N, N),)),))
    assert (out == hits).all()


def test_a_loop_invariant_load_keeps_its_hits() -> None:
    """A load that reads the same sector every trip (a[i] in the loop) is no walk."""
    keys = np.concatenate([np.arange(N), np.full(N, 5)]).astype(np.uint64)
    warp = np.zeros(2 * N, np.int64)
    sid = np.concatenate([np.zeros(N), np.ones(N)]).astype(np.int64)
    hits = np.concatenate([np.zeros(N, bool), np.ones(N, bool)])
    growth = (sweep_growth(1, ((N, 16 * N),)),)
    assert walking_loads(sid, warp, keys, np.ones(2 * N, bool), growth)[1] == 0.0
    out = cross_fill_misses(keys, np.zeros(2 * N, np.int64), sid, warp, np.ones(2 * N, bool),
                            hits, growth)
    assert (out == hits).all()


def test_walks_keep_the_hits_they_take_on_each_others_fills() -> None:
    """p[j].y on the sector p[j].x fetched: both walk, both grow, the hit stays."""
    keys, sm, sid, warp, loads, hits = _stream(walk_sid=2)
    sid[:N] = 1  # the fetcher is itself a walking load of the same loop
    growth = (sweep_growth(1, ((N, 16 * N),)), sweep_growth(2, ((N, 16 * N),)))
    out = cross_fill_misses(keys, sm, sid, warp, loads, hits, growth)
    assert (out == hits).all()


def test_walking_loads_marks_prologue_loads_and_stores() -> None:
    keys, sm, sid, warp, loads, hits = _stream()
    loads = loads.copy()
    sid = np.append(sid, 3)
    keys = np.append(keys, np.uint64(7))
    warp = np.append(warp, 0)
    loads = np.append(loads, False)  # sid 3: a store
    g = walking_loads(sid, warp, keys, loads, (sweep_growth(1, ((N, 8 * N),)),))
    assert g[0] == -1.0 and g[1] == 8.0 and g[3] == 0.0
