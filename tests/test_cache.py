"""Tests of cgpredict.memory.lru (SPEC §2.3): hand-computed cases, a brute-force LRU oracle,
pycachesim, and the temporal-conflict-set definition itself. Inputs stay small so the suite
also passes with NUMBA_DISABLE_JIT=1."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from cgpredict import hashing
from cgpredict.memory import lru as cache_mod
from cgpredict.memory.lru import (
    CacheConfig,
    CacheStats,
    analyze_cache,
    hit_mask,
    line_addresses,
    sector_hit_mask,
)

# --------------------------------------------------------------------------- references


def lru_reference(lines, sets: int, ways: int) -> np.ndarray:
    """Plain LRU simulator: one OrderedDict per set, most recently used last."""
    state = [OrderedDict() for _ in range(sets)]
    out = []
    for m in (int(x) for x in lines):
        od = state[m % sets]
        if m in od:
            od.move_to_end(m)
            out.append(True)
        else:
            out.append(False)
            od[m] = None
            if len(od) > ways:
                od.popitem(last=False)
    return np.array(out, dtype=bool)


def tcs_reference(lines, sets: int, ways: int) -> np.ndarray:
    """SPEC §2.3 literally: hit iff |distinct other lines of the set since last ref| < A."""
    lines = [int(x) for x in lines]
    last: dict[int, int] = {}
    out = []
    for t, m in enumerate(lines):
        if m not in last:
            out.append(False)
        else:
            tcs = {x for x in lines[last[m] + 1 : t] if x % sets == m % sets and x != m}
            out.append(len(tcs) < ways)
        last[m] = t
    return np.array(out, dtype=bool)


def sector_reference(addrs, cfg: CacheConfig, sector_bytes: int) -> np.ndarray:
    """Sectored LRU: OrderedDict per set mapping line -> set of fetched sectors."""
    state = [OrderedDict() for _ in range(cfg.sets)]
    out = []
    for a in (int(x) for x in addrs):
        m, sector = a // cfg.line_bytes, (a % cfg.line_bytes) // sector_bytes
        od = state[m % cfg.sets]
        if m in od:
            od.move_to_end(m)
            out.append(sector in od[m])
            od[m].add(sector)
        else:
            out.append(False)
            od[m] = {sector}
            if len(od) > cfg.ways:
                od.popitem(last=False)
    return np.array(out, dtype=bool)


def random_trace(seed: int, n: int, footprint: int) -> np.ndarray:
    """Random lines with some locality: a mix of uniform picks and short reuse."""
    rng = np.random.default_rng(seed)
    uniform = rng.integers(0, footprint, n)
    reuse = np.maximum(np.arange(n) - rng.integers(1, 8, n), 0)
    pick = rng.random(n) < 0.3
    lines = uniform.copy()
    for t in np.nonzero(pick)[0]:  # a sequential fix-up keeps "reuse" meaning earlier accesses
        lines[t] = lines[reuse[t]]
    return lines.astype(np.uint64)


# --------------------------------------------------------------------------- configuration


def test_config_basics():
    cfg = CacheConfig(line_bytes=64, sets=128, ways=16)
    assert cfg.capacity_bytes == 128 * 1024
    assert CacheConfig.from_capacity(128 * 1024, 64, 16) == cfg
    h100 = CacheConfig.from_capacity(50 * 1024 * 1024, 128, 16)
    assert h100.sets == 25600  # not a power of two: allowed


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"line_bytes": 48, "sets": 4, "ways": 2}, "power of two"),
        ({"line_bytes": 64, "sets": 0, "ways": 2}, "sets must be positive"),
        ({"line_bytes": 64, "sets": 4, "ways": -1}, "ways must be positive"),
        ({"line_bytes": 64, "sets": 4.0, "ways": 2}, "sets must be an integer"),
        ({"line_bytes": 64, "sets": 4, "ways": True}, "ways must be an integer"),
    ],
)
def test_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CacheConfig(**kwargs)


def test_from_capacity_validation():
    with pytest.raises(ValueError, match="not a multiple"):
        CacheConfig.from_capacity(1000, 64, 4)
    with pytest.raises(ValueError, match="capacity_bytes must be positive"):
        CacheConfig.from_capacity(0, 64, 4)


def test_config_is_frozen():
    cfg = CacheConfig(64, 4, 2)
    with pytest.raises(AttributeError):
        cfg.ways = 4  # type: ignore[misc]


def test_stats():
    s = CacheStats(accesses=10, hits=7)
    assert s.misses == 3
    assert s.hit_rate == pytest.approx(0.7)
    assert CacheStats(0, 0).hit_rate == 0.0
    with pytest.raises(ValueError, match="hits <= accesses"):
        CacheStats(accesses=1, hits=2)


# --------------------------------------------------------------------------- line addresses


def test_line_addresses():
    got = line_addresses(np.array([0, 63, 64, 130, 2**40 + 5], dtype=np.int64), 64)
    assert got.dtype == np.uint64
    assert got.tolist() == [0, 0, 1, 2, 2**34]


def test_line_addresses_validation():
    with pytest.raises(ValueError, match="power of two"):
        line_addresses(np.array([0]), 48)
    with pytest.raises(ValueError, match="non-negative"):
        line_addresses(np.array([-1]), 64)
    with pytest.raises(ValueError, match="integer array"):
        line_addresses(np.array([1.5]), 64)
    with pytest.raises(ValueError, match="1-D"):
        line_addresses(np.zeros((2, 2), dtype=np.uint64), 64)


# --------------------------------------------------------------------------- hand-computed


def test_two_set_two_way_by_hand():
    # Sets: even lines -> set 0, odd lines -> set 1. Worked out by hand:
    #  t line set  set-0 stack (MRU first) / set-1 stack         hit?
    #  0   0   0   [0]                                          miss (first)
    #  1   2   0   [2 0]                                        miss (first)
    #  2   1   1   set1 [1]                                     miss (first)
    #  3   0   0   [0 2]        TCS={2}, |1| < 2                hit
    #  4   4   0   [4 0]  (2 evicted)                           miss (first)
    #  5   2   0   [2 4]  (0 evicted) TCS={0,4}, |2| >= 2       miss
    #  6   3   1   set1 [3 1]                                   miss (first)
    #  7   1   1   set1 [1 3]   TCS={3}                         hit
    #  8   4   0   [4 2]        TCS={2}                         hit
    #  9   4   0   [4 2]        TCS={}                          hit
    # 10   0   0   [0 4]        TCS={2,4}                       miss
    lines = np.array([0, 2, 1, 0, 4, 2, 3, 1, 4, 4, 0], dtype=np.uint64)
    expected = [0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0]
    cfg = CacheConfig(line_bytes=64, sets=2, ways=2)
    assert hit_mask(lines, cfg).tolist() == [bool(e) for e in expected]
    assert analyze_cache(lines, cfg) == CacheStats(accesses=11, hits=4)


def test_direct_mapped_by_hand():
    # 2 sets, 1 way: 0 and 2 conflict in set 0, 1 lives alone in set 1.
    lines = np.array([0, 1, 0, 2, 1, 0, 0], dtype=np.uint64)
    cfg = CacheConfig(64, 2, 1)
    assert hit_mask(lines, cfg).tolist() == [False, False, True, False, True, False, True]


def test_byte_addresses_through_line_addresses():
    # 64-B lines, 1 set, 2 ways: bytes 0 and 63 share line 0; 64 is line 1; 128 line 2.
    # Lines 0 0 1 2 0 1: the 2 evicts 0, the 0 evicts 1, so only byte 63 hits; with 3 ways
    # the last two hit as well.
    addrs = np.array([0, 63, 64, 128, 1, 65], dtype=np.uint64)
    lines = line_addresses(addrs, 64)
    assert lines.tolist() == [0, 0, 1, 2, 0, 1]
    assert hit_mask(lines, CacheConfig(64, 1, 2)).tolist() == [
        False,
        True,
        False,
        False,
        False,
        False,
    ]
    assert hit_mask(lines, CacheConfig(64, 1, 3)).tolist() == [
        False,
        True,
        False,
        False,
        True,
        True,
    ]


# --------------------------------------------------------------------------- edge cases


def test_empty_trace():
    cfg = CacheConfig(64, 4, 2)
    mask = hit_mask(np.array([], dtype=np.uint64), cfg)
    assert mask.dtype == np.bool_ and mask.size == 0
    assert analyze_cache(np.array([], dtype=np.uint64), cfg) == CacheStats(0, 0)
    assert sector_hit_mask(np.array([], dtype=np.uint64), CacheConfig(128, 4, 2), 32).size == 0


def test_single_access():
    assert hit_mask(np.array([12345], dtype=np.uint64), CacheConfig(64, 3, 2)).tolist() == [False]


def test_enough_ways_only_compulsory_misses():
    lines = random_trace(seed=3, n=3000, footprint=40)
    mask = hit_mask(lines, CacheConfig(64, 4, 40))
    _, first = np.unique(lines, return_index=True)
    expected = np.ones(lines.size, dtype=bool)
    expected[first] = False
    assert np.array_equal(mask, expected)


def test_huge_line_numbers_and_input_untouched():
    lines = np.array([2**64 - 1, 0, 2**64 - 1, 2**63, 0], dtype=np.uint64)
    copy = lines.copy()
    assert hit_mask(lines, CacheConfig(1, 1, 2)).tolist() == [False, False, True, False, False]
    assert np.array_equal(lines, copy)


def test_accepts_lists_and_signed_ints():
    cfg = CacheConfig(64, 2, 2)
    assert hit_mask([0, 0, 1], cfg).tolist() == [False, True, False]
    assert hit_mask(np.array([0, 0], dtype=np.int32), cfg).tolist() == [False, True]
    with pytest.raises(ValueError, match="non-negative"):
        hit_mask(np.array([0, -3]), cfg)


# --------------------------------------------------------------------------- random vs oracles

SMALL_CASES = [
    # (seed, sets, ways, footprint)
    (0, 1, 1, 8),
    (1, 1, 4, 12),
    (2, 2, 2, 16),
    (3, 3, 2, 30),
    (4, 4, 8, 100),
    (5, 7, 3, 50),
    (6, 16, 16, 3000),
    (7, 64, 1, 500),
    (8, 64, 16, 5000),
    (9, 32, 4, 200),
    (10, 5, 16, 90),
    (11, 1, 16, 20),
]


@pytest.mark.parametrize("seed, sets, ways, footprint", SMALL_CASES)
def test_random_against_lru_reference(seed, sets, ways, footprint):
    lines = random_trace(seed, n=4000, footprint=footprint)
    expected = lru_reference(lines, sets, ways)
    cfg = CacheConfig(64, sets, ways)
    assert np.array_equal(hit_mask(lines, cfg), expected)
    # Both kernels, whatever the dispatch threshold.
    assert np.array_equal(cache_mod._hit_mask_stack(lines, cfg), expected)
    assert np.array_equal(cache_mod._hit_mask_list(lines, cfg), expected)


@pytest.mark.parametrize("seed, sets, ways, footprint", SMALL_CASES[:8])
def test_random_against_tcs_definition(seed, sets, ways, footprint):
    lines = random_trace(seed, n=600, footprint=footprint)
    assert np.array_equal(
        hit_mask(lines, CacheConfig(64, sets, ways)), tcs_reference(lines, sets, ways)
    )


@pytest.mark.parametrize("sets, ways", [(1, 65), (1, 200), (3, 100)])
def test_high_associativity_uses_list_kernel(sets, ways):
    assert ways > cache_mod._STACK_MAX_WAYS
    lines = random_trace(seed=ways, n=4000, footprint=400)
    cfg = CacheConfig(64, sets, ways)
    expected = lru_reference(lines, sets, ways)
    assert np.array_equal(hit_mask(lines, cfg), expected)
    assert np.array_equal(cache_mod._hit_mask_stack(lines, cfg), expected)


def test_cyclic_sweep_thrashes():
    # LRU with a loop one line larger than the set: every access misses.
    lines = np.tile(np.arange(5, dtype=np.uint64), 20)
    assert not hit_mask(lines, CacheConfig(64, 1, 4)).any()
    assert hit_mask(lines, CacheConfig(64, 1, 5)).sum() == lines.size - 5


# --------------------------------------------------------------------------- pycachesim


@pytest.mark.parametrize(
    "seed, sets, ways, line_bytes",
    [(0, 1, 4, 64), (1, 2, 2, 64), (2, 8, 4, 32), (3, 64, 16, 128), (4, 16, 8, 64), (5, 6, 3, 64)],
)
def test_against_pycachesim(seed, sets, ways, line_bytes, pycachesim_hits):
    rng = np.random.default_rng(seed)
    lines = random_trace(seed, n=3000, footprint=sets * ways * 3)
    addrs = lines * np.uint64(line_bytes) + rng.integers(0, line_bytes, lines.size).astype(
        np.uint64
    )
    expected = pycachesim_hits(addrs, sets, ways, line_bytes)
    cfg = CacheConfig(line_bytes, sets, ways)
    got = hit_mask(line_addresses(addrs, line_bytes), cfg)
    assert np.array_equal(got, expected)
    assert analyze_cache(line_addresses(addrs, line_bytes), cfg).hits == int(expected.sum())


# --------------------------------------------------------------------------- sectors


def test_sector_by_hand():
    # 128-B lines of 32-B sectors, 1 set, 2 ways.
    addrs = np.array([0, 32, 0, 40, 128, 256, 40, 260], dtype=np.uint64)
    #            line 0 s0 miss, s1 miss, s0 hit, s1 hit, line1 miss, line2 miss (evicts line0),
    #            line0 again miss (re-allocated), line2 s0 (byte 260 = sector 0) hit
    expected = [False, False, True, True, False, False, False, True]
    assert sector_hit_mask(addrs, CacheConfig(128, 1, 2), 32).tolist() == expected


def test_sector_refill_clears_old_sectors():
    # line 0 fetches s0 and s1, is evicted (1 way), comes back with only the sector accessed.
    addrs = np.array([0, 32, 128, 32, 0], dtype=np.uint64)
    assert sector_hit_mask(addrs, CacheConfig(128, 1, 1), 32).tolist() == [
        False,
        False,
        False,
        False,
        False,
    ]


@pytest.mark.parametrize(
    "seed, sets, ways, line_bytes, sector_bytes",
    [
        (0, 1, 2, 128, 32),
        (1, 4, 4, 128, 32),
        (2, 3, 8, 128, 64),
        (3, 16, 2, 64, 64),
        (4, 2, 16, 256, 4),
    ],
)
def test_sector_random_against_reference(seed, sets, ways, line_bytes, sector_bytes):
    rng = np.random.default_rng(seed)
    lines = random_trace(seed, n=3000, footprint=sets * ways * 2)
    addrs = lines * np.uint64(line_bytes) + rng.integers(0, line_bytes, lines.size).astype(
        np.uint64
    )
    cfg = CacheConfig(line_bytes, sets, ways)
    got = sector_hit_mask(addrs, cfg, sector_bytes)
    assert np.array_equal(got, sector_reference(addrs, cfg, sector_bytes))
    # A sector hit needs a line hit; with one sector per line they are the same thing.
    line_hits = hit_mask(line_addresses(addrs, line_bytes), cfg)
    assert not (got & ~line_hits).any()
    if sector_bytes == line_bytes:
        assert np.array_equal(got, line_hits)


def test_sector_validation():
    cfg = CacheConfig(128, 4, 2)
    with pytest.raises(ValueError, match="power of two"):
        sector_hit_mask(np.array([0]), cfg, 48)
    with pytest.raises(ValueError, match="<= line_bytes"):
        sector_hit_mask(np.array([0]), cfg, 256)
    with pytest.raises(ValueError, match="at most 64 sectors"):
        sector_hit_mask(np.array([0]), CacheConfig(1024, 1, 1), 8)


@pytest.mark.parametrize("name,sizes", [("syrk.c", {"NI": "32", "NJ": "32"}),
                                        ("2dconv.c", {"NI": "40", "NJ": "40"})])
def test_real_kernel_trace_against_lru_and_pycachesim(tmp_path, name, sizes):
    """The L2 stream of a real traced kernel, in GPU issue order (warps of a batch advancing
    instruction by instruction), gives the same hits as a plain LRU simulator and pycachesim."""
    from pathlib import Path

    from cgpredict.block import Block
    from cgpredict.frontend.tracer import TraceOptions, trace_program
    from cgpredict.memory.issue import issue_order, transactions
    from cgpredict.warps import form_warps

    src = Path(__file__).resolve().parents[1] / "polybench_c" / name
    tr = trace_program(src, tmp_path / "t.cgptrace", TraceOptions(macros=sizes))
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    wt = form_warps(tr, 0, 0, 2, Block(32, 8), is_store)
    lines, inst = transactions(wt, 64)
    ordered = lines[issue_order(wt, inst, 16)]
    cfg = CacheConfig(64, 8, 4)  # small enough that the kernel's footprint overflows it
    got = hit_mask(ordered, cfg)
    assert 0 < got.sum() < len(got)
    np.testing.assert_array_equal(got, lru_reference(ordered.tolist(), cfg.sets, cfg.ways))
    cachesim = pytest.importorskip("cachesim")
    mem = cachesim.MainMemory()
    l2 = cachesim.Cache("L2", cfg.sets, cfg.ways, cfg.line_bytes, "LRU")
    mem.load_to(l2)
    mem.store_from(l2)
    sim = cachesim.CacheSimulator(l2, mem)
    for line in ordered.tolist():
        sim.load(int(line) * cfg.line_bytes, length=1)
    assert l2.LOAD_count == len(ordered)
    assert l2.HIT_count == int(got.sum())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shift", [0, 2, 7])
def test_dense_ids_renumber_in_first_use_order(seed, shift):
    """A hash-table renumbering equals the dictionary one: ids 0, 1, ... by first use."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 5000, 3000).astype(np.uint64) * np.uint64(1 + seed * 977)
    ids, values = hashing.dense_ids(keys, shift)
    seen: dict[int, int] = {}
    want = [seen.setdefault(int(k) >> shift, len(seen)) for k in keys]
    assert ids.tolist() == want
    assert values.tolist() == list(seen)
    assert [len(x) for x in hashing.dense_ids(np.zeros(0, np.uint64))] == [0, 0]


def test_dense_ids_far_apart_values_take_the_hash_table():
    """Values spread over 2^40 (a stack and a heap array, say) renumber like close ones."""
    keys = np.array([5 << 40, 7, 5 << 40, 9, 7, (1 << 41) + 3], np.uint64)
    ids, values = hashing.dense_ids(keys)
    assert ids.tolist() == [0, 1, 0, 2, 1, 3]
    assert values.tolist() == [5 << 40, 7, 9, (1 << 41) + 3]


@pytest.mark.parametrize("seed", range(3))
def test_sector_hit_mask_parts_are_independent_caches(seed):
    """Accesses split over several caches in one pass (an L1 per SM) hit exactly as each
    part's accesses do through a cache of its own; inactive accesses miss and touch nothing."""
    rng = np.random.default_rng(seed)
    n, n_parts = 4000, 5
    cfg = CacheConfig(128, 4, 2)
    addrs = (rng.integers(0, 64, n) * 32).astype(np.uint64)
    parts = rng.integers(0, n_parts, n)
    active = rng.random(n) < 0.8
    got = sector_hit_mask(addrs, cfg, 32, parts, n_parts, active)
    want = np.zeros(n, bool)
    for p in range(n_parts):
        idx = np.flatnonzero((parts == p) & active)
        want[idx] = sector_hit_mask(addrs[idx], cfg, 32)
    assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="parts must lie"):
        sector_hit_mask(addrs, cfg, 32, parts, 2)
