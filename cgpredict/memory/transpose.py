"""The advisor's coalescing fix on a trace: the addresses the same elements of a 2-D array
(or each 2-D plane of a deeper one) would have in its transposed layout."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..warps import WarpTrace
from .shared import ArrayLayout


def transpose_addresses(addr: np.ndarray, base: int, layout: ArrayLayout) -> np.ndarray:
    """Addresses of the same elements in the transposed layout of a 2-D array: element (r, c)
    of a D0 x D1 array moves to (c, r) of a D1 x D0 one (the advisor's coalescing fix)."""
    out = np.array(addr, np.uint64)
    one = np.zeros(1, np.int64)  # every address one instruction of static id 0
    _transpose_in_place(out, one, one, _moves([([0], base, layout)], 1))
    return out


def transposed_addresses(wt: WarpTrace, arrays) -> np.ndarray:
    """A copy of ``wt``'s event addresses whose accesses by the static instructions of each
    (sids, base, layout) in ``arrays`` are moved to that array's transposed layout."""
    out = wt.addr.copy()
    if len(out) and arrays:
        n_sids = max([int(wt.inst_sid.max())] + [s for sids, _, _ in arrays for s in sids]) + 1
        _transpose_in_place(out, wt.inst_start, wt.inst_sid, _moves(arrays, n_sids))
    return out


def _moves(arrays, n_sids: int) -> np.ndarray:
    """Per static instruction: (moved?, base, D0, D1, element bytes) of its array's transposed
    layout (row 0 of every column 0 when it is not moved)."""
    table = np.zeros((n_sids, 5), np.int64)
    for sids, base, lay in arrays:
        for s in sids:
            table[s] = (1, base, lay.dims[-2], lay.dims[-1], lay.elem_bytes)
    return table


@njit(cache=True, nogil=True)
def _transpose_in_place(addr, inst_start, inst_sid, moves):  # pragma: no cover - numba
    """transpose_addresses on the events of the warp instructions whose static instruction
    ``moves`` marks, one pass, no temporaries: (outer, r, c) of a D0 x D1 plane goes to
    (outer, c, r) of a D1 x D0 one."""
    n = addr.shape[0]
    for i in range(inst_start.shape[0]):
        s = inst_sid[i]
        if moves[s, 0] == 0:
            continue
        base, d0, d1, elem = moves[s, 1], moves[s, 2], moves[s, 3], moves[s, 4]
        hi = inst_start[i + 1] if i + 1 < inst_start.shape[0] else n
        for t in range(inst_start[i], hi):
            e = (np.int64(addr[t]) - base) // elem
            outer, inner = e // (d0 * d1), e % (d0 * d1)
            r, c = inner // d1, inner % d1
            addr[t] = np.uint64(base + (outer * (d0 * d1) + c * d0 + r) * elem)
