"""The L1 shared by the co-resident blocks of a 1-D or 2-D grid (memory/l1share.py): partners by
brute-force enumeration of round-robin dispatch, shared lines by set intersection, and the
capacity share against a brute-force LRU simulation of one SM of the work-size grid."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.memory.l1share import (
    Partner,
    block_lines,
    l1_sharers,
    partners,
    shared_blocks,
    shared_fraction,
    traced_offset,
)
from cgpredict.memory.lru import CacheConfig, hit_mask
from cgpredict.warps import EVENT_DTYPE, WARP_SIZE, WarpTrace


def _held(n: int, sms: int, k: int) -> list[list[int]]:
    """The groups of blocks one SM holds at once: waves of k * sms consecutive blocks of n,
    dealt round robin (block b of a wave to SM b mod sms)."""
    groups = []
    for w0 in range(0, n, k * sms):
        for s in range(sms):
            g = [w0 + s + i * sms for i in range(k) if s + i * sms < k * sms and
                 w0 + s + i * sms < n]
            if g:
                groups.append(g)
    return groups


def _brute_partners(gx: int, gy: int, sms: int, k: int) -> Counter:
    """Every block and every other block of its SM group: (dx, dy) -> count."""
    out: Counter = Counter()
    for g in _held(gx * gy, sms, k):
        for b in g:
            for p in g:
                if p != b:
                    out[(p % gx - b % gx, p // gx - b // gx)] += 1
    return out


@pytest.mark.parametrize("gx,gy,sms,k", [(32, 128, 132, 8), (128, 128, 132, 2), (8, 64, 132, 4),
                                          (16, 4, 4, 4), (5, 7, 3, 3), (300, 2, 132, 3)])
def test_partners_match_round_robin_enumeration(gx, gy, sms, k):
    got = {(p.dx, p.dy): p.weight for p in partners(gx, gy, sms, k)}
    want = {key: c / (gx * gy) for key, c in _brute_partners(gx, gy, sms, k).items()}
    assert got.keys() == want.keys()
    for key, w in want.items():
        assert got[key] == pytest.approx(w)


def test_partners_by_hand():
    """4 x 3 blocks, 2 SMs, 2 blocks each: waves of 4 blocks, SM 0 holds the 1st and 3rd, so
    every block's partner is 2 columns away, one way or the other. 3 x 4: the partner of
    block 1, (1, 0), is block 3, (0, 1): one column left, one row down (wrapped)."""
    assert partners(4, 3, 2, 2) == (Partner(dx=-2, dy=0, weight=0.5),
                                    Partner(dx=2, dy=0, weight=0.5))
    assert {(p.dx, p.dy): p.weight * 12 for p in partners(3, 4, 2, 2)} == {
        (-2, 0): 2, (-1, 1): 4, (1, -1): 4, (2, 0): 2}
    assert partners(32, 128, 132, 1) == ()


def test_traced_offset():
    assert traced_offset(0, 4) == 0
    assert traced_offset(1, 4) == 1
    assert traced_offset(-3, 4) == -3
    assert traced_offset(33, 8) == 7  # past the traced grid: its farthest, still not a neighbour
    assert traced_offset(-28, 4) == -3
    assert traced_offset(4, 2) is None  # only neighbours there: could share a halo, unlike d
    assert traced_offset(4, 1) is None


def _gemm_like_pairs(nbx: int, nby: int, a_lines: int, b_lines: int) -> np.ndarray:
    """(block, line) pairs of a GEMM-like grid: block (bx, by) reads ``a_lines`` lines of its
    row of A and ``b_lines`` of its column of B."""
    rows = []
    for by in range(nby):
        for bx in range(nbx):
            b = by * nbx + bx
            rows += [(b, 1000 * by + i) for i in range(a_lines)]
            rows += [(b, 10**6 + 1000 * bx + i) for i in range(b_lines)]
    return np.array(sorted(rows), np.int64)


def _brute_shared(pairs: np.ndarray, nbx: int, nby: int, ex: int, ey: int) -> float:
    sets: dict[int, set] = {}
    for b, line in pairs.tolist():
        sets.setdefault(b, set()).add(line)
    num = den = 0
    for b, lines in sets.items():
        px, py = b % nbx + ex, b // nbx + ey
        if 0 <= px < nbx and 0 <= py < nby:
            num += len(lines & sets.get(py * nbx + px, set()))
            den += len(lines)
    return num / den if den else 0.0


@pytest.mark.parametrize("ex,ey", [(0, 1), (1, 0), (2, 3), (-1, 2), (3, 0), (0, -2)])
def test_shared_fraction_is_the_set_intersection(ex, ey):
    pairs = _gemm_like_pairs(4, 6, 3, 5)
    got = shared_fraction(pairs, 4, 6, ex, ey)
    assert got == pytest.approx(_brute_shared(pairs, 4, 6, ex, ey))
    # by hand: a row partner shares the 3 A lines of 8, a column partner the 5 B lines
    assert shared_fraction(pairs, 4, 6, 1, 0) == pytest.approx(3 / 8)
    assert shared_fraction(pairs, 4, 6, 0, 1) == pytest.approx(5 / 8)
    assert shared_fraction(pairs, 4, 6, 1, 1) == 0.0


def test_block_lines_from_warps():
    """Two blocks of two warps (64 threads each): loads of distinct lines per block, a store
    that must not count, and a line both blocks load."""
    rows = []

    def inst(warp, k, sid, addrs):
        for lane, a in enumerate(addrs):
            rows.append((warp, k, lane, sid, warp * WARP_SIZE + lane, a))

    inst(0, 0, 0, [0] * 32)  # block 0: line 0
    inst(1, 0, 0, [128 + 4 * t for t in range(32)])  # block 0: line 1
    inst(1, 1, 1, [8192] * 32)  # a store: not a line of the L1
    inst(2, 0, 0, [256] * 32)  # block 1: line 2
    inst(3, 0, 0, [0] * 32)  # block 1: line 0 again
    rows.sort()
    ev = np.array(rows, EVENT_DTYPE)
    new = np.r_[True, (ev["warp"][1:] != ev["warp"][:-1]) | (ev["k"][1:] != ev["k"][:-1])]
    wt = WarpTrace.from_records(1, Block(64), 128, 1, ev, np.flatnonzero(new), 128, 4)
    pairs = block_lines(wt, np.array([True, False]), 128)
    got = {(int(b), int(x)) for b, x in pairs}
    # lines renumbered densely: 0 -> 0, 128 -> 1, 256 -> 2
    assert got == {(0, 0), (0, 1), (1, 0), (1, 2)}


def _sm_hit_rate(lines_of, gx: int, gy: int, sms: int, k: int, capacity: int, steps: int):
    """Brute force: on every SM, the blocks it holds at once (``_held``) take turns, one step
    each, through one fully associative LRU of ``capacity`` lines; the hit rate of all their
    accesses after the first half of the steps."""
    hits_all, n_all = 0, 0
    for held in _held(gx * gy, sms, k):
        seq, step = [], []
        for s in range(steps):
            for b in held:
                for line in lines_of(b % gx, b // gx, s):
                    seq.append(line)
                    step.append(s)
        hits = hit_mask(np.array(seq, np.uint64), CacheConfig(128, 1, capacity))
        late = np.array(step) >= steps // 2
        hits_all += int(hits[late].sum())
        n_all += int(late.sum())
    return hits_all / n_all


def _alone_hit_rate(lines_of, capacity: float, steps: int):
    """The model: block 0 alone in its share of the L1 (``capacity`` lines, rounded)."""
    seq, step = [], []
    for s in range(steps):
        for line in lines_of(0, 0, s):
            seq.append(line)
            step.append(s)
    hits = hit_mask(np.array(seq, np.uint64), CacheConfig(128, 1, max(int(round(capacity)), 1)))
    return hits[np.array(step) >= steps // 2].mean()


def _pairs_of(lines_of, nbx: int, nby: int, steps: int) -> np.ndarray:
    rows = {(by * nbx + bx, line) for by in range(nby) for bx in range(nbx)
            for s in range(steps) for line in lines_of(bx, by, s)}
    return np.array(sorted(rows), np.int64)


@pytest.mark.parametrize("tile", [4, 8, 15, 16, 17, 24, 40])
def test_private_tiles_hold_a_share_of_the_capacity(tile):
    """Blocks that share no lines, each sweeping its own tile of ``tile`` lines again and
    again: k = 4 of them on an SM of 64 lines hit exactly when the block alone would in 16."""
    gx, gy, sms, k, cap, steps = 16, 8, 4, 4, 64, 12

    def lines_of(bx, by, s):
        return [(by * gx + bx) * 10_000 + i for i in range(tile)]

    n = _sm_hit_rate(lines_of, gx, gy, sms, k, cap, steps)
    sharers = l1_sharers(_pairs_of(lines_of, 4, 4, 1), 4, 4, partners(gx, gy, sms, k))
    assert sharers == pytest.approx(4.0)  # 8 full waves: three partners for every block
    assert _alone_hit_rate(lines_of, cap / sharers, steps) == pytest.approx(n)
    assert n == (1.0 if tile <= 16 else 0.0)


@pytest.mark.parametrize("tile", [3, 5, 6])
def test_row_partners_share_their_row(tile):
    """A grid 16 blocks wide with 4 SMs and 4 blocks each: an SM's blocks lie in one row of
    blocks (4 columns apart). Each step a block reads the next line of its row's tile of
    ``tile`` lines (shared along the row) and of a private tile as long, cycling: half of a
    partner's lines are the block's, so the SM holds 1 + 3 x 1/2 = 2.5 blocks' worth and the
    block alone in 32 / 2.5 lines hits as all four do in 32 ((2 + 3) x tile <= 32). Past
    that the SM still hits the row lines a partner fetched just before, which the block alone
    cannot: a share of the capacity is exact only for the lines partners do not share."""
    gx, gy, sms, k, cap, steps = 16, 4, 4, 4, 32, 40

    def lines_of(bx, by, s):
        return [by * 1000 + s % tile, 10**6 + (by * gx + bx) * 100 + s % tile]

    n = _sm_hit_rate(lines_of, gx, gy, sms, k, cap, steps)
    sharers = l1_sharers(_pairs_of(lines_of, 8, 2, tile), 8, 2, partners(gx, gy, sms, k))
    assert sharers == pytest.approx(2.5)
    assert _alone_hit_rate(lines_of, cap / sharers, steps) == pytest.approx(n)
    assert n == 1.0


def test_l1_config_gives_a_traced_block_its_share_of_the_ways():
    """H100: 256 KB held as 32-B sectors (eq. (L1a)), fully associative: 2048 line ways of
    4 sectors, 8192 sector ways of one set. A traced block alone on its L1 with 4 blocks'
    worth of lines on the SM keeps 512 line ways (2048 sectors); two traced blocks already on
    one L1 (264 traced blocks over 132 SMs) keep 1024 (4096); never more than all."""
    from types import SimpleNamespace

    from cgpredict.devices import load_device
    from cgpredict.kernel.region import _l1_config

    h100 = load_device("h100")
    for blocks, sharers, ways in ((64, 4.0, 2048), (264, 4.0, 4096), (64, 1.0, 8192),
                                  (264, 1.5, 8192), (64, 7.78, 1053)):  # 8192 / 7.78
        cfg = _l1_config(h100, SimpleNamespace(blocks=blocks), Block(32, 8), 1, (), sharers)
        assert (cfg.cache.line_bytes, cfg.cache.sets, cfg.cache.ways) == (32, 1, ways)
    assert _l1_config(load_device("tk1"), SimpleNamespace(blocks=64), Block(32, 8)) is None


@pytest.mark.parametrize("window, sweeps_hit", [(12, False), (8, True)])
def test_banded_1d_blocks_hold_a_share_not_their_trace_neighbours(window, sweeps_hit):
    """A 1-D grid of 64 blocks, 8 SMs, 4 blocks an SM (eq. (L1p)): block b sweeps the
    ``window`` lines from 2 b again and again (a banded gather: neighbours overlap). An SM's
    blocks are 8 apart, 16 lines, past the window: they share nothing, the SM of 40 lines
    holds 4 x ``window`` lines or thrashes (12: 48 > 40, every sweep misses; 8: 32, all hit),
    and block 0 alone in 40 / 4 lines does the same. A trace of 16 blocks packed 4 an L1
    (blocks 4 apart, 8 lines) would put 12 + 3 x 8 = 36 <= 40 lines on it and hit."""
    gx, sms, k, cap, steps = 64, 8, 4, 40, 10

    def lines_of(bx, by, s):
        return [2 * bx + i for i in range(window)]

    n = _sm_hit_rate(lines_of, gx, 1, sms, k, cap, steps)
    sharers = l1_sharers(_pairs_of(lines_of, 16, 1, 1), 16, 1, partners(gx, 1, sms, k))
    assert sharers == pytest.approx(4.0)
    assert _alone_hit_rate(lines_of, cap / sharers, steps) == pytest.approx(n)
    assert n == (1.0 if sweeps_hit else 0.0)
    packed = _sm_hit_rate(lines_of, 16, 1, 4, k, cap, steps)  # the trace's own packing
    assert packed == 1.0
    # region._l1_placement's test: packed 4 apart a block shares 4 of its 12 lines with a
    # neighbour on its L1 (3 of 4 blocks have one each side: 1.5 x 1/3), the GPU's none
    pairs = _pairs_of(lines_of, 16, 1, 1)
    s_t = shared_blocks(pairs, 16, 1, partners(16, 1, 4, k))
    s_w = shared_blocks(pairs, 16, 1, partners(gx, 1, sms, k))
    assert (s_t, s_w) == (pytest.approx(0.5 if window == 12 else 0.0), 0.0)


def test_1d_blocks_that_share_every_line_stay_packed():
    """nbody's pos[j]: every block reads line s at step s. On the GPU an SM's 4 blocks in
    step fetch it once (3 of 4 hit); a block alone in its L1 fetches every line (0 hits);
    the trace packed 4 an L1 shares as the GPU does, S_t = S_w = 3 blocks' worth, so
    region._l1_placement keeps the packing (|S_t - S_w| <= S_w)."""
    gx, sms, k, cap, steps = 64, 8, 4, 40, 20

    def lines_of(bx, by, s):
        return [s]

    gpu = _sm_hit_rate(lines_of, gx, 1, sms, k, cap, steps)
    assert gpu == pytest.approx(0.75)
    assert _sm_hit_rate(lines_of, 16, 1, 4, k, cap, steps) == pytest.approx(gpu)
    assert _alone_hit_rate(lines_of, cap, steps) == 0.0
    pairs = _pairs_of(lines_of, 16, 1, steps)
    s_t = shared_blocks(pairs, 16, 1, partners(16, 1, 4, k))
    s_w = shared_blocks(pairs, 16, 1, partners(gx, 1, sms, k))
    assert s_t == pytest.approx(3.0) and s_w == pytest.approx(3.0)
