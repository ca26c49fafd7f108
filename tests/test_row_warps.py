"""A warp (or L lanes) per row (row_warps.py, issue #26), on a synthetic trace of rows of
irregular lengths: every regrouped warp instruction against a brute force over the rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.row_warps import row_warp_trace
from cgpredict.warps import WarpTrace

VAL = 1 << 20  # val[] base; rowptr[] at 0, 4 bytes an element
LENGTHS = [(r * 7) % 41 for r in range(64)]  # 0..40 entries, two warps of rows
START = np.concatenate([[0], np.cumsum(LENGTHS)]).tolist()


def _scalar_trace() -> WarpTrace:
    """One thread a row: per warp, rowptr[r] (static 0) for its 32 lanes, then iteration j of
    val[k] (static 1) for the lanes whose row has more than j entries."""
    addr, lane, start, warp, k, sid = [], [], [], [], [], []
    for w in range(2):
        rows = range(32 * w, 32 * w + 32)
        insts = [(0, [(r % 32, 4 * r) for r in rows])]
        for j in range(max(LENGTHS[r] for r in rows)):
            insts.append((1, [(r % 32, VAL + 4 * (START[r] + j)) for r in rows
                              if LENGTHS[r] > j]))
        for i, (s, events) in enumerate(insts):
            start.append(len(addr))
            warp.append(w), k.append(i), sid.append(s)
            lane += [x for x, _ in events]
            addr += [a for _, a in events]
    return WarpTrace(1, Block(64, 1), 64, 1, np.array(addr, np.uint64),
                     np.array(lane, np.uint8), np.array(start, np.int64),
                     np.array(warp, np.int64), np.array(k, np.int64),
                     np.array(sid, np.int64), 64, 2, 0, 0, None)


def _instructions(wt: WarpTrace):
    """(warp, static instruction, [(lane, address)]) of every warp instruction, in order."""
    ends = np.r_[wt.inst_start[1:], wt.n_events]
    return [(int(w), int(s), list(zip(wt.lane[a:b].tolist(), wt.addr[a:b].tolist())))
            for w, s, a, b in zip(wt.inst_warp, wt.inst_sid, wt.inst_start, ends)]


@pytest.mark.parametrize("lanes", [32, 16, 8, 2])
def test_rows_regrouped_by_brute_force(lanes):
    """``lanes`` lanes a row, 32 / lanes rows a warp: chunk c of a warp's val loads holds, in
    lane slot x lanes + l, entry c x lanes + l of each of its rows that has it; rowptr once per
    row in lane slot x lanes; the executions per thread scale to those instructions a warp."""
    share = 32 // lanes
    out, scale = row_warp_trace(_scalar_trace(), {1}, lanes)
    want = []
    for w in range(64 // share):
        rows = range(w * share, w * share + share)
        want.append((w, 0, [(slot * lanes, 4 * r) for slot, r in enumerate(rows)]))
        for c in range(max(math.ceil(LENGTHS[r] / lanes) for r in rows)):
            want.append((w, 1, [(slot * lanes + i, VAL + 4 * (START[r] + c * lanes + i))
                                for slot, r in enumerate(rows) for i in range(lanes)
                                if c * lanes + i < LENGTHS[r]]))
    assert _instructions(out) == want
    assert out.n_warps == 64 // share and out.grid_x == 64 * lanes
    warps = 64 // share
    assert scale[0] == pytest.approx(1.0)  # a row's code: once a row, before and after
    loads = sum(1 for w, s, _ in want if s == 1)
    assert scale[1] == pytest.approx(loads / warps / (sum(LENGTHS) / 64))
