"""Per static instruction, how its (pseudo-thread, address) pairs repeat: the counts behind
``frontend.port``'s accumulator stores and reloads, one pass over a launch's events (numba).

A plain port stores an accumulator on every iteration (``restoring_stores``: few distinct
pairs per store event) and reloads it (``reloading_loads``: a load of a pair such a store
wrote). The counts were ``np.unique`` / ``np.isin`` over 64-bit pair keys of every event
(sorts: ~1.5 s of a cold GEMM ``run`` on 6.3 M events); here an open-addressing hash table
keyed by the exact pair (and instruction) counts them in O(n); it grows with the distinct
keys (tens of thousands where the events are millions), so it stays in the CPU's caches.
The thread of an event is ``warp * 64 + lane``, as ``port`` numbers it.

Not ``hashing.hash_table``: that table takes single 64-bit keys of a known count (2n slots
for n keys). On it, with the addresses renumbered by ``dense_ids`` and (address id, thread,
instruction) packed into one exact key in a table that grows as this one does, GEMM's plain
port counts (6.3 M store events) took 102-108 ms of CPU against 58-59 ms here (best of 5,
two runs, the 2-core machine loaded): the renumbering is a second pass over the events.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .hashing import appended, grown_ids, hash_slot, hash_table

__all__ = ["reload_counts", "store_counts"]

_K_ADDR = np.uint64(0xD6E8FEB86659FD93)  # odd multipliers mixing the parts of a key
_K_THREAD = np.uint64(0x9E3779B97F4A7C15)
_K_SID = np.uint64(0xC2B2AE3D27D4EB4F)
_K_MIX = np.uint64(0xBF58476D1CE4E5B9)  # splitmix64's


@njit(cache=True, nogil=True, inline="always")
def _slot(keys_a, keys_t, keys_s, used, a, t, s):  # pragma: no cover - numba
    """The slot of key (address ``a``, thread ``t``, instruction ``s``): where it is, or the
    free slot to put it (linear probing; the table is never full)."""
    mask = np.uint64(keys_a.shape[0] - 1)
    v = a * _K_ADDR + t * _K_THREAD + np.uint64(s) * _K_SID
    v = (v ^ (v >> np.uint64(31))) * _K_MIX  # the high bits depend on every bit of the key
    h = (v ^ (v >> np.uint64(29))) & mask
    while used[h] and not (keys_a[h] == a and keys_t[h] == t and keys_s[h] == s):
        h = (h + np.uint64(1)) & mask
    return h


@njit(cache=True, nogil=True)
def _table(size):  # pragma: no cover - numba
    """An empty table of ``size`` slots (a power of two): keys (address, thread,
    instruction) and whether each slot is used."""
    return (np.empty(size, np.uint64), np.empty(size, np.uint64), np.empty(size, np.int64),
            np.zeros(size, np.bool_))


@njit(cache=True, nogil=True)
def _grown(keys_a, keys_t, keys_s, used):  # pragma: no cover - numba
    """The table's keys in one of twice the size (kept at most half full: the keys are few
    where the events are many, and a small table stays in the CPU's caches)."""
    a2, t2, s2, u2 = _table(2 * keys_a.shape[0])
    for h in range(keys_a.shape[0]):
        if used[h]:
            g = _slot(a2, t2, s2, u2, keys_a[h], keys_t[h], keys_s[h])
            a2[g], t2[g], s2[g], u2[g] = keys_a[h], keys_t[h], keys_s[h], True
    return a2, t2, s2, u2


_START = 1 << 12  # slots of a new table


@njit(cache=True, nogil=True)
def _store_counts(addr, lane, inst_start, inst_warp, inst_sid, chosen):  # pragma: no cover
    """(events, distinct pairs) per static instruction, over those ``chosen``: a table keyed
    by (address, instruction) packed in 64 bits with the one thread that stores there (an
    accumulator is its own thread's); ``_store_counts_pairs`` when two threads store one
    address, or an address or instruction does not fit its bits (48 and 16)."""
    n, last = addr.shape[0], inst_start.shape[0] - 1
    events = np.zeros(chosen.shape[0], np.int64)
    distinct = np.zeros(chosen.shape[0], np.int64)
    keys, used, down = hash_table(_START // 2)
    ids = np.empty(keys.shape[0], np.int64)
    owner = np.empty(_START, np.uint64)
    m = 0
    for i in range(inst_start.shape[0]):
        s = inst_sid[i]
        if not chosen[s]:
            continue
        if s >= 1 << 16:
            return _store_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid, chosen)
        base = np.uint64(inst_warp[i]) * np.uint64(64)
        for e in range(inst_start[i], inst_start[i + 1] if i < last else n):
            a, t = addr[e], base + np.uint64(lane[e])
            if a >> np.uint64(48):
                return _store_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid, chosen)
            v = (a << np.uint64(16)) | np.uint64(s)
            h = hash_slot(keys, used, v, down)
            events[s] += 1
            if used[h]:
                if owner[ids[h]] != t:
                    return _store_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid,
                                               chosen)
                continue
            keys[h], used[h], ids[h] = v, True, m
            owner = appended(owner, m, t)
            m += 1
            distinct[s] += 1
            if 2 * m > keys.shape[0]:
                keys, used, ids, down = grown_ids(keys, used, ids)
    return events, distinct


@njit(cache=True, nogil=True)
def _store_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid,
                        chosen):  # pragma: no cover - numba
    """``_store_counts`` whatever the threads storing an address: keys (address, thread,
    instruction)."""
    n, last = addr.shape[0], inst_start.shape[0] - 1
    events = np.zeros(chosen.shape[0], np.int64)
    distinct = np.zeros(chosen.shape[0], np.int64)
    keys_a, keys_t, keys_s, used = _table(_START)
    filled = 0
    for i in range(inst_start.shape[0]):
        s = inst_sid[i]
        if not chosen[s]:
            continue
        base = np.uint64(inst_warp[i]) * np.uint64(64)
        for e in range(inst_start[i], inst_start[i + 1] if i < last else n):
            a, t = addr[e], base + np.uint64(lane[e])
            h = _slot(keys_a, keys_t, keys_s, used, a, t, s)
            if not used[h]:
                keys_a[h], keys_t[h], keys_s[h], used[h] = a, t, s, True
                distinct[s] += 1
                filled += 1
                if 2 * filled > keys_a.shape[0]:
                    keys_a, keys_t, keys_s, used = _grown(keys_a, keys_t, keys_s, used)
            events[s] += 1
    return events, distinct


@njit(cache=True, nogil=True)
def _reload_counts(addr, lane, inst_start, inst_warp, inst_sid, is_store,
                   restoring):  # pragma: no cover - numba
    """(load events, those of an address a ``restoring`` instruction touches, those of a
    pair it touches) per static instruction. A table keyed by the address alone with the
    one thread that stores it (an accumulator is its thread's own): one probe per event;
    ``_reload_counts_pairs`` when two threads store one address."""
    keys, used, ids, down, owner, ok = _store_owners(addr, lane, inst_start, inst_warp,
                                                     inst_sid, restoring)
    if not ok:
        return _reload_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid, is_store,
                                    restoring)
    n, last, k = addr.shape[0], inst_start.shape[0] - 1, is_store.shape[0]
    events, near, hit = np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64)
    if owner.shape[0] == 0:
        return events, near, hit
    for i in range(inst_start.shape[0]):
        s = inst_sid[i]
        if is_store[s]:
            continue
        base = np.uint64(inst_warp[i]) * np.uint64(64)
        for e in range(inst_start[i], inst_start[i + 1] if i < last else n):
            events[s] += 1
            h = hash_slot(keys, used, addr[e], down)
            if used[h]:
                near[s] += 1
                if owner[ids[h]] == base + np.uint64(lane[e]):
                    hit[s] += 1
    return events, near, hit


@njit(cache=True, nogil=True)
def _store_owners(addr, lane, inst_start, inst_warp, inst_sid,
                  restoring):  # pragma: no cover - numba
    """(keys, used, ids, shift, owner, ok): a table of the addresses the ``restoring``
    instructions store to (``hashing.grown_ids``), per id the thread of its first store;
    ok is False when another thread stores one of them too."""
    n, last = addr.shape[0], inst_start.shape[0] - 1
    keys, used, down = hash_table(_START // 2)
    ids = np.empty(keys.shape[0], np.int64)
    owner = np.empty(_START, np.uint64)
    m = 0
    for i in range(inst_start.shape[0]):
        if not restoring[inst_sid[i]]:
            continue
        base = np.uint64(inst_warp[i]) * np.uint64(64)
        for e in range(inst_start[i], inst_start[i + 1] if i < last else n):
            t = base + np.uint64(lane[e])
            h = hash_slot(keys, used, addr[e], down)
            if used[h]:
                if owner[ids[h]] != t:
                    return keys, used, ids, down, owner[:m], False
                continue
            keys[h], used[h], ids[h] = addr[e], True, m
            owner = appended(owner, m, t)
            m += 1
            if 2 * m > keys.shape[0]:
                keys, used, ids, down = grown_ids(keys, used, ids)
    return keys, used, ids, down, owner[:m], True


@njit(cache=True, nogil=True)
def _reload_counts_pairs(addr, lane, inst_start, inst_warp, inst_sid, is_store,
                         restoring):  # pragma: no cover - numba
    """``_reload_counts`` whatever the threads storing an address. Keys: (address, thread,
    0) for a pair, (address, 0, 1) for an address alone."""
    n, last, k = addr.shape[0], inst_start.shape[0] - 1, is_store.shape[0]
    events, near, hit = np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64)
    keys_a, keys_t, keys_s, used = _table(_START)
    filled = 0
    zero = np.uint64(0)
    for i in range(inst_start.shape[0]):
        if not restoring[inst_sid[i]]:
            continue
        base = np.uint64(inst_warp[i]) * np.uint64(64)
        for e in range(inst_start[i], inst_start[i + 1] if i < last else n):
            a = addr[e]
            for part in range(2):  # the pair, then the address alone
                t = base + np.uint64(lane[e]) if part == 0 else zero
                h = _slot(keys_a, keys_t, keys_s, used, a, t, part)
                if not used[h]:
                    keys_a[h], keys_t[h], keys_s[h], used[h] = a, t, part, True
                    filled += 1
                    if 2 * filled > keys_a.shape[0]:
                        keys_a, keys_t, keys_s, used = _grown(keys_a, keys_t, keys_s, used)
    if filled == 0:
        return events, near, hit
    for i in range(inst_start.shape[0]):
        s = inst_sid[i]
        if is_store[s]:
            continue
        base = np.uint64(inst_warp[i]) * np.uint64(64)
        for e in range(inst_start[i], inst_start[i + 1] if i < last else n):
            a = addr[e]
            events[s] += 1
            if used[_slot(keys_a, keys_t, keys_s, used, a, zero, 1)]:
                near[s] += 1
                t = base + np.uint64(lane[e])
                if used[_slot(keys_a, keys_t, keys_s, used, a, t, 0)]:
                    hit[s] += 1
    return events, near, hit


def _columns(addr, lane, inst_start, inst_warp, inst_sid):
    """The WarpTrace columns as the kernels take them (copies only where the type differs)."""
    return (np.ascontiguousarray(addr, np.uint64), np.ascontiguousarray(lane, np.uint8),
            np.ascontiguousarray(inst_start, np.int64), np.ascontiguousarray(inst_warp, np.int64),
            np.ascontiguousarray(inst_sid, np.int64))


def store_counts(addr: np.ndarray, lane: np.ndarray, inst_start: np.ndarray,
                 inst_warp: np.ndarray, inst_sid: np.ndarray,
                 chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(events, distinct (thread, address) pairs) of each static instruction ``chosen``
    (a bool per static instruction; 0 for the others). Arguments: a WarpTrace's columns."""
    return _store_counts(*_columns(addr, lane, inst_start, inst_warp, inst_sid),
                         np.ascontiguousarray(chosen, np.bool_))


def reload_counts(addr: np.ndarray, lane: np.ndarray, inst_start: np.ndarray,
                  inst_warp: np.ndarray, inst_sid: np.ndarray, is_store: np.ndarray,
                  restoring: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per static load: (its events, those whose address a ``restoring`` instruction's
    events touch, those whose (thread, address) pair they touch); 0 for stores."""
    return _reload_counts(*_columns(addr, lane, inst_start, inst_warp, inst_sid),
                          np.ascontiguousarray(is_store, np.bool_),
                          np.ascontiguousarray(restoring, np.bool_))
