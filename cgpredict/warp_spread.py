"""The warps of a block below the trace's lane spacing: their order statistics (eq. (B8)).

Eq. (B7) (smsp_schedule.py) schedules each work warp on its sub-partition, a block holding
its slot until its slowest warp ends. Where the trace resolves the work grid (a
pseudo-thread for every work thread) each warp's work is its slowest lane's weight
(``smsp_schedule.warp_work``). A coarser trace holds one pseudo-thread for many lanes: the
blind mandelbrot's 128 x 128 trace of a 2048 x 2048 image gives one pseudo-thread to each
16 x 16 block, so every warp of such a block reads the same weight and the block's slowest
warp, the one that holds its slot, is hidden below the lane spacing.

What the trace does say is where a work lane stands between the traced pseudo-threads: lane
x of a work grid of w threads traced at g stands at f = (x + 1/2) g / w - 1/2, between the
traced threads floor(f) and floor(f) + 1 with the tent weights 1 - a and a (a = f -
floor(f); per dimension, multiplied over x and y). A warp's lanes, averaged, give its *local
distribution*: the traced weights near it, each with the share of its lanes that stand near
it. The traced field is not smooth below its spacing (an escape-time boundary, a row's
length), so a warp's work is taken as a draw from that distribution, and the W warps of a
block as W stratified draws, the block's warps the W quantiles::

    P_b,w(v) = mean over warp w's lanes of the tent weights of the traced threads u = v
    c_b,w = Q_b,w(r_b,w),  r_b,w = frac((w + 1/2) / W + phi b),  phi = (sqrt 5 - 1) / 2   (B8)

Q is the quantile of P (the smallest traced weight whose cumulative share reaches r). Over a
block the r are the W midpoints (i + 1/2) / W, turned by the block's golden-ratio offset so
that the warp drawing the largest quantile moves between the sub-partitions from block to
block: the block's slowest warp is the expected largest of W draws, its fastest the
smallest, and their mean the local distribution's mean. A field that is the same around a
block gives its warps that weight (no spread); a field that differs gives the spread of its
traced neighbours (the escape-time boundary, a triangular loop's rows: the latter's traced
neighbours differ by one lane spacing's trips, a small spread). Where the trace resolves the
work grid, (B7)'s slowest lane is kept (``warp_work``).
"""

from __future__ import annotations

import numpy as np

from .block import Block

__all__ = ["PHI", "spread_work", "tent"]

#: the golden ratio's conjugate: the block-to-block turn of the warps' quantiles (B8)
PHI = (5 ** 0.5 - 1) / 2


def tent(lanes: np.ndarray, work: int, traced: int) -> tuple[np.ndarray, np.ndarray,
                                                            np.ndarray]:
    """Eq. (B8)'s tent in one dimension: for each work ``lanes`` index (of ``work``
    threads traced at ``traced``), the traced threads below and above it and the weight of
    the one above (a lane on a traced thread, or past the first or last one, weighs 0)."""
    g = max(int(traced), 1)
    f = (np.asarray(lanes, np.float64) + 0.5) * g / max(int(work), 1) - 0.5
    f = np.clip(f, 0.0, g - 1.0)
    lo = np.minimum(np.floor(f).astype(np.int64), g - 1)
    return lo, np.minimum(lo + 1, g - 1), f - lo


def spread_work(weights: np.ndarray, grid: tuple[int, int], work: tuple[int, int],
                block: Block, warp_size: int) -> np.ndarray:
    """Eq. (B8): each work warp's weight (blocks x warps, block index order x fastest) as a
    stratified draw from its lanes' local distribution of the traced ``weights`` (index
    y * gx + x of ``grid``); a warp with no lane inside the ``work`` grid weighs 0. Taken
    in runs of blocks, so that a 2048 x 2048 launch's lanes are not all held at once."""
    gx, gy = max(grid[0], 1), max(grid[1], 1)
    wx, wy = max(int(work[0]), 1), max(int(work[1]), 1)
    u = np.asarray(weights, np.float64).reshape(gy * gx)
    nbx, nby = -(-wx // block.x), -(-wy // block.y)
    wpb = -(-block.threads // warp_size)
    run = max(1, (1 << 16) // (wpb * warp_size))
    parts = [_spread_run(u, (gx, gy), (wx, wy), block, warp_size, np.arange(b, min(b + run,
                                                                              nbx * nby)))
             for b in range(0, nbx * nby, run)]
    return np.concatenate(parts) if parts else np.zeros((0, wpb))


def _spread_run(u: np.ndarray, grid: tuple[int, int], work: tuple[int, int], block: Block,
                warp_size: int, blocks: np.ndarray) -> np.ndarray:
    """spread_work for the work ``blocks`` (indices in block index order): their lanes' tent
    weights over the four traced threads around each, pooled per warp, sorted by weight,
    and each warp's quantile r of eq. (B8) read off the cumulative shares."""
    (gx, gy), (wx, wy) = grid, work
    nbx = -(-wx // block.x)
    lx, ly = np.arange(block.threads) % block.x, np.arange(block.threads) // block.x
    bx = (blocks % nbx)[:, None] * block.x + lx[None, :]
    by = (blocks // nbx)[:, None] * block.y + ly[None, :]
    x0, x1, ax = tent(bx, wx, gx)
    y0, y1, ay = tent(by, wy, gy)
    vals = np.stack([u[y0 * gx + x0], u[y0 * gx + x1], u[y1 * gx + x0], u[y1 * gx + x1]], -1)
    share = np.stack([(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay], -1)
    share *= ((bx < wx) & (by < wy))[..., None]
    pad = -block.threads % warp_size
    if pad:
        vals = np.pad(vals, ((0, 0), (0, pad), (0, 0)))
        share = np.pad(share, ((0, 0), (0, pad), (0, 0)))
    wpb = (block.threads + pad) // warp_size
    vals = vals.reshape(len(blocks), wpb, warp_size * 4)
    share = share.reshape(len(blocks), wpb, warp_size * 4)
    lanes = share.sum(axis=2)
    order = np.argsort(vals, axis=2, kind="stable")
    vals = np.take_along_axis(vals, order, 2)
    cum = np.cumsum(np.take_along_axis(share, order, 2), axis=2)
    r = ((np.arange(wpb)[None, :] + 0.5) / wpb + PHI * blocks[:, None]) % 1.0
    k = np.minimum((cum < (r * lanes)[..., None] - 1e-12).sum(axis=2), vals.shape[2] - 1)
    got = np.take_along_axis(vals, k[..., None], 2)[..., 0]
    return np.where(lanes > 0, got, 0.0)  # (B8)
