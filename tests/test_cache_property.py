"""Property-based exactness of the cache analyzer (SPEC §2.3) at scale: per access, hit or miss
identical to a brute-force LRU simulator on 10,000 random traces over random geometries, and
to pycachesim where its semantics match (LRU, every access allocates).

The reference is the textbook simulator, deliberately unlike the analyzer's LRU stack: per set
A (tag, last use) slots, a hit refreshes its slot's time, a miss fills an empty slot or evicts
the slot used longest ago. It is numba-compiled so that 10,000 traces take a few seconds; each
hypothesis example draws one geometry and checks TRACES_PER_EXAMPLE traces from a drawn seed.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from cgpredict.memory import lru as cache_mod
from cgpredict.memory.lru import CacheConfig, analyze_cache, hit_mask, line_addresses

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT") == "1"
TRACES_PER_EXAMPLE = 50
EXAMPLES = 10 if NO_JIT else 200  # 200 x 50 = 10,000 traces with the JIT


@njit(cache=True)
def _lru_slots(lines, sets, ways, out):  # pragma: no cover - numba
    tag = np.full((sets, ways), -1, np.int64)
    used = np.zeros((sets, ways), np.int64)
    for t in range(lines.shape[0]):
        m = np.int64(lines[t])
        s = m % sets
        hit = -1
        for w in range(ways):
            if tag[s, w] == m:
                hit = w
                break
        if hit >= 0:
            used[s, hit] = t + 1
            out[t] = True
            continue
        out[t] = False
        victim = 0
        for w in range(ways):
            if tag[s, w] == -1:  # an empty slot is used before anything is evicted
                victim = w
                break
            if used[s, w] < used[s, victim]:
                victim = w
        tag[s, victim] = m
        used[s, victim] = t + 1


def lru_slots(lines: np.ndarray, sets: int, ways: int) -> np.ndarray:
    """Per access, hit (True) or miss of a plain slot-and-timestamp LRU cache."""
    out = np.empty(lines.size, np.bool_)
    _lru_slots(lines.astype(np.int64), sets, ways, out)
    return out


@njit(cache=True)
def _mix(lines, kind, back, stride, footprint):  # pragma: no cover - numba
    for t in range(1, lines.shape[0]):
        if kind[t] == 1:
            lines[t] = lines[t - min(back[t], t)]
        elif kind[t] == 2:
            lines[t] = (lines[t - 1] + stride) % footprint


def random_lines(rng: np.random.Generator, sets: int, ways: int) -> np.ndarray:
    """A trace mixing uniform picks over a footprint around the capacity, short-distance
    reuse and strided sweeps, so hits, conflict misses and capacity misses all occur."""
    n = int(rng.integers(0, 400))
    footprint = int(rng.integers(1, 4 * sets * ways + 2))
    lines = rng.integers(0, footprint, n)
    kind, back = rng.integers(0, 3, n), rng.integers(1, 9, n)
    _mix(lines, kind, back, int(rng.integers(1, 2 * sets + 2)), footprint + sets)
    return lines.astype(np.uint64) + np.uint64(int(rng.integers(0, 1 << 40)) * sets)


geometry = st.tuples(
    st.integers(1, 70),  # sets: any count, powers of two or not
    st.one_of(st.integers(1, 16), st.integers(17, 130)),  # ways: both kernels (64 = switch)
    st.integers(0, 2**32 - 1),  # the traces' seed
)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(geometry)
def test_hits_and_misses_per_access_equal_a_brute_force_lru(geom):
    sets, ways, seed = geom
    rng = np.random.default_rng(seed)
    cfg = CacheConfig(64, sets, ways)
    for _ in range(TRACES_PER_EXAMPLE):
        lines = random_lines(rng, sets, ways)
        expected = lru_slots(lines, sets, ways)
        assert np.array_equal(hit_mask(lines, cfg), expected), (sets, ways, lines.tolist())
        stats = analyze_cache(lines, cfg)
        assert (stats.hits, stats.accesses - stats.hits) == (
            int(expected.sum()), int((~expected).sum()))


@settings(max_examples=EXAMPLES // 2, deadline=None, derandomize=True)
@given(geometry)
def test_both_kernels_agree_whatever_the_associativity(geom):
    sets, ways, seed = geom
    rng = np.random.default_rng(seed)
    cfg = CacheConfig(64, sets, ways)
    for _ in range(5):
        lines = random_lines(rng, sets, ways)
        stack = cache_mod._hit_mask_stack(lines, cfg)
        assert np.array_equal(stack, cache_mod._hit_mask_list(lines, cfg))


def test_the_reference_by_hand():
    # 1 set, 2 ways: a b a c b -> miss miss hit miss(evicts b) miss(evicts a)
    lines = np.array([1, 2, 1, 3, 2], np.uint64)
    assert lru_slots(lines, 1, 2).tolist() == [False, False, True, False, False]
    # 2 sets, 1 way: 0 and 2 share set 0, 1 is alone in set 1
    lines = np.array([0, 1, 2, 1, 0], np.uint64)
    assert lru_slots(lines, 2, 1).tolist() == [False, False, False, True, False]


@settings(max_examples=10 if NO_JIT else 60, deadline=None, derandomize=True)
@given(st.integers(1, 64), st.integers(1, 16), st.sampled_from([16, 32, 64, 128]),
       st.integers(0, 2**32 - 1))
def test_hits_per_access_equal_pycachesim(pycachesim_hits, sets, ways, line_bytes, seed):
    """pycachesim's LRU with single-byte loads: the same semantics as the analyzer."""
    rng = np.random.default_rng(seed)
    lines = random_lines(rng, sets, ways) % np.uint64(1 << 30)
    addrs = lines * np.uint64(line_bytes) + rng.integers(0, line_bytes, lines.size).astype(
        np.uint64)
    expected = pycachesim_hits(addrs, sets, ways, line_bytes)
    got = hit_mask(line_addresses(addrs, line_bytes), CacheConfig(line_bytes, sets, ways))
    assert np.array_equal(got, expected)
