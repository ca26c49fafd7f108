"""A warp's loads of one pass through its code send a line's missed sectors in the widest
load's request, eq. (PW).

2DCONV's row of three loads ``A[i][j-1]``, ``A[i][j]``, ``A[i][j+1]`` (``j`` from 1) takes, in
a 16-wide half row, the sectors {2k, 2k+1}, {2k, 2k+1, 2k+2} and {2k, 2k+1, 2k+2}: in the
C's order the first load misses two sectors and the second misses the third, two L2
requests when all three lie in one 128-B line (even k). ptxas issues the loads of a pass
as it schedules them, not in the C's order: the sm_90 SASS of the port loads
``[R4.64+0x4]`` (``A[i-1][j]``) before ``[R4.64]`` (``A[i-1][j-1]``), so the widest load
fetches the row's three sectors in one request and the other two hit. Nsight Compute
counts 1.79 M L2 read requests at 16x16 (2026-11-28 lease), 3.42 a warp: one per line of
each data row (18 rows of 1.5 lines a 16x16 block: 3.375 a warp), where the C's order
gives 4.5. At 32x8 both orders give 2.5 (the third sector opens the next line).

So within a *pass* (a run of one warp's consecutive load instructions whose static
instructions ascend: one trip through the loads of a block, a loop's next trip starting a
new pass) each transaction is charged to the widest of the pass's loads that touch its
sector (most sectors; the earliest on a tie), and a load's L2 requests are the distinct
lines of the missed sectors charged to it:

    owner(s) = argmax over loads l of the pass touching s of (sectors(l), -position(l))
    R_l      = | { line(s) : s missed by the pass, owner(s) = l } |                   (PW)

The sectors missed, their count and the L1's hits are the L1 simulation's, unchanged; only
which load's request carries a sector moves. Loads of equal width (an array of structs'
``p.x``, ``p.y``) keep the C's order: each sector stays with its first load."""

from __future__ import annotations

import numpy as np

__all__ = ["pass_groups", "widest_owners"]


def pass_groups(inst_warp: np.ndarray, inst_sid: np.ndarray, is_load: np.ndarray) -> np.ndarray:
    """Per warp instruction (in (warp, issue) order) the id of its pass: a new pass at a
    new warp, at a static instruction not above the previous one, and at or after a store
    (a store is a pass of its own)."""
    n = len(inst_warp)
    if not n:
        return np.zeros(0, np.int64)
    new = np.ones(n, np.bool_)
    new[1:] = ((inst_warp[1:] != inst_warp[:-1]) | (inst_sid[1:] <= inst_sid[:-1])
               | ~is_load[1:] | ~is_load[:-1])
    return np.cumsum(new) - 1


def widest_owners(units: np.ndarray, inst: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Eq. (PW): per transaction (``units``, ``inst``: every transaction issued to the L1)
    the warp instruction of its pass charged with its sector: the pass's widest instruction
    touching it, the earliest of equals."""
    if not len(units):
        return inst.copy()
    width = np.bincount(inst)
    g = group[inst]
    order = np.lexsort((inst, -width[inst], units, g))  # pass, sector, widest, earliest
    gs, us = g[order], units[order]
    first = np.ones(len(order), np.bool_)
    first[1:] = (gs[1:] != gs[:-1]) | (us[1:] != us[:-1])
    owner_sorted = inst[order][first][np.cumsum(first) - 1]
    owner = np.empty_like(inst)
    owner[order] = owner_sorted
    return owner
