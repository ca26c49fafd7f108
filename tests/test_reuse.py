"""Tests of cgpredict.memory.reuse: reuse distances against brute force, and the work-size rule of
scale_hits (a trace-size hit kept while its distance, grown, fits the cache) against the
rule applied to those distances."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.memory.lru import CacheConfig, hit_mask
from cgpredict.memory.reuse import (
    CacheScale,
    _reuse_distances,
    _scaled_hits,
    _stack_distances,
    scale_hits,
)

# --------------------------------------------------------------------------- stack distances


def brute_stack_distances(ids):
    prev, dist = [], []
    for t, x in enumerate(ids):
        p = max((s for s in range(t) if ids[s] == x), default=-1)
        prev.append(p)
        dist.append(len(set(ids[p + 1:t])) if p >= 0 else -1)
    return prev, dist


@pytest.mark.parametrize("seed, n, m", [(0, 200, 5), (1, 300, 40), (2, 150, 150), (3, 1, 1),
                                        (4, 64, 2)])
def test_stack_distances_brute_force(seed, n, m):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, m, n).astype(np.int64)
    prev, dist = _stack_distances(ids, m)
    bp, bd = brute_stack_distances(ids.tolist())
    assert prev.tolist() == bp and dist.tolist() == bd


def brute_reuse_distances(units, per_line):
    """Previous access to the same unit; distinct *other lines* (unit // per_line) between."""
    prev, dist = [], []
    for t, u in enumerate(units):
        p = max((s for s in range(t) if units[s] == u), default=-1)
        prev.append(p)
        between = {x // per_line for x in units[p + 1:t]} - {u // per_line}
        dist.append(len(between) if p >= 0 else -1)
    return prev, dist


@pytest.mark.parametrize("seed, n, m, per_line", [(0, 300, 16, 4), (1, 200, 64, 4),
                                                   (2, 200, 9, 3), (3, 100, 8, 8)])
def test_reuse_distances_count_lines_brute_force(seed, n, m, per_line):
    rng = np.random.default_rng(seed)
    units = rng.integers(0, m, n).astype(np.int64)
    lines = units // per_line
    prev, dist = _reuse_distances(units, lines, m, int(lines.max()) + 1)
    bp, bd = brute_reuse_distances(units.tolist(), per_line)
    assert prev.tolist() == bp and dist.tolist() == bd


def test_scale_hits_sectors_count_whole_lines():
    """32-B sectors of 128-B lines, a 64-line cache. Batch 0 reads sector 0 of lines 0..49,
    batch 1 reads them again: 50 exact hits, each after 49 other lines. Grown by 1.2 (59
    lines) they still fit; grown by 2 (98 lines, though only 98 sectors) they do not."""
    cache = CacheConfig(128, sets=1, ways=64)
    sectors = np.tile(np.arange(50, dtype=np.uint64) * 4, 2)
    batch = np.repeat([0, 1], 50)
    exact = np.repeat([False, True], 50)
    keep = scale_hits(sectors, batch, exact, cache, CacheScale(footprint=1.2), 4)
    assert keep.sum() == 50
    lost = scale_hits(sectors, batch, exact, cache, CacheScale(footprint=2.0), 4)
    assert lost.sum() == 0
    # all four sectors of each line: the same lines, the same verdicts
    full = np.tile(np.arange(200, dtype=np.uint64), 2)
    exact4 = np.repeat([False, True], 200)
    batch4 = np.repeat([0, 1], 200)
    assert scale_hits(full, batch4, exact4, cache, CacheScale(footprint=1.2), 4).sum() == 200
    assert scale_hits(full, batch4, exact4, cache, CacheScale(footprint=2.0), 4).sum() == 0


def test_stack_distances_hand():
    prev, dist = _stack_distances(np.array([0, 1, 2, 1, 0, 0], np.int64), 3)
    assert prev.tolist() == [-1, -1, -1, 1, 0, 4]
    assert dist.tolist() == [-1, -1, -1, 1, 2, 0]


# --------------------------------------------------------------------------- scale_hits

TINY = CacheConfig(64, sets=1, ways=4)  # capacity 4 lines, fully associative


def _scaled_hits_reference(units, lines, batch, hits, near, far, bw, row, capacity):
    """The rule of _scaled_hits from _reuse_distances (checked against brute force above),
    without its clock renumbering."""
    prev, dist = _reuse_distances(units, lines, int(units.max()) + 1, int(lines.max()) + 1)
    out = []
    for t in range(len(units)):
        p = prev[t]
        if not hits[t] or p < 0:
            out.append(bool(hits[t]))
            continue
        grow = bw
        if batch[t] != batch[p]:
            grow = (far if batch[t] - batch[p] >= row else near) * bw
        out.append(bool(dist[t] * grow < capacity))
    return out


@pytest.mark.parametrize("seed, m, per_line", [(0, 7, 1), (1, 40, 4), (2, 300, 4), (3, 5, 2)])
def test_scaled_hits_renumbered_clock_matches_reference(seed, m, per_line):
    """Streams of 3000 accesses to a few dozen units: the clock of _scaled_hits (4 positions
    per line + 64) is renumbered tens of times; every verdict equals the reference's."""
    rng = np.random.default_rng(seed)
    n = 3000
    units = rng.integers(0, m, n).astype(np.int64)
    lines = units // per_line
    batch = np.sort(rng.integers(0, 12, n)).astype(np.int64)
    hits = rng.random(n) < 0.8
    line_of = np.arange(m) // per_line  # the line of each unit id
    for near, far, bw, row, cap in [(1.5, 3.0, 1.0, 2, 6), (2.0, 8.0, 1.5, 3, 20), (1, 1, 1, 1, 3)]:
        got = _scaled_hits(units, line_of, m, int(line_of.max()) + 1, batch, hits, near, far,
                           bw, row, cap, np.zeros(n, np.int64), np.ones((1, 1)),
                           np.zeros(0, np.int64))
        want = _scaled_hits_reference(units, lines, batch, hits, near, far, bw, row, cap)
        assert got.tolist() == want


def test_scale_hits_identity_is_exact():
    rng = np.random.default_rng(7)
    lines = rng.integers(0, 12, 500).astype(np.uint64)
    batch = np.repeat(np.arange(5), 100)
    exact = hit_mask(lines, TINY)
    got = scale_hits(lines, batch, exact, TINY, CacheScale())
    assert np.array_equal(got, exact)
    assert CacheScale().identity and CacheScale(0.5, 1.0, 3).identity


@pytest.mark.parametrize("footprint", [4.0, 7.0, 8.0, 20.0])
def test_scale_hits_small_launch_equals_the_rule(footprint):
    """10 lines, a 64-line cache: up to a growth of 7 no reuse distance (at most 9 other
    lines) grown reaches the capacity, so every hit stays (scale_hits answers without the
    pass); from 8 on some do. Either way the verdicts are the reference rule's."""
    rng = np.random.default_rng(3)
    n = 2000
    lines = rng.integers(0, 10, n).astype(np.int64)
    batch = np.sort(rng.integers(0, 8, n)).astype(np.int64)
    hits = rng.random(n) < 0.9
    cache = CacheConfig(64, sets=4, ways=16)
    got = scale_hits(lines.astype(np.uint64), batch, hits, cache, CacheScale(footprint=footprint))
    want = _scaled_hits_reference(lines, lines, batch, hits, footprint, footprint, 1.0, 1, 64)
    assert got.tolist() == want
    assert (got.tolist() == hits.tolist()) == (footprint * 9 < 64)


def test_scale_hits_cross_batch_reuse():
    """Line 0 is reused in the next batch after 2 other lines: a hit in a 4-line cache. Grown
    by 1.5 the distance (3) still fits; grown by 2 it (4) does not; reuse inside a batch keeps
    its exact result whatever the growth."""
    lines = np.array([0, 1, 2, 0, 5, 6, 7, 5], np.uint64)
    batch = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    exact = hit_mask(lines, TINY)
    assert exact.tolist() == [False] * 3 + [True] + [False] * 3 + [True]
    keep = scale_hits(lines, batch, exact, TINY, CacheScale(footprint=1.5))
    assert keep.tolist() == exact.tolist()
    lost = scale_hits(lines, batch, exact, TINY, CacheScale(footprint=2.0))
    assert lost.tolist() == [False] * 7 + [True]
    # the scaled hits never exceed the exact ones
    big = scale_hits(lines, batch, exact, TINY, CacheScale(footprint=100.0))
    assert not (big & ~exact).any() and big[-1]


def test_scale_hits_block_row_uses_grid_growth():
    """A reuse batches_per_row or more batches back grows by footprint * grid_x."""
    lines = np.array([0, 1, 0, 2, 0], np.uint64)
    batch = np.array([0, 0, 1, 1, 3])
    exact = hit_mask(lines, TINY)
    assert exact.tolist() == [False, False, True, False, True]
    scale = CacheScale(footprint=1.0 + 1e-9, grid_x=3.0, batches_per_row=2)
    # access 2: one batch back, distance 1 * 1 < 4 stays; access 4: two batches back,
    # distance 1 (line 2) * 3 = 3 < 4 stays
    assert scale_hits(lines, batch, exact, TINY, scale).tolist() == exact.tolist()
    scale = CacheScale(footprint=1.0 + 1e-9, grid_x=4.0, batches_per_row=2)
    assert scale_hits(lines, batch, exact, TINY, scale).tolist() == [False, False, True,
                                                                      False, False]


def test_scale_hits_small_batch_grows_intra_batch_reuse():
    """When the trace holds fewer warps than a batch, reuse inside a batch spans more warps at
    the work size: distance 2 (lines 1, 2 between the uses of 0) grown by 2 reaches the
    4-line capacity and misses; grown by 1.5 it still hits."""
    lines = np.array([0, 1, 2, 0], np.uint64)
    batch = np.zeros(4, np.int64)
    exact = hit_mask(lines, TINY)
    assert exact.tolist() == [False, False, False, True]
    assert not CacheScale(batch_warps=2.0).identity
    keep = scale_hits(lines, batch, exact, TINY, CacheScale(batch_warps=1.5))
    assert keep.tolist() == exact.tolist()
    lost = scale_hits(lines, batch, exact, TINY, CacheScale(batch_warps=2.0))
    assert lost.tolist() == [False] * 4


def _reuse_of(sectors: np.ndarray, per_line: int) -> tuple[np.ndarray, np.ndarray]:
    """_reuse_distances of a sector stream: each access's previous use and its distance in
    distinct lines of ``per_line`` sectors (the brute-force side of the scale_hits tests)."""
    _, ids = np.unique(sectors, return_inverse=True)
    _, lid = np.unique(sectors // np.uint64(per_line), return_inverse=True)
    return _reuse_distances(ids.astype(np.int64), lid.astype(np.int64),
                            int(ids.max()) + 1, int(lid.max()) + 1)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("per_line", [1, 4])
def test_scale_hits_equals_the_reuse_distance_rule(seed, per_line):
    """The one-pass scale_hits keeps a hit exactly when the rule on _reuse_distances' output
    (distance grown by the footprint, the grid across a block row, the batch's warps) fits."""
    rng = np.random.default_rng(seed)
    n = 3000
    sectors = rng.integers(0, 200, n).astype(np.uint64) * np.uint64(7 + seed)
    batch = np.sort(rng.integers(0, 12, n))
    cache = CacheConfig(128, 4, 4)
    exact = rng.random(n) < 0.7
    scale = CacheScale(footprint=1.5 + seed / 3, grid_x=2.0, batches_per_row=3,
                       batch_warps=1.0 + (seed % 2))
    prev, dist = _reuse_of(sectors, per_line)
    before = batch[np.maximum(prev, 0)]
    crossed = (prev >= 0) & (batch != before)
    grow = np.where(batch - before >= 3, scale.footprint * 2.0, scale.footprint)
    grow = np.where(crossed, grow * scale.batch_warps, scale.batch_warps)
    want = exact & ~((prev >= 0) & (dist * grow >= 16))
    got = scale_hits(sectors, batch, exact, cache, scale, per_line)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("per_line", [1, 4])
def test_scale_hits_equals_the_reuse_distance_rule_on_a_long_clock(per_line):
    """As above with 6000 sectors over 60000 accesses (the clock of the one-pass version
    spans several groups of latest-use bits and is renumbered a dozen times) and a cache of
    512 lines, so that reuses are counted, not settled by their gap alone."""
    rng = np.random.default_rng(11)
    n = 60000
    sectors = rng.integers(0, 6000, n).astype(np.uint64)
    batch = np.sort(rng.integers(0, 40, n))
    cache = CacheConfig(128, 64, 8)
    exact = rng.random(n) < 0.8
    scale = CacheScale(footprint=1.3, grid_x=1.5, batches_per_row=4, batch_warps=1.0)
    prev, dist = _reuse_of(sectors, per_line)
    before = batch[np.maximum(prev, 0)]
    crossed = (prev >= 0) & (batch != before)
    grow = np.where(batch - before >= 4, 1.3 * 1.5, 1.3)
    grow = np.where(crossed, grow, 1.0)
    want = exact & ~((prev >= 0) & (dist * grow >= 512))
    counted = exact & (prev >= 0) & ((np.arange(n) - prev - 1) * grow >= 512)
    assert counted.sum() > 1000  # the count decides these
    assert (want != exact).any() and (want & counted).any()
    got = scale_hits(sectors, batch, exact, cache, scale, per_line)
    assert got.tolist() == want.tolist()


def _two_sweeps(warps: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """GRAMSCHMIDT gs_k3's pattern in one batch: ``warps`` warps, each its own line of every
    row, issued round robin; loop 1 (sid 0) sweeps the rows, loop 2 (sid 1) sweeps them
    again. Line ids and static instructions, in issue order."""
    row_lines = np.arange(rows * warps, dtype=np.uint64).reshape(rows, warps).ravel()
    lines = np.concatenate([row_lines, row_lines])
    sids = np.repeat(np.array([0, 1], np.int64), rows * warps)
    return lines, sids


def _lru_hits(lines: np.ndarray, capacity: int) -> list[bool]:
    """Brute-force fully associative LRU of ``capacity`` lines."""
    from collections import OrderedDict

    held: OrderedDict = OrderedDict()
    out = []
    for x in lines.tolist():
        out.append(x in held)
        held[x] = None
        held.move_to_end(x)
        if len(held) > capacity:
            held.popitem(last=False)
    return out


@pytest.mark.parametrize("capacity", [40, 100, 300, 600])
def test_scale_hits_second_loop_sweep_matches_lru_at_the_work_size(capacity):
    """Eq. (S1) against a brute-force LRU of the work size: 4 warps, trace trip 8, work trip
    64 (ratio 8). The second sweep reuses each line after the rest of the first sweep and
    the start of its own: 31 lines traced, 255 at the work size. The scaled trace verdicts
    equal the LRU's of the full-size stream (hits below 255 lines' capacity, misses
    above); without the loops (CacheScale before R1) every reuse stays a hit."""
    cache = CacheConfig(128, 1, capacity)
    lines, sids = _two_sweeps(4, 8)
    exact = hit_mask(lines, cache)
    assert exact[32:].all()
    big, big_sids = _two_sweeps(4, 64)
    want = _lru_hits(big, capacity)
    scale = CacheScale(footprint=8.0, loops=((0, ((1, 8.0),)), (1, ((2, 8.0),))))
    got = scale_hits(lines, np.zeros(len(lines), np.int64), exact, cache, scale, 1, None, sids)
    assert all(want[256:]) == all(got[32:]) and any(want[256:]) == any(got[32:])
    plain = scale_hits(lines, np.zeros(len(lines), np.int64), exact, cache,
                       CacheScale(footprint=8.0), 1, None, sids)
    assert plain[32:].all()


def test_sweep_growth_same_loop_keeps_distance():
    """Eq. (S1) by hand: sids 0 and 1 in loop 1 (x8), sid 2 in loop 2 (x8) nested in loop 3
    (x2), sid 3 in no loop: a reuse within loop 1 keeps its distance, across loops grows by
    the loops around one side and not the other."""
    scale = CacheScale(loops=((0, ((1, 8.0),)), (1, ((1, 8.0),)), (2, ((2, 8.0), (3, 2.0)))))
    g = scale.sweep_growth()
    assert g[0, 1] == g[1, 0] == g[0, 0] == 1.0
    assert g[0, 2] == pytest.approx(16.0) and g[2, 0] == pytest.approx(16.0)
    assert g[2, 2] == 1.0
    assert g.shape == (3, 3) and not scale.identity


@pytest.mark.parametrize("seed, per_line", [(0, 1), (1, 4), (2, 2)])
def test_scale_hits_per_instruction_rows_equal_per_access(seed, per_line):
    """``inst`` (each access's warp instruction, the batch and static instruction given per
    instruction) gives the same verdicts as the batch and static instruction copied to every
    access, with and without loop sweeps (eq. (S1)), over a renumbered clock."""
    rng = np.random.default_rng(seed)
    n_inst, n = 400, 4000
    inst = np.sort(rng.integers(0, n_inst, n)).astype(np.int64)
    batch_of = np.sort(rng.integers(0, 9, n_inst)).astype(np.int64)
    sid_of = rng.integers(0, 5, n_inst).astype(np.int64)
    lines = rng.integers(0, 60, n).astype(np.uint64)
    cache = CacheConfig(128, 2, 8)
    exact = hit_mask(lines // np.uint64(per_line), cache) | (rng.random(n) < 0.5)
    for scale in (CacheScale(footprint=3.0, grid_x=2.0, batches_per_row=2),
                  CacheScale(footprint=2.0, loops=((0, ((1, 4.0),)), (2, ((2, 8.0),))))):
        want = scale_hits(lines, batch_of[inst], exact, cache, scale, per_line, None,
                          sid_of[inst])
        got = scale_hits(lines, batch_of, exact, cache, scale, per_line, None, sid_of, inst)
        assert got.tolist() == want.tolist()
        assert (scale_hits(lines, batch_of, exact, cache, scale, per_line, None, None, inst)
                .tolist() == scale_hits(lines, batch_of[inst], exact, cache, scale, per_line)
                .tolist())
