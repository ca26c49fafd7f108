"""Tests of the sparse kernels' memory mechanisms (issue t4): the L1 allocating sectors, eq.
(L1a), and the L2's request stage, eq. (B2q), both in docs/models.md.

Oracles: hand-counted LRU cases (rows read a sector at a time), a brute-force LRU of sectors,
and bounds computed on paper from a hand-made profile."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.memory.lru import CacheConfig, sector_hit_mask
from cgpredict.models import launch_bounds, launch_geometry
from cgpredict.models.bounds import whole_block_share
from cgpredict.profile import KernelProfile, PatternCounts, StoreCounts


def _rows_stream(rows: int, reps: int, row_bytes: int = 64) -> np.ndarray:
    """Byte addresses of ``rows`` rows of ``row_bytes``, each read word by word a sector at
    a time, every row's word w before any row's word w + 1 (a warp of row walkers)."""
    words = row_bytes // 4
    return np.array([r * row_bytes + 4 * w for w in range(words)[:reps] for r in range(rows)],
                    np.uint64)


def _lru_hits(units: np.ndarray, capacity: int) -> np.ndarray:
    """Brute force: a fully associative LRU of ``capacity`` units."""
    held: OrderedDict[int, None] = OrderedDict()
    out = np.zeros(len(units), bool)
    for i, u in enumerate(int(x) for x in units):
        if u in held:
            out[i] = True
            held.move_to_end(u)
        else:
            held[u] = None
            if len(held) > capacity:
                held.popitem(last=False)
    return out


def test_sector_allocation_keeps_rows_that_line_allocation_loses():
    # 8 rows of 64 B: two rows a 128-B line, 4 lines; an L1 of 2 lines (8 sectors of 32 B).
    # Word 0 of every row, then word 1, ...: the 8 rows' first sectors are 8 sectors in 4
    # lines. Lines: 4 lines cycle through 2, every access misses. Sectors: 8 fit, so only
    # the first touch of each sector misses (words 0 and 8 of a row): 16 misses of 128.
    addr = _rows_stream(8, 16)
    by_line = sector_hit_mask(addr, CacheConfig(128, 1, 2), 32)
    by_sector = sector_hit_mask(addr, CacheConfig(32, 1, 8), 32)
    assert not by_line.any()
    assert int((~by_sector).sum()) == 16
    assert np.array_equal(by_sector, _lru_hits(addr // np.uint64(32), 8))


def test_sector_allocation_is_the_line_lru_for_whole_lines():
    # rows of 128 B read in full: every line's 4 sectors are used, so an LRU of 4 x n
    # sectors and one of n lines keep the same lines
    rng = np.random.default_rng(3)
    lines = rng.integers(0, 24, 400)
    addr = np.array([ln * 128 + s * 32 for ln in lines for s in range(4)], np.uint64)
    by_line = sector_hit_mask(addr, CacheConfig(128, 1, 8), 32)
    by_sector = sector_hit_mask(addr, CacheConfig(32, 1, 32), 32)
    assert np.array_equal(by_line, by_sector)


def test_spmv_rows_fit_the_h100_l1_by_sectors_not_by_lines():
    # spmv_csr at 64 warps an SM: an iteration touches 64 warps x (16 + 16) lines of val and
    # col (a 64-B row a lane, two rows a line) and 64 x 32 random lines of x
    dev = load_device("h100")
    assert dev.l1_alloc_bytes == 32
    lines = dev.l1_bytes // dev.l1_line_bytes
    sectors = dev.l1_bytes // dev.l1_alloc_bytes
    assert 64 * (32 + 32) > lines  # the line LRU keeps nothing between iterations
    assert 64 * (64 + 32) <= sectors  # the sector LRU keeps the rows' sectors


def test_l1_config_holds_allocation_units():
    from cgpredict.kernel.region import _l1_config

    class _Wt:  # the field _l1_config reads
        blocks = 264

    dev = load_device("h100")
    cfg = _l1_config(dev, _Wt(), Block(256, 1), blocks_per_sm=2)
    assert cfg.cache.line_bytes == 32 and cfg.cache.sets * cfg.cache.ways == 8192
    old = _l1_config(dataclasses.replace(dev, l1_alloc_bytes=0), _Wt(), Block(256, 1), 2)
    assert old.cache.line_bytes == 128 and old.cache.sets * old.cache.ways == 2048


def _sparse_profile(requests: float) -> KernelProfile:
    # per thread: 48 uncoalesced loads, 5/8 of them served by the L1, the rest 30 sectors
    # and ``requests`` requests each; one coalesced store of 4 sectors in 1 request
    return KernelProfile(
        "sparse", threads_per_block=256, blocks=4096,
        uncoal=PatternCounts(49, 30.0, 1.0, 0.625 * 48 / 49, l2_requests_per_warp=requests),
        comp_insts=30,
        stores=StoreCounts(uncoal=PatternCounts(1, 4.0, 0.0, l2_requests_per_warp=1.0)))


def test_request_stage_by_hand():
    dev = load_device("h100")
    p = _sparse_profile(requests=(0.375 * 48 * 28 + 1) / (0.375 * 48 + 1))
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    warps = 4096 * 8
    # the store is taken out (loads_only): 18 reaching loads of 28 requests a warp
    assert b.l2_requests == pytest.approx(warps * 18 * 28)
    assert b.l2_cycles == pytest.approx(warps * 18 * 28 * dev.l2_request_cycles / 132)
    loads = p.loads_only().uncoal
    sectors = warps * 18 * loads.l2_trans_per_warp * dev.dd_l2_cycles / 132
    assert b.l2_cycles > 1.5 * sectors  # near one sector a request: the request stage binds


def test_request_stage_off_leaves_the_sectors():
    dev = dataclasses.replace(load_device("h100"), l2_request_cycles=0.0)
    p = _sparse_profile(requests=28.0)
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    loads = p.loads_only().uncoal
    reaching = loads.insts * (1 - loads.l1_hit_fraction)
    # the loads' side is per SM: the busiest SM's 32 whole blocks of 31.03, eq. (B1g)
    assert b.l2_cycles == pytest.approx(4096 * 8 * reaching * loads.l2_trans_per_warp
                                        * dev.dd_l2_cycles / 132 * p.sm_share
                                        * whole_block_share(4096, 132))


def test_pick_spans_by_hand():
    from cgpredict.memory.footprint import pick_spans

    # three warp instructions: load 0 picks 0, 100, 40 (span 100) and 8, 8 (span 0); load 1
    # picks 4096 and 0 (span 4096); load 2 is not asked for
    addr = np.array([0, 100, 40, 8, 8, 4096, 0, 7, 9], np.uint64)
    start = np.array([0, 3, 5, 7])
    sid = np.array([0, 0, 1, 2])
    assert pick_spans(addr, start, sid, frozenset({0, 1})) == {0: 50.0, 1: 4096.0}
    assert pick_spans(addr, start, sid, frozenset()) == {}


def test_uniform_picks_span_the_array_and_banded_ones_do_not():
    # eq. (LP2u): 32 uniform picks over an array span about 31/33 of it, far above half;
    # picks within +-B of the lane's row over an array of 8 B span about 2 B, a quarter
    from cgpredict.memory.footprint import pick_spans

    rng = np.random.default_rng(7)
    n, warps = 1 << 16, 200
    uniform = rng.integers(0, n, (warps, 32)) * 4
    rows = np.arange(warps * 32).reshape(warps, 32) * (n // (warps * 32))
    band = n // 8
    banded = np.clip(rows + rng.integers(-band, band + 1, (warps, 32)), 0, n - 1) * 4
    start = np.arange(warps) * 32
    sid = np.zeros(warps, np.int64)
    for picks, wide in ((uniform, True), (banded, False)):
        (span,) = pick_spans(picks.ravel().astype(np.uint64), start, sid,
                             frozenset({0})).values()
        assert (span >= 0.5 * 4 * n) is wide
