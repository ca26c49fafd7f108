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
work grid, (B7)'s slowest lane is kept (``warp_work``). A warp's x tents depend on its
block's column alone and its y tents on its row, so they are pooled once a column (row) of
blocks, and each warp's few pooled weights are sorted in one compiled loop: the draws of
numpy's sort, to the last bit (docs/models.md, (B8)'s cost).
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    in runs of blocks, so that a 2048 x 2048 launch's lanes are not all held at once; a
    warp whose lanes are a rectangle of the block (a row's run of ``warp_size``, or whole
    rows) pools its x and y tents apart (``_spread_rect``), any other lane by lane."""
    gx, gy = max(grid[0], 1), max(grid[1], 1)
    wx, wy = max(int(work[0]), 1), max(int(work[1]), 1)
    u = np.asarray(weights, np.float64).reshape(gy * gx)
    nbx, nby = -(-wx // block.x), -(-wy // block.y)
    wpb = -(-block.threads // warp_size)
    rect = block.threads % warp_size == 0 and (block.x % warp_size == 0
                                               or warp_size % block.x == 0)
    run = max(1, (1 << 16) // (wpb * warp_size))
    runs = [np.arange(b, min(b + run, nbx * nby)) for b in range(0, nbx * nby, run)]
    if rect:
        parts = _spread_rect(u, (gx, gy), (wx, wy), block, warp_size, runs)
    else:
        parts = [_spread_lanes(u, (gx, gy), (wx, wy), block, warp_size, b) for b in runs]
    return np.concatenate(parts) if parts else np.zeros((0, wpb))


def _draw(vals: np.ndarray, share: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """Eq. (B8)'s quantiles: ``vals`` and ``share`` (blocks x warps x the traced threads
    each warp pools) sorted by weight per warp, and each warp's quantile r read off the
    cumulative shares (a warp with no share weighs 0)."""
    wpb = vals.shape[1]
    lanes = share.sum(axis=2)
    r = ((np.arange(wpb)[None, :] + 0.5) / wpb + PHI * blocks[:, None]) % 1.0
    got = _pick(np.ascontiguousarray(vals, np.float64), np.ascontiguousarray(share, np.float64),
                r * lanes - 1e-12)
    return np.where(lanes > 0, got, 0.0)  # (B8)


@njit(cache=True, nogil=True)
def _pick(vals, share, thr):  # pragma: no cover - numba
    """Each warp's pooled weights sorted (an insertion sort, stable as np.argsort's
    "stable"), their shares summed in that order (np.cumsum's order), and the weight at the
    first cumulative share that reaches ``thr``, the last if none does: the numpy sort and
    count of the traced threads the warp pools, without a sort call for every warp."""
    n, wpb, k = vals.shape
    out = np.empty((n, wpb))
    v, s = np.empty(k), np.empty(k)
    for b in range(n):
        for w in range(wpb):
            for i in range(k):
                x, y, j = vals[b, w, i], share[b, w, i], i
                while j > 0 and v[j - 1] > x:
                    v[j], s[j] = v[j - 1], s[j - 1]
                    j -= 1
                v[j], s[j] = x, y
            cum, cnt = 0.0, 0
            for i in range(k):
                cum = cum + s[i] if i else s[i]
                cnt += cum < thr[b, w]
            out[b, w] = v[min(cnt, k - 1)]
    return out


def _pooled(lanes: np.ndarray, work: int, traced: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One dimension's tents pooled per warp: ``lanes`` (warps x the warp's coordinates
    in this dimension, increasing) -> the traced indices each warp touches (warps x K, the
    first its lowest), the summed tent weights on them (lanes past the work weigh 0) and
    each warp's own K (a run of warps reads the first max K columns, as if pooled alone)."""
    lo, hi, a = tent(lanes, work, traced)
    inside = lanes < work
    base = lo[:, :1]
    own = (hi - base).max(axis=1) + 1
    width = int(own.max()) if len(own) else 1
    share = np.zeros((lanes.shape[0], width))
    dl, dh, wl, wh = lo - base, hi - base, (1 - a) * inside, a * inside  # x 1 or 0: exact
    for j in range(width):
        share[:, j] = ((dl == j) * wl + (dh == j) * wh).sum(axis=1)
    return np.minimum(base + np.arange(width)[None, :], traced - 1), share, own


def _spread_rect(u: np.ndarray, grid: tuple[int, int], work: tuple[int, int], block: Block,
                 warp_size: int, runs: list[np.ndarray]) -> list[np.ndarray]:
    """spread_work for the ``runs`` of blocks whose warps are rectangles of lanes: a warp's
    pooled weights are its x tents' times its y tents' (the lanes are every pair of its x
    and y). A warp's x tents depend on its block's column alone and its y tents on its
    row, so each is pooled once for every column (row) of blocks and each run reads its
    own (the launch's blocks share nbx columns: 8192 x 8192 of 32x32 blocks, 256)."""
    (gx, gy), (wx, wy) = grid, work
    nbx, nby, wpb = -(-wx // block.x), -(-wy // block.y), block.threads // warp_size
    k = np.arange(wpb)
    if block.x >= warp_size:  # a warp: warp_size lanes of one row
        xs = (k * warp_size % block.x)[:, None] + np.arange(warp_size)[None, :]
        ys = (k * warp_size // block.x)[:, None]
    else:  # a warp: warp_size / block.x whole rows
        xs = np.broadcast_to(np.arange(block.x), (wpb, block.x))
        ys = (k * (warp_size // block.x))[:, None] + np.arange(warp_size // block.x)[None, :]
    def lanes(first: np.ndarray, step: int, at: np.ndarray) -> np.ndarray:
        """The coordinates of every warp (rows: ``first`` x warps) in one dimension."""
        return ((first * step)[:, None, None] + at[None]).reshape(-1, at.shape[1])

    whole = nby > 1  # the columns repeat over the rows: each pooled once (a 1-D grid: none)
    if whole:
        ix, px, kx = _pooled(lanes(np.arange(nbx), block.x, xs), wx, gx)
    iy, py, ky = _pooled(lanes(np.arange(nby), block.y, ys), wy, gy)
    out = []
    for blocks in runs:
        cy = ((blocks // nbx)[:, None] * wpb + k[None, :]).reshape(-1)
        my = int(ky[cy].max())  # the run's own width, as if pooled alone
        jy, sy = iy[cy, :my], py[cy, :my]
        if whole:
            cx = ((blocks % nbx)[:, None] * wpb + k[None, :]).reshape(-1)
            mx = int(kx[cx].max())
            jx, sx = ix[cx, :mx], px[cx, :mx]
        else:
            jx, sx, _ = _pooled(lanes(blocks % nbx, block.x, xs), wx, gx)
        vals = u[jy[:, :, None] * gx + jx[:, None, :]].reshape(len(blocks), wpb, -1)
        share = (sy[:, :, None] * sx[:, None, :]).reshape(len(blocks), wpb, -1) / warp_size
        out.append(_draw(vals, share, blocks))
    return out


def _spread_lanes(u: np.ndarray, grid: tuple[int, int], work: tuple[int, int], block: Block,
                  warp_size: int, blocks: np.ndarray) -> np.ndarray:
    """spread_work for ``blocks`` (indices in block index order) lane by lane: each lane's
    tent weights over the four traced threads around it, pooled per warp."""
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
    share = share.reshape(len(blocks), wpb, warp_size * 4) / warp_size
    return _draw(vals, share, blocks)
