"""The latest use of every line as one bit per position of a clock (``reuse._scaled_hits``):
the distinct lines touched between two positions are the bits set between them (SPEC §2.3,
reuse distances).

A Fenwick tree over the positions costs two walks of its height at every access; here an
access moves one bit (two word writes) and a count per group of ``GROUP`` positions
(a Fenwick tree over the groups, 64 times shorter), and only a count, rarer than the
accesses (a reuse too far back to be settled by its gap alone), reads the popcounts of the
words of at most one group. The clock is renumbered when it runs out (``compacted``): the
latest uses become positions 0..L-1 in their order, as a Fenwick tree's clock would be.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["GROUP_WORDS", "clock_bits", "compacted", "move", "ones_before"]

#: 64-bit words per group (a group counts 64 * GROUP_WORDS positions)
GROUP_WORDS = 64
_GROUP_SHIFT = 12  # log2(64 * GROUP_WORDS)


@njit(cache=True, nogil=True)
def clock_bits(size):  # pragma: no cover - numba
    """(bits, groups): no position set on a clock of ``size`` positions; ``groups`` is the
    Fenwick tree (1-based) of the set bits per group."""
    n_words = (size >> 6) + 1
    return np.zeros(n_words, np.uint64), np.zeros((n_words >> 6) + 2, np.int64)


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):  # pragma: no cover - numba
    """Set bits of a uint64 (the SWAR sum; LLVM turns it into one instruction where the
    CPU has one)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True, inline="always")
def _group_add(groups, pos, d):  # pragma: no cover - numba
    """Add ``d`` to the count of the group of position ``pos``."""
    i = (pos >> _GROUP_SHIFT) + 1
    n = groups.shape[0] - 1
    while i <= n:
        groups[i] += d
        i += i & -i


@njit(cache=True, nogil=True, inline="always")
def ones_before(bits, groups, x):  # pragma: no cover - numba
    """The set positions in [0, x): the groups before x's (Fenwick prefix), then the words
    of x's group before x's word, then x's word below x."""
    w = x >> 6
    g = w >> 6
    s = np.int64(0)
    i = g
    while i > 0:
        s += groups[i]
        i -= i & -i
    for k in range(g << 6, w):
        s += _popcount(bits[k])
    r = x & 63
    if r:
        s += _popcount(bits[w] & ((np.uint64(1) << np.uint64(r)) - np.uint64(1)))
    return s


@njit(cache=True, nogil=True, inline="always")
def move(bits, groups, q, t):  # pragma: no cover - numba
    """Move a latest use from position ``q`` (-1: none) to position ``t`` (not set)."""
    one = np.uint64(1)
    if q >= 0:
        bits[q >> 6] &= ~(one << np.uint64(q & 63))
        _group_add(groups, q, -1)
    bits[t >> 6] |= one << np.uint64(t & 63)
    _group_add(groups, t, 1)


@njit(cache=True, nogil=True)
def compacted(bits, groups, last_line, last_unit):  # pragma: no cover - numba
    """Renumber the clock: the set positions (the lines' latest uses, ``last_line``) become
    0..L-1 in their order, and a unit's last access (``last_unit``) the number of set
    positions at or before it, less one (-1: before all of them), so that every count
    ``ones_before`` gives between them is unchanged; returns L, the next free position."""
    n_words = bits.shape[0]
    before = np.empty(n_words + 1, np.int64)  # set positions in the words before each word
    before[0] = 0
    for k in range(n_words):
        before[k + 1] = before[k] + _popcount(bits[k])
    for ln in range(last_line.shape[0]):
        if last_line[ln] >= 0:
            last_line[ln] = _rank(bits, before, last_line[ln])
    for u in range(last_unit.shape[0]):
        if last_unit[u] >= 0:
            last_unit[u] = _rank(bits, before, last_unit[u])
    live = before[n_words]
    bits[:] = 0
    groups[:] = 0
    full = live >> 6
    bits[:full] = ~np.uint64(0)
    if live & 63:
        bits[full] = (np.uint64(1) << np.uint64(live & 63)) - np.uint64(1)
    for g in range((n_words >> 6) + 1):
        c = min(live, (g + 1) << _GROUP_SHIFT) - (g << _GROUP_SHIFT)
        if c > 0:
            _group_add(groups, g << _GROUP_SHIFT, c)
    return live


@njit(cache=True, nogil=True, inline="always")
def _rank(bits, before, x):  # pragma: no cover - numba
    """The set positions at or before ``x``, less one (``before``: per word, the set
    positions in the words before it)."""
    w = x >> 6
    r = x & 63
    mask = ~np.uint64(0) if r == 63 else (np.uint64(1) << np.uint64(r + 1)) - np.uint64(1)
    return before[w] + _popcount(bits[w] & mask) - 1
