"""Eq. (EW): warps cut by the grid's x edge weigh as the work size has them
(memory/edge_warps.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.memory.edge_warps import edge_requests, edge_weighted, x_edge_warps
from cgpredict.warp_order import blocks_across


def _grid(gx: int, gy: int, block: Block) -> SimpleNamespace:
    """A stand-in WarpTrace of a full gx x gy grid: its warps, no instructions."""
    nbx, wpb = blocks_across(gx, block)
    nby = -(-gy // block.y)
    return SimpleNamespace(grid_x=gx, grid_y=gy, block=block, n_warps=nbx * nby * wpb,
                           n_insts=0, inst_warp=np.zeros(0, np.int64))


def _brute_cut(gx: int, gy: int, block: Block) -> np.ndarray:
    """Per warp: does one of its lanes fall past column gx - 1? Lane by lane."""
    nbx, wpb = blocks_across(gx, block)
    nby = -(-gy // block.y)
    cut = np.zeros(nbx * nby * wpb, bool)
    for by in range(nby):
        for bx in range(nbx):
            for tib in range(block.threads):
                x = bx * block.x + tib % block.x
                w = (by * nbx + bx) * wpb + tib // 32
                cut[w] |= x >= gx
    return cut


@pytest.mark.parametrize("gx,block", [(63, Block(32, 8)), (63, Block(16, 16)),
                                      (63, Block(64, 4)), (100, Block(128, 1)),
                                      (64, Block(32, 8)), (64, Block(16, 16)),
                                      (50, Block(8, 8))])
def test_cut_warps_are_those_with_a_lane_past_the_last_column(gx: int, block: Block) -> None:
    assert (x_edge_warps(_grid(gx, 16, block)) == _brute_cut(gx, 16, block)).all()


def _misaligned_row_requests(width: int) -> tuple[float, float, int, int]:
    """FDTD-2D's ex row: lanes j = 1 .. width - 1 (4-B floats, the row 128-B aligned),
    32x1 warps: (requests of uncut warps, of cut ones, their counts), lines by hand."""
    lanes = np.arange(1, width)
    warps = [lanes[k:k + 32] for k in range(0, len(lanes), 32)]
    lines = [len({int(j) * 4 // 128 for j in w}) for w in warps]
    full = [n for w, n in zip(warps, lines) if len(w) == 32]
    cut = [n for w, n in zip(warps, lines) if len(w) < 32]
    return float(sum(full)), float(sum(cut)), len(full), len(cut)


def test_misaligned_row_at_the_trace_size_gives_the_work_size_requests() -> None:
    # trace: 63 lanes, two warps, the first straddles two lines, the second one line
    f, c, nf, nc = _misaligned_row_requests(64)
    assert (f, c, nf, nc) == (2.0, 1.0, 1, 1)
    wf, wc, wnf, wnc = _misaligned_row_requests(4096)
    work_mean = (wf + wc) / (wnf + wnc)  # 127 warps of 2 lines, one of 1: 255 / 128
    assert work_mean == pytest.approx(255 / 128)
    g = 4095 / 63  # the x loop's trip ratio
    ew = edge_weighted(np.array([[f * 1000, 0, 0]]), np.array([[c * 1000, 0, 0]]),
                       np.array([[nf * 1000, 0, 0]]), np.array([[nc * 1000, 0, 0]]), g)
    mean = ew[0, 0] / 2000
    assert mean == pytest.approx(work_mean, rel=0.005)  # the trace's own mean: 1.5
    assert (f + c) / (nf + nc) == 1.5


def test_edge_requests_weights_only_cut_warps_and_is_identity_without_growth() -> None:
    block = Block(32, 1)
    # 63 pseudo-threads along x, one row: warp 0 (32 lanes) and warp 1 (31 lanes, cut)
    inst_warp = np.array([0, 1], np.int64)
    wt = SimpleNamespace(grid_x=63, grid_y=1, block=block, n_warps=2, n_insts=2,
                         inst_warp=inst_warp, inst_sid=np.zeros(2, np.int64))
    # sectors (4 a line): warp 0 on lines 0 and 1, warp 1 on line 2
    units = np.array([0, 4, 5, 8, 9], np.uint64)
    inst = np.array([0, 0, 0, 1, 1], np.int64)
    pattern = np.zeros(2, np.int64)
    plain = edge_requests(wt, 1.0, units, inst, 4, pattern, 1)
    assert plain[0, 0] == 3
    grown = edge_requests(wt, 65.0, units, inst, 4, pattern, 1)
    assert grown[0, 0] == round(2 * (65 * 2 + 1) / 66)  # two instructions at 1.985 each
