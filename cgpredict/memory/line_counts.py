"""The distinct cache lines each warp instruction touches, per static instruction and
access pattern: the lines an SM's L1 path passes (eq. (B2) of docs/models.md)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["line_counts"]


def line_counts(units: np.ndarray, inst: np.ndarray, per_line: int, sid: np.ndarray,
                 pattern: np.ndarray, n_sids: int) -> np.ndarray:
    """Per (static instruction, pattern): the distinct cache lines of ``per_line`` units its
    warp instructions touch, summed over them (``units``, ``inst``: every transaction). A
    warp instruction's transactions come in one run, so a pass over the runs counts them;
    a sort by (instruction, line) where they do not."""
    out = np.zeros((n_sids, 3), np.int64)
    if not len(units):
        return out
    per = np.uint64(max(per_line, 1))
    if _run_lines(units, per, inst, sid, pattern, out, int(inst.max()) + 1):
        return out
    out[:] = 0
    line = units // per
    order = np.lexsort((line, inst))
    li, ii = line[order], inst[order]
    new = np.r_[True, (li[1:] != li[:-1]) | (ii[1:] != ii[:-1])]
    i = ii[new]
    np.add.at(out, (sid[i], pattern[i]), 1)
    return out


@njit(cache=True, nogil=True)
def _run_lines(units, per, inst, sid, pattern, out, n_inst):  # pragma: no cover - compiled
    """Adds each warp instruction's distinct lines (units // per over its run of ``inst``) to
    ``out`` at its (static instruction, pattern); a run holds a warp's few lines, so a
    look-back suffices, and only for a line not above all before it (lines mostly ascend).
    False (``out`` part-filled) when an instruction's transactions are not in one run."""
    n = len(units)
    seen_inst = np.zeros(n_inst, np.bool_)
    start = 0
    while start < n:
        i = inst[start]
        if seen_inst[i]:
            return False
        seen_inst[i] = True
        end = start + 1
        while end < n and inst[end] == i:
            end += 1
        distinct = 0
        top = units[start] // per  # the largest line of the run so far
        for a in range(start, end):
            v = units[a] // per
            seen = False
            if a > start and v <= top:
                for b in range(start, a):
                    if units[b] // per == v:
                        seen = True
                        break
            if not seen:
                distinct += 1
                top = max(top, v)
        out[sid[i], pattern[i]] += distinct
        start = end
    return True
