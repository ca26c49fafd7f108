"""Tests of cgpredict.warp_spread (a block's warps below the trace's lane spacing, eq. (B8)):
the tent of a lane between its traced neighbours by hand, a hand-derived draw of every warp
of a coarse 1-D trace, the stratification (a block's warps split as the local distribution's
shares), alike fields, and a brute force of the quantiles."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict import warp_spread
from cgpredict.block import Block
from cgpredict.smsp_schedule import warp_share, warp_work
from cgpredict.warp_spread import PHI, spread_work, tent


def test_tent_by_hand():
    """8 work lanes traced at 2: lane x stands at f = (x + 1/2) 2 / 8 - 1/2, clipped to
    [0, 1]: lanes 0-1 on thread 0, 2-5 between (a = 1/8, 3/8, 5/8, 7/8), 6-7 on thread 1."""
    lo, hi, a = tent(np.arange(8), 8, 2)
    assert lo.tolist() == [0, 0, 0, 0, 0, 0, 1, 1]
    assert hi.tolist() == [1, 1, 1, 1, 1, 1, 1, 1]
    assert np.allclose(a, [0, 0, 1 / 8, 3 / 8, 5 / 8, 7 / 8, 0, 0])


def test_a_coarse_1d_trace_by_hand():
    """Traced weights [1, 3] for 8 work threads, one block of 8 in warps of 2 (W = 4).
    Warp 0 (lanes 0, 1) sees only thread 0; warp 1 (lanes 2, 3) 3 with share (1/8 + 3/8) / 2
    = 1/4; warp 2 3/4; warp 3 only thread 1. Block 0's quantiles r = (w + 1/2) / 4: warp 1
    draws r = 3/8 <= 3/4 (the share of 1), warp 2 r = 5/8 > 1/4: [1, 1, 3, 3]."""
    got = spread_work(np.array([1.0, 3.0]), (2, 1), (8, 1), Block(8, 1), 2)
    assert got.tolist() == [[1.0, 1.0, 3.0, 3.0]]
    # the slowest-lane map reads the nearest traced thread: the same split here
    assert np.allclose(warp_work(np.array([1.0, 3.0]), (2, 1), (8, 1), Block(8, 1), 2), got)


def test_the_second_block_turns_its_quantiles():
    """Two blocks of 2 warps over one traced pair [0, 4] at 4 work threads a traced one
    (work 8, block 4, warps of 2): block 1's lanes 4-7 stand at f = 1/8..7/8 past thread 0...
    its warps' shares of 4 are 1/4 and 3/4 (lanes (4, 5) and (6, 7) from x = 4..7: f =
    0.625, 0.875 -> clipped at 1 for 6, 7). Its quantiles are (w + 1/2) / 2 + PHI mod 1."""
    u = np.array([0.0, 4.0])
    got = spread_work(u, (2, 1), (8, 1), Block(4, 1), 2)
    r1 = [((w + 0.5) / 2 + PHI) % 1.0 for w in range(2)]  # 0.868, 0.368
    share4 = [(0.625 + 0.875) / 2, 1.0]  # lanes 4, 5 and lanes 6, 7
    want = [4.0 if r > 1 - s else 0.0 for r, s in zip(r1, share4)]
    assert got[1].tolist() == want


@pytest.mark.parametrize("seed", range(4))
def test_the_warps_draws_keep_the_lanes_mean(seed):
    """A field of two values (0 and 1) at random traced threads, traced 16 times coarser
    than the work in each dimension (the mandelbrot's 128 x 128 of 2048 x 2048): a warp
    draws 1 with the share of its lanes' tent weights on 1s, so over the launch the warps
    drawing 1 are the lanes' summed shares over the warp size, to within the stratified
    draws' discrepancy (a block's quantiles are its W midpoints, turned from block to block
    by the golden ratio), here 2 % of the 2048 warps."""
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 2, size=(16, 16)).astype(float)
    got = spread_work(u.ravel(), (16, 16), (256, 256), Block(16, 16), 32)
    lo, hi, a = tent(np.arange(256), 256, 16)
    wx = np.zeros((256, 16))
    np.add.at(wx, (np.arange(256), lo), 1 - a)
    np.add.at(wx, (np.arange(256), hi), a)
    want = (wx @ u @ wx.T).sum() / 32  # each lane's share of 1s, in warps
    assert got.shape == (256, 8)
    assert abs(got.sum() - want) <= 0.02 * got.size


def test_a_field_alike_around_a_block_gives_its_warps_one_weight():
    """A traced field of one value: every warp draws it, and (B7)'s share is 1."""
    got = spread_work(np.full(16, 5.0), (4, 4), (64, 64), Block(32, 8), 32)
    assert np.all(got == 5.0)
    assert warp_share(got, 132, 8, 4) == 1.0


def test_quantiles_match_a_brute_force():
    """Each warp's draw is the smallest traced weight whose cumulative share of the warp's
    lanes' tent weights reaches r: a loop over warps and lanes gives the same."""
    rng = np.random.default_rng(7)
    g, w, blk, ws = (5, 3), (40, 12), Block(8, 4), 8
    u = rng.random(g[0] * g[1])
    got = spread_work(u, g, w, blk, ws)
    nbx, nby = w[0] // blk.x, w[1] // blk.y
    xl, xh, xa = tent(np.arange(w[0]), w[0], g[0])
    yl, yh, ya = tent(np.arange(w[1]), w[1], g[1])
    for b in range(nbx * nby):
        for k in range(blk.threads // ws):
            pool: dict[float, float] = {}
            for lane in range(k * ws, (k + 1) * ws):
                x = (b % nbx) * blk.x + lane % blk.x
                y = (b // nbx) * blk.y + lane // blk.x
                for ix, sx in ((xl[x], 1 - xa[x]), (xh[x], xa[x])):
                    for iy, sy in ((yl[y], 1 - ya[y]), (yh[y], ya[y])):
                        v = u[iy * g[0] + ix]
                        pool[v] = pool.get(v, 0.0) + sx * sy / ws
            r = ((k + 0.5) / (blk.threads // ws) + PHI * b) % 1.0
            cum, pick = 0.0, None
            for v in sorted(pool):
                cum += pool[v]
                if cum >= r - 1e-12:
                    pick = v
                    break
            assert got[b, k] == pytest.approx(pick if pick is not None else max(pool))


@pytest.mark.parametrize("grid, work, block, warp", [
    ((8, 8), (128, 128), Block(16, 16), 32), ((16, 4), (256, 64), Block(32, 8), 32),
    ((100, 1), (3000, 1), Block(128, 1), 32), ((33, 7), (1000, 333), Block(32, 32), 32),
    ((5, 3), (40, 12), Block(4, 4), 8)])
def test_rectangular_warps_pool_their_tents_as_the_lanes_do(grid, work, block, warp):
    """A warp of whole rows or of one row's run pools its x and y tents apart; lane by lane
    (every lane's four traced neighbours) gives the same draws, grid edges included."""
    u = np.random.default_rng(3).random(grid[0] * grid[1])
    blocks = np.arange(-(-work[0] // block.x) * -(-work[1] // block.y))
    got = warp_spread._spread_rect(u, grid, work, block, warp, [blocks])[0]
    assert np.array_equal(got, warp_spread._spread_lanes(u, grid, work, block, warp, blocks))


@pytest.mark.parametrize("grid, work, block", [
    ((32, 16), (512, 256), Block(16, 16)), ((20, 3), (1280, 180), Block(64, 2)),
    ((1024, 1), (1 << 18, 1), Block(256, 1))])
def test_columns_pooled_once_draw_as_every_run_lane_by_lane(grid, work, block):
    """spread_work pools a column's (row's) x (y) tents once for every block in it and
    each run of blocks reads its own width of them; drawing every run lane by lane, each
    lane's four traced neighbours, gives the same warps to the last bit (runs of 65,536
    lanes: several here)."""
    u = np.random.default_rng(7).integers(1, 9, grid[0] * grid[1]).astype(np.float64)
    got = spread_work(u, grid, work, block, 32)
    nb = -(-work[0] // block.x) * -(-work[1] // block.y)
    run = (1 << 16) // block.threads
    want = np.concatenate([warp_spread._spread_lanes(u, grid, work, block, 32,
                                                     np.arange(b, min(b + run, nb)))
                           for b in range(0, nb, run)])
    assert nb > run and np.array_equal(got, want)


def test_a_warp_across_rows_of_a_block_is_drawn_lane_by_lane():
    """Blocks of 48 threads: warp 1 holds the row's last 16 lanes and the next row's first
    16 (not a rectangle), so spread_work pools it lane by lane; a field alike in y gives it
    the draws of its lanes' x tents alone."""
    u = np.tile(np.array([0.0, 8.0]), 2)  # 2 x 2 traced, alike in y
    got = spread_work(u, (2, 2), (48, 4), Block(48, 2), 32)
    want = warp_spread._spread_lanes(u, (2, 2), (48, 4), Block(48, 2), 32, np.arange(2))
    assert np.array_equal(got, want) and got.shape == (2, 3)
