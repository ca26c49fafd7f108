"""Which store transactions make the L2 read a sector to merge them (a read-modify-write).

A warp's store that writes a 32-byte sector only in part reaches the L2 with a byte mask.
The L2 merges it without a read into a copy it holds (a load of the launch brought the
sector in: a struct updated in place), and keeps a sector it does not hold dirty with the
mask, writing it back whole if the launch's later stores complete it before it leaves (a
row walk: Deriche's row passes, corr_corr's symmat). Only the rest, fresh stores, cost the
L2 a read (models/bounds.py charges them twice on the store path). Used by
transactions.analyze_memory.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..hashing import dense_ids
from ..warps import WarpTrace

__all__ = ["completed_sectors", "fresh_stores"]


def fresh_stores(inst, to_l2, ids, hits, is_store, sid, pattern, n_sids,
                  done=None) -> np.ndarray:
    """Per (static instruction, pattern): store transactions reaching the L2 whose sector no
    earlier load brought in and the L2 still holds (a miss, or a hit only on bytes other
    stores left there), and that the launch's stores do not complete while the L2 holds it
    (``done``: per transaction in issue order, _completed_sectors): only those need the
    L2 to read the sector to merge them. ``ids``: the dense ids of the L2 stream's sectors,
    in issue order."""
    out = np.zeros((n_sids, 3), np.int64)
    if is_store is None or ids is None:
        return out
    store_t = is_store[sid][inst]
    at_l2 = np.arange(len(inst))[to_l2]  # the transactions the L1 passes on
    st = store_t[at_l2]
    fresh = st & ~(hits[at_l2] & _loaded_before(ids, ~st))
    if done is not None:
        fresh &= ~done[at_l2]
    i = inst[at_l2[fresh]]
    np.add.at(out, (sid[i], pattern[i]), 1)
    return out


def completed_sectors(wt: WarpTrace, ab: np.ndarray, is_store, lines, inst, hits,
                       unit: int) -> np.ndarray | None:
    """Per transaction (in issue order): True for a store transaction whose sector the
    launch's stores write whole (the distinct bytes its store events write cover all
    ``unit`` bytes) while the L2 holds it (none of the sector's later store transactions
    misses). The L2 keeps a partly written sector dirty with a byte mask and writes it back
    only when evicted; completed before that, it is written back whole and never read: a
    row walk's stores (Deriche, corr_corr: one word of 32 rows a warp instruction, the next
    iterations filling the rest) cost one request each, no read-modify-write (ncu on the
    H100: their launches read from DRAM only the arrays they load)."""
    if is_store is None or not len(lines) or not wt.n_events:
        return None
    counts = np.diff(np.r_[wt.inst_start, wt.n_events])
    ev_sid = np.repeat(wt.inst_sid, counts)
    st = is_store[ev_sid]
    if not st.any():
        return None
    size = np.asarray(ab, np.int64)[ev_sid[st]]
    addr = wt.addr[st]
    words, first = np.unique(addr, return_index=True)  # each stored address once
    key = words // np.uint64(unit)
    ids = dense_ids(key)[0]
    whole = np.unique(key[np.bincount(ids, weights=size[first])[ids] >= unit])
    store_t = is_store[wt.inst_sid[inst]]
    in_whole = store_t & np.isin(lines, whole)
    return in_whole & _kept_after_first(dense_ids(lines)[0], store_t, hits)


@njit(cache=True, nogil=True)
def _kept_after_first(ids, is_store, hits):  # pragma: no cover - numba
    """Per transaction: True when no store transaction on its sector after the sector's
    first store missed in the L2 (the sector stayed while the stores filled it)."""
    n = ids.shape[0]
    m = ids.max() + 1 if n else 0
    seen = np.zeros(m, np.bool_)
    lost = np.zeros(m, np.bool_)
    for t in range(n):
        if is_store[t]:
            if seen[ids[t]] and not hits[t]:
                lost[ids[t]] = True
            seen[ids[t]] = True
    out = np.empty(n, np.bool_)
    for t in range(n):
        out[t] = not lost[ids[t]]
    return out


@njit(cache=True, nogil=True)
def _loaded_before(ids, is_load):  # pragma: no cover - numba
    """True where an earlier transaction on the same id (sector) was a load."""
    n = ids.shape[0]
    seen = np.zeros(ids.max() + 1 if n else 0, np.bool_)
    out = np.empty(n, np.bool_)
    for t in range(n):
        out[t] = seen[ids[t]]
        if is_load[t]:
            seen[ids[t]] = True
    return out
