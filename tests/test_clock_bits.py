"""Tests of cgpredict.memory.clock_bits: the set positions counted before any position against
a plain list of them, across groups, and the renumbering of ``compacted`` against the
ranks of the latest uses worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from cgpredict.memory.clock_bits import GROUP_WORDS, clock_bits, compacted, move, ones_before


@njit
def _replay(size, lines, queries):  # a latest use per line moved along the clock
    bits, groups = clock_bits(size)
    last = np.full(lines.max() + 1, -1, np.int64)
    got = np.empty((lines.shape[0], queries.shape[1]), np.int64)
    for t in range(lines.shape[0]):
        move(bits, groups, last[lines[t]], t)
        last[lines[t]] = t
        for j in range(queries.shape[1]):
            got[t, j] = ones_before(bits, groups, queries[t, j])
    return got, last


@pytest.mark.parametrize("seed, n, m", [(0, 300, 7), (1, 9000, 2500), (2, 20000, 40)])
def test_ones_before_counts_the_latest_uses_below_a_position(seed, n, m):
    """After each access, the latest uses (one per line seen) below random positions, as a
    list of them counts them; 9000 and 20000 positions span several groups of 4096."""
    assert 64 * GROUP_WORDS == 4096
    rng = np.random.default_rng(seed)
    lines = rng.integers(0, m, n).astype(np.int64)
    queries = rng.integers(0, n + 1, (n, 3)).astype(np.int64)
    queries[:, 0] = np.arange(1, n + 1)  # everything up to the access itself
    got, _ = _replay(n + 1, lines, queries)
    latest: dict[int, int] = {}
    for t, ln in enumerate(lines.tolist()):
        latest[ln] = t
        uses = sorted(latest.values())
        want = [sum(u < x for u in uses) for x in queries[t].tolist()]
        assert got[t].tolist() == want, t
    assert got[-1, 0] == len(set(lines.tolist()))


def test_compacted_renumbers_the_latest_uses_in_order():
    """Lines 0, 1, 2 last used at positions 5, 9000, 130 of 10000: they become 0, 2, 1 (in
    order); a unit last accessed at 7 has one latest use at or before it (5): 0; one at
    4000 two (5, 130): 1; one at 3, none: -1; the next free position is 3, and the counts
    below every position are those of the three new ones."""
    bits, groups = clock_bits(10000)
    last_line = np.array([5, 9000, 130], np.int64)
    for q in last_line:
        move(bits, groups, -1, q)
    last_unit = np.array([7, 4000, 3, -1], np.int64)
    live = compacted(bits, groups, last_line, last_unit)
    assert live == 3
    assert last_line.tolist() == [0, 2, 1]
    assert last_unit.tolist() == [0, 1, -1, -1]
    assert [ones_before(bits, groups, x) for x in (0, 1, 2, 3, 4, 5000, 9999)] == \
        [0, 1, 2, 3, 3, 3, 3]


def test_compacted_keeps_every_count_between_latest_uses_across_groups():
    """5000 lines on a clock of 40000 (ten groups): after the renumbering, the count between
    any two remembered positions is what it was before."""
    rng = np.random.default_rng(7)
    size = 40000
    lines = rng.integers(0, 5000, size - 1).astype(np.int64)
    _, last = _replay(size, lines, np.zeros((size - 1, 0), np.int64))
    bits, groups = clock_bits(size)
    for q in last[last >= 0]:
        move(bits, groups, -1, q)
    units = rng.integers(0, size - 1, 300).astype(np.int64)
    before = [ones_before(bits, groups, int(u) + 1) for u in units]
    last_line = last.copy()
    last_unit = units.copy()
    live = compacted(bits, groups, last_line, last_unit)
    assert live == int((last >= 0).sum())
    after = [ones_before(bits, groups, int(u) + 1) for u in last_unit]
    assert after == before
    assert sorted(last_line[last >= 0].tolist()) == list(range(live))
