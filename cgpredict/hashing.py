"""Integer keys renumbered densely, and the open-addressing hash table behind it (numba).

``dense_ids`` renumbers keys 0, 1, ... in order of first use in O(n) (where ``np.unique``
sorts), so state indexed by a line or an address fits in arrays of the distinct keys' count:
the LRU analyser's linked lists (``cache``), the reuse distances (``reuse``) and the memory
analysis use it; ``hash_table`` / ``hash_slot`` are the table itself, inlined into the numba
loops of the pseudo-warps (``warps``) and of the shared-memory tiles (``shared``);
``pow2_log2`` lets such a loop shift instead of divide.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["as_uint64_1d", "dense_ids", "grown_ids", "hash_slot", "hash_table", "pow2_log2"]


def as_uint64_1d(values: np.ndarray, what: str) -> np.ndarray:
    """A contiguous 1-D uint64 array of values (a copy only when needed; never mutated)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D array of {what}, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.dtype.kind == "i":
        if arr.min() < 0:
            raise ValueError(f"expected non-negative {what}, got a minimum of {arr.min()}")
    elif arr.dtype.kind != "u":
        raise ValueError(f"expected an integer array of {what}, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.uint64)


@njit(cache=True, nogil=True)
def _dense_ids_kernel(keys, shift):  # pragma: no cover - numba
    """ids, firsts: an id per (key >> shift), 0, 1, ... in order of first occurrence;
    firsts[j] is the key value that got id j. A table indexed by value when the values span
    little more than their count (lines of a few arrays: the usual case), else a hash table
    (``hash_table``)."""
    n = keys.shape[0]
    ids = np.empty(n, np.int64)
    firsts = np.empty(n, np.uint64)
    sh = np.uint64(shift)
    lo = keys[0] >> sh
    hi = lo
    for t in range(n):
        v = keys[t] >> sh
        lo = min(lo, v)
        hi = max(hi, v)
    m = 0
    if hi - lo < np.uint64(max(4 * n, 1 << 20)):
        table = np.full(np.int64(hi - lo) + 1, -1, np.int64)
        for t in range(n):
            v = keys[t] >> sh
            j = table[v - lo]
            if j < 0:
                table[v - lo] = m
                firsts[m] = v
                j = m
                m += 1
            ids[t] = j
        return ids, firsts[:m].copy()  # not a view: the n-long buffer is freed
    slot_key, used, down = hash_table(n)
    slot_id = np.empty(slot_key.shape[0], np.int64)
    for t in range(n):
        v = keys[t] >> sh
        h = hash_slot(slot_key, used, v, down)
        if not used[h]:
            used[h] = True
            slot_key[h] = v
            slot_id[h] = m
            firsts[m] = v
            m += 1
        ids[t] = slot_id[h]
    return ids, firsts[:m].copy()


@njit(cache=True, nogil=True)
def hash_table(n):  # pragma: no cover - numba
    """(keys, used, shift) of an empty open-addressing hash table for ``n`` uint64 keys: twice
    ``n`` slots rounded up to a power of two, for ``hash_slot``."""
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    size = 1 << bits
    return np.empty(size, np.uint64), np.zeros(size, np.bool_), np.uint64(64 - bits)


@njit(cache=True, nogil=True)
def grown_ids(keys, used, ids):  # pragma: no cover - numba
    """(keys, used, ids, shift): the table of ``hash_table`` with a payload ``ids`` per slot,
    moved to twice the slots. A table that grows with the distinct keys (kept at most half
    full) stays in the CPU's caches where one sized by the events (millions) misses them."""
    size = 2 * keys.shape[0]
    k2, u2, shift = hash_table(size // 2)
    i2 = np.empty(size, np.int64)
    for h in range(keys.shape[0]):
        if used[h]:
            g = hash_slot(k2, u2, keys[h], shift)
            k2[g], u2[g], i2[g] = keys[h], True, ids[h]
    return k2, u2, i2, shift


@njit(cache=True, nogil=True, inline="always")
def appended(payload, m, value):  # pragma: no cover - numba
    """``payload`` (a growing table's per-entry array, non-empty) with ``value`` at ``m``,
    moved to twice the room first when it is full."""
    if m == payload.shape[0]:
        more = np.empty(2 * m, payload.dtype)
        more[:m] = payload
        payload = more
    payload[m] = value
    return payload


@njit(cache=True, nogil=True, inline="always")
def hash_slot(keys, used, v, shift):  # pragma: no cover - numba
    """The slot of key ``v``: where it is, or the free slot to put it (Fibonacci hashing,
    linear probing; the table is never full)."""
    mask = np.uint64(keys.shape[0] - 1)
    h = (np.uint64(v) * np.uint64(0x9E3779B97F4A7C15)) >> shift
    while used[h] and keys[h] != v:
        h = (h + np.uint64(1)) & mask
    return h


@njit(cache=True, nogil=True, inline="always")
def pow2_log2(v):  # pragma: no cover - numba
    """log2 of ``v`` when it is a power of two (a shift or a mask then replaces a division
    by it in a numba loop), else -1."""
    if v <= 0 or v & (v - 1):
        return np.int64(-1)
    s = np.int64(0)
    while (np.int64(1) << (s + 1)) <= v:
        s += 1
    return s


def dense_ids(keys: np.ndarray, shift: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(ids, values): ``keys >> shift`` renumbered 0, 1, ... in order of first occurrence, and
    the value of each id. O(n) (a hash table), where ``np.unique`` sorts: state indexed by
    line id (last use, residency) then fits in arrays of the distinct lines' count."""
    arr = as_uint64_1d(keys, "keys")
    if not arr.size:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    return _dense_ids_kernel(arr, int(shift))
