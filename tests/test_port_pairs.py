"""port.restoring_stores and port.reloading_loads (their counts: port_pairs, a hash table in
numba) against a brute-force reference written from their definitions with Python sets, on
random launches: few addresses (pairs that repeat), a span of 2^58 (keys that no 64-bit
product of thread and offset holds), divergent warp instructions of 1 to 32 lanes."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.frontend.port import reloading_loads, restoring_stores


def _launch(rng, n_insts: int, n_sids: int, addresses: np.ndarray, lanes_max: int,
            warps: int):
    """Random WarpTrace columns: warp instructions of random static instructions in
    ``warps`` warps, each of 1 to ``lanes_max`` lanes (distinct, ascending, the first ones) at
    addresses drawn from ``addresses``."""
    sizes = rng.integers(1, lanes_max + 1, n_insts)
    lanes = [np.sort(rng.choice(lanes_max, k, replace=False)) for k in sizes]
    lane = np.concatenate(lanes).astype(np.uint8)
    addr = rng.choice(addresses, len(lane)).astype(np.uint64)
    inst_start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    inst_warp = rng.integers(0, warps, n_insts).astype(np.int64)
    inst_sid = rng.integers(0, n_sids, n_insts).astype(np.int64)
    return addr, lane, inst_start, inst_warp, inst_sid


def _events(addr, lane, inst_start, inst_warp, inst_sid):
    """(static instruction, thread, address) of every event, by brute force."""
    ends = list(inst_start[1:]) + [len(addr)]
    return [(int(inst_sid[i]), int(inst_warp[i]) * 64 + int(lane[e]), int(addr[e]))
            for i in range(len(inst_start)) for e in range(inst_start[i], ends[i])]


def _restoring_reference(cols, is_store) -> frozenset[int]:
    """Stores with fewer distinct (thread, address) pairs than half their events."""
    ev = _events(*cols)
    out = set()
    for s in {s for s, _, _ in ev if is_store[s]}:
        mine = [(t, a) for x, t, a in ev if x == s]
        if len(set(mine)) < 0.5 * len(mine):
            out.add(s)
    return frozenset(out)


def _reloading_reference(cols, is_store, restores) -> frozenset[int]:
    """Loads most of whose events read an address a restoring store writes, and most of
    whose events read a (thread, address) pair such a store writes."""
    ev = _events(*cols)
    pairs = {(t, a) for s, t, a in ev if s in restores}
    stored = {a for _, a in pairs}
    out = set()
    for s in {s for s, _, _ in ev if not is_store[s]}:
        mine = [(t, a) for x, t, a in ev if x == s]
        near = [(t, a) for t, a in mine if a in stored]
        if near and len(near) / len(mine) > 0.5 and sum(p in pairs for p in near) > 0.5 * len(
                mine):
            out.add(s)
    return frozenset(out)


@pytest.mark.parametrize("seed", range(12))
def test_the_counts_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    few = rng.integers(0, 8, 6) * 4  # pairs repeat: accumulators
    far = np.array([0, 4, 1 << 58, (1 << 58) + 4], np.uint64)  # no product key holds these
    wide = rng.integers(0, 1 << 20, 200) * 4
    addresses, lanes_max, warps = ((few, 4, 2), (far, 4, 1), (wide, 32, 6))[seed % 3]
    n_sids = 5
    cols = _launch(rng, int(rng.integers(1, 120)), n_sids, addresses, lanes_max, warps)
    is_store = rng.random(n_sids) < 0.5
    restores = restoring_stores(*cols, is_store)
    assert restores == _restoring_reference(cols, is_store)
    for chosen in (restores, frozenset(np.flatnonzero(is_store).tolist())):
        assert reloading_loads(*cols, is_store, chosen) == _reloading_reference(
            cols, is_store, chosen)


def test_a_table_that_grows_keeps_every_key():
    """More distinct pairs than a new table's slots (4096): the table grows (rehash) and
    the counts stay exact: a store of 20 000 distinct addresses, each written twice."""
    n = 20_000
    addr = np.tile(np.arange(n, dtype=np.uint64) * 4, 2)
    lane = np.zeros(2 * n, np.uint8)
    inst_start = np.arange(2 * n, dtype=np.int64)
    zeros = np.zeros(2 * n, np.int64)
    from cgpredict.port_pairs import store_counts

    events, distinct = store_counts(addr, lane, inst_start, zeros, zeros, np.array([True]))
    assert (events[0], distinct[0]) == (2 * n, n)
    # half its events restore a pair: not fewer than half, so no accumulator
    assert restoring_stores(addr, lane, inst_start, zeros, zeros, np.array([True])) == set()


@pytest.mark.parametrize("seed", range(4))
def test_the_counts_match_brute_force_when_one_thread_writes_each_address(seed):
    """Accumulators: the stores of a thread write addresses of its own (the tables keyed by
    the address, one owner each, against the pair tables), its loads read its own and
    others' addresses; thousands of distinct ones for the later seeds (the tables grow)."""
    rng = np.random.default_rng(seed)
    n_insts, warps, own = ((60, 2, 2), (400, 4, 3), (3000, 40, 4), (4000, 60, 6))[seed]
    addr, lane, inst_start, inst_warp, inst_sid = _launch(
        rng, n_insts, 5, np.zeros(1, np.uint64), 32, warps)
    is_store = np.array([False, True, False, True, False])
    per_inst = np.diff(np.r_[inst_start, len(addr)])
    thread = np.repeat(inst_warp, per_inst) * 64 + lane.astype(np.int64)
    mine = thread * 4096 + rng.integers(0, own, len(addr)) * 4  # the thread's own
    # another thread's (stored, not by this one), or one no store writes (offset >= own)
    other = rng.integers(0, 64 * warps, len(addr)) * 4096 + rng.integers(0, 2 * own,
                                                                        len(addr)) * 4
    sid = np.repeat(inst_sid, per_inst)
    p_own = np.array([0.9, 1.0, 0.25, 1.0, 0.6])[sid]  # loads 0, 2, 4: most, few, some
    addr = np.where(rng.random(len(addr)) < p_own, mine, other).astype(np.uint64)
    cols = (addr, lane, inst_start, inst_warp, inst_sid)
    restores = restoring_stores(*cols, is_store)
    assert restores == _restoring_reference(cols, is_store)
    for chosen in (restores, frozenset({1, 3})):
        assert reloading_loads(*cols, is_store, chosen) == _reloading_reference(
            cols, is_store, chosen)
    from cgpredict.port_pairs import (
        _reload_counts,
        _reload_counts_pairs,
        _store_counts,
        _store_counts_pairs,
    )

    chosen = np.ones(5, np.bool_)
    fast = _store_counts(addr, lane, inst_start, inst_warp, inst_sid, chosen)
    exact = _store_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid, chosen)
    assert all((a == b).all() for a, b in zip(fast, exact))

    fast = _reload_counts(addr, lane, inst_start, inst_warp, inst_sid, is_store,
                          np.array([False, True, False, True, False]))
    exact = _reload_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid, is_store,
                                 np.array([False, True, False, True, False]))
    assert all((a == b).all() for a, b in zip(fast, exact))
