"""Which store transactions make the L2 read a sector to merge them (a read-modify-write).

A warp's store that writes a 32-byte sector only in part reaches the L2 with a byte mask.
The L2 merges it without a read into a copy it holds (a load of the launch brought the
sector in: a struct updated in place); the rest, fresh stores, cost the L2 a read
(models/bounds.py charges them twice on the L2's store side). A sector the launch's later
stores complete is no exception: the H100's transpose and index_decomp, whose scattered
stores other warps complete, take the double charge's time (dropping it predicted them
-47 % and -48 %). Used by transactions.analyze_memory.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["fresh_stores"]


def fresh_stores(inst, to_l2, ids, hits, is_store, sid, pattern, n_sids) -> np.ndarray:
    """Per (static instruction, pattern): store transactions reaching the L2 whose sector no
    earlier load brought in and the L2 still holds (a miss, or a hit only on bytes other
    stores left there): those need the L2 to read the sector to merge them. ``ids``: the
    dense ids of the L2 stream's sectors, in issue order."""
    out = np.zeros((n_sids, 3), np.int64)
    if is_store is None or ids is None:
        return out
    store_t = is_store[sid][inst]
    at_l2 = np.arange(len(inst))[to_l2]  # the transactions the L1 passes on
    st = store_t[at_l2]
    fresh = st & ~(hits[at_l2] & _loaded_before(ids, ~st))
    i = inst[at_l2[fresh]]
    np.add.at(out, (sid[i], pattern[i]), 1)
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
