"""Exchanging a 2-D array's elements inside square tiles (the advisor's padded shared-memory
transposition, issue #26): in a tiled transpose each block reads a TxT tile of one array
coalesced, writes it into shared memory, and thread (tx, ty) then writes the element thread
(ty, tx) computed, so that the other array's accesses are coalesced too. In the trace this is
an exchange of the low row and column coordinates of that array's accesses: element (r, c)
is accessed by the thread that accessed element (r0 + c mod T, c0 + r mod T), r0 and c0 the
tile's corner."""

from __future__ import annotations

from math import gcd

import numpy as np

from .warps import WarpTrace

__all__ = ["conflict_ways", "tile_exchanged_addresses"]


def tile_exchanged_addresses(
    wt: WarpTrace, moves: list[tuple[list[int], int, int, int]], tile: int
) -> np.ndarray:
    """A copy of ``wt``'s event addresses with the accesses of each (static instructions, base,
    row length in elements, element bytes) in ``moves`` exchanged inside ``tile`` x ``tile``
    tiles (module docstring)."""
    out = wt.addr.copy()
    if not len(out) or not moves:
        return out
    counts = np.diff(np.append(wt.inst_start, len(out)))
    sid = np.repeat(wt.inst_sid, counts)  # the static instruction of every event
    for sids, base, row, elem in moves:
        sel = np.isin(sid, np.asarray(sids, np.int64))
        e = (out[sel].astype(np.int64) - base) // elem
        r, c = e // row, e % row
        r2 = r - r % tile + c % tile
        c2 = c - c % tile + r % tile
        out[sel] = (base + (r2 * row + c2) * elem).astype(np.uint64)
    return out


def conflict_ways(stride_words: int, banks: int, lanes: int = 32) -> int:
    """Bank-conflict degree of ``lanes`` threads reading one word each ``stride_words`` apart:
    they fall on banks/gcd(stride, banks) distinct banks (a 32x32 tile read down a column:
    32-way; with a padding column, a stride of 33: conflict-free)."""
    distinct = banks // gcd(stride_words, banks)
    return max(1, -(-min(lanes, banks) // distinct)) if distinct < lanes else 1
