"""Warps cut by the grid's x edge weigh as the work size has them, eq. (EW).

A 2-D grid traced at a small size has short rows: FDTD-2D's ``ex`` update (``j`` from 1,
63 pseudo-threads a row at the trace size 64, 32x8 blocks) has two warps a row, the first
straddling two 128-B lines (its 32 floats start 4 B into a line), the second cut by the
row's end to 31 lanes inside one line. The trace's mean is 1.5 L2 requests a warp load,
where the work size (4095 a row, 128 warps) has 127 straddling warps to one cut: 1.99, as
Nsight Compute counts (``lts__t_requests_srcunit_tex_op_read`` 2.09 M for 524,288 warps of
four requests). A warp is cut by the x edge when one of its lanes lies past the grid's last
column; the other warps of a row grow with the row (``CacheScale.grid_x``, the x loop's trip
ratio g), the cut ones do not, so a static instruction's requests at the work size are

    R = n x (g x R_full + R_cut) / (g x n_full + n_cut)                             (EW)

with n, n_full, n_cut its warp instructions (all, uncut, cut) and R_full, R_cut their summed
requests in the trace. Only the requests (eqs. (B2q), (LM)) take the weights; the sectors
and DRAM counts keep the trace's share of cut warps (docs/models.md)."""

from __future__ import annotations

import numpy as np

from ..warp_order import WARP_SIZE, blocks_across
from ..warps import WarpTrace
from .line_counts import line_counts

__all__ = ["x_edge_warps", "edge_weighted", "edge_requests"]


def x_edge_warps(wt: WarpTrace) -> np.ndarray:
    """Per warp of ``wt``: True when a lane of it lies past the grid's last x column (the
    last block column, when the grid's x extent is no multiple of the block's)."""
    nbx, wpb = blocks_across(wt.grid_x, wt.block)
    n = max(int(wt.n_warps), int(wt.inst_warp.max()) + 1 if wt.n_insts else 0)
    bx = max(wt.block.x, 1)
    rem = max(wt.grid_x, 1) - (nbx - 1) * bx  # columns of the last block column
    if rem >= bx:
        return np.zeros(n, np.bool_)
    cut = np.zeros(wpb, np.bool_)
    for wi in range(wpb):  # in-block columns of warp wi's lanes
        tib = np.arange(wi * WARP_SIZE, min((wi + 1) * WARP_SIZE, wt.block.threads))
        cut[wi] = len(tib) > 0 and int((tib % bx).max()) >= rem
    w = np.arange(n)
    return ((w // wpb) % nbx == nbx - 1) & cut[w % wpb]


def edge_weighted(full: np.ndarray, cut: np.ndarray, n_full: np.ndarray, n_cut: np.ndarray,
                  growth: float) -> np.ndarray:
    """Eq. (EW): per (static instruction, pattern) the requests of its n_full + n_cut warp
    instructions with the uncut ones weighing ``growth`` times the cut ones (summed
    requests ``full`` and ``cut``), as integers of the trace's count of warp
    instructions."""
    n = n_full + n_cut
    den = growth * n_full + n_cut
    mean = np.divide(growth * full + cut, den, out=np.zeros(full.shape, np.float64),
                     where=den > 0)
    return np.rint(mean * n).astype(np.int64)


def edge_requests(wt: WarpTrace, growth: float, units: np.ndarray, inst: np.ndarray,
                  per_line: int, pattern: np.ndarray, n_sids: int) -> np.ndarray:
    """Eq. (EW) on line_counts (the requests of the L2 stream ``units``, ``inst``):
    unweighted when nothing grows along x or no warp is cut."""
    sid = wt.inst_sid
    whole = line_counts(units, inst, per_line, sid, pattern, n_sids)
    if growth <= 1.0 or not wt.n_insts:
        return whole
    edge = x_edge_warps(wt)[wt.inst_warp]  # per warp instruction
    if not edge.any():
        return whole
    m = edge[inst]
    cut = line_counts(units[m], inst[m], per_line, sid, pattern, n_sids)
    n_cut = np.zeros((n_sids, 3), np.int64)
    n_all = np.zeros((n_sids, 3), np.int64)
    np.add.at(n_cut, (sid[edge], pattern[edge]), 1)
    np.add.at(n_all, (sid, pattern), 1)
    return edge_weighted(whole - cut, cut, n_all - n_cut, n_cut, growth)
