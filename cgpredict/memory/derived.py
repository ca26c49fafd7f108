"""Values computed once per pseudo-warp trace and reused (SPEC §2.3): the patterns, transactions
and issue order of a WarpTrace kept with it (WarpTrace.derived), and, for a trace derived
from another (Origin: warps regrouped, addresses remapped), which warp instructions changed.
"""

from __future__ import annotations

import numpy as np

from ..warps import WarpTrace


def memo(wt: WarpTrace, key: tuple, compute):
    """``compute()`` once per pseudo-warp trace and ``key``: the patterns, transactions and
    issue order depend on the warps and the line size or batch only, not on the cache size
    or the work size, so the next device or size of a sweep (sweep, advise) reuses them.
    Kept with ``wt`` (``WarpTrace.derived``); callers only read the arrays."""
    values = wt.derived
    if key not in values:
        values[key] = compute()
    return values[key]


def moved_mask(wt: WarpTrace, sids: frozenset[int]) -> np.ndarray | None:
    """Per warp instruction: True when its static instruction is one of ``sids``."""
    if not sids:
        return None
    mark = np.zeros(max(int(wt.inst_sid.max(initial=0)), max(sids)) + 1, np.bool_)
    mark[list(sids)] = True
    return mark[wt.inst_sid]
