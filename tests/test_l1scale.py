"""L1 hits at the work size (memory/l1scale.py): hand oracles on a column walk."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.memory.l1scale import live_room, scale_l1_gathered, scale_l1_hits, sweep_growth
from cgpredict.memory.lru import CacheConfig, sector_hit_mask
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

LINE, SECTOR = 128, 32
CAP = 128  # lines of the L1 in these tests (one set, fully associative)


def _walk(rows: int, sweeps: int, again: bool = False):
    """One warp walks a column of ``rows`` rows (one 128-byte line each, its first sector)
    ``sweeps`` times; ``again``: a second load re-reads each row's sector at once."""
    addr, sid = [], []
    for _ in range(sweeps):
        for i in range(rows):
            addr.append(i * 4096)
            sid.append(0)
            if again:
                addr.append(i * 4096)
                sid.append(1)
    a = np.array(addr, np.uint64)
    s = np.array(sid, np.int64)
    ordinal = np.zeros(len(a), np.int64)  # executions of each load by the warp before
    seen = {0: 0, 1: 0}
    for t, x in enumerate(s):
        ordinal[t] = seen[int(x)]
        seen[int(x)] += 1
    return a, s, ordinal


def _scaled(a, s, ordinal, growth):
    exact = sector_hit_mask(a, CacheConfig(LINE, 1, CAP), SECTOR)
    n = len(a)
    zeros = np.zeros(n, np.int64)
    out = scale_l1_hits(a >> np.uint64(5), 2, zeros, zeros, s, ordinal, np.ones(n, bool),
                        exact, CAP, growth)
    return exact, out


def test_sweep_growth_multiplies_inner_loops_first():
    g = sweep_growth(3, ((128.0, 1024.0), (64.0, 64.0), (4.0, 8.0)))
    assert g.sid == 3
    assert g.steps == ((128, 8.0), (8192, 8.0), (32768, 16.0))


def test_column_walk_that_fits_the_trace_but_not_the_work_size_misses():
    # 64 rows: the second sweep reuses each line 63 lines later, a hit at the trace size;
    # at 512 rows (ratio 8) 63 * 8 = 504 lines lie in between, more than the 128 the L1 holds
    a, s, o = _walk(64, 2)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 512.0),)),))
    assert exact[:64].sum() == 0 and exact[64:].all()
    assert not out.any()


def test_column_walk_that_still_fits_keeps_its_hits():
    # 96 rows at the work size: 63 * 1.5 = 94.5 lines < 128, every second sweep still hits
    a, s, o = _walk(64, 2)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 96.0),)),))
    assert np.array_equal(out, exact)


def test_reuse_inside_a_sweep_keeps_its_hit():
    # the second load re-reads the sector the first just fetched: no sweep in between (its
    # own previous execution precedes the first load), a hit at every size
    a, s, o = _walk(64, 2, again=True)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 512.0),)),
                                   sweep_growth(1, ((64.0, 512.0),))))
    again = s == 1
    assert exact[again].all() and out[again].all()
    assert not out[~again].any()  # the first load's second sweep: 63 lines * 8 apart


def test_no_growth_is_the_exact_analysis():
    a, s, o = _walk(64, 2)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 64.0),)),))
    assert np.array_equal(out, exact)


COLSWEEP = """#include <stdio.h>
#ifndef N
#define N 64
#endif
static float A[N][N];
static float w[N];
int main(int argc, char **argv)
{
  int sweeps = argc > 5 ? 3 : 2;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (float)(i + j) / N;
#pragma cgp kernel colsweep grid=1
  for (int j = 0; j < N; j++) {
    float s = 0.0f;
    for (int r = 0; r < sweeps; r++)
      for (int i = 0; i < N; i++)
        s += A[i][j] * (float)(r + 1);
    w[j] = s;
  }
  printf("%f\\n", w[N - 1]);
  return 0;
}
"""


@pytest.mark.usefixtures("compiler")
@pytest.mark.parametrize(("work", "hit"), [(64, 0.5), (128, 0.5), (2048, 0.0)])
def test_column_swept_twice_end_to_end(tmp_path, work, hit) -> None:
    """Thread j sums column j of A[N][N] twice, traced at N=64. A warp reads one 128-B line
    a row (4 sectors, its first read a miss), so the second sweep finds the column in the
    L1 iff the SM's column lines fit: at N=64 one block of 2 warps, 64 rows x 2 lines = 128
    lines; at 128, 4 warps, 512 lines; at 2048 (8 blocks of 256, one an SM) 8 warps x 2048
    rows = 16384 lines, more than the H100's 2048-line L1: the second sweep misses too."""
    src = tmp_path / "colsweep.c"
    src.write_text(COLSWEEP)
    opts = RunOptions(work_sizes={"N": work}, trace_sizes={"N": 64}, block=Block(256, 1))
    with prepare(src, opts) as prep:
        k = prep.analyze(dataclasses.replace(opts, device="h100")).kernels[0]
    # the coalesced pattern holds the loads' warp instructions and a few others (0.498 at 64:
    # 128 hits of 257): half of them hit while the column fits, none once it does not
    assert k.profile.coal.l1_hit_fraction == pytest.approx(hit, abs=0.005)


def test_keep_matches_a_brute_force_search():
    """_keep (the CSR of each (warp, load)'s accesses, by a counting sort): per reuse, the
    gap in executions since the reusing load's last access at or before the previous use
    (plus, eq. (L1g), the previous user's executions after it where that is the same warp's
    other load and the reusing load had not run), its growth and the capacity test, as a
    scan over all accesses finds them."""
    from cgpredict.memory.l1scale import _keep

    rng = np.random.default_rng(11)
    n, n_sids = 3000, 4
    prev = np.array([rng.integers(-1, t) if t else -1 for t in range(n)], np.int64)
    dist = rng.integers(-1, 60, n).astype(np.int64)
    warp = rng.integers(0, 9, n).astype(np.int64)
    sid = rng.integers(0, n_sids, n).astype(np.int64)
    ordinal = rng.integers(0, 40, n).astype(np.int64)
    thr = np.array([[2, 8], [3, 1 << 62], [1, 5], [4, 9]], np.int64)
    grow = np.array([[1.5, 3.0], [2.0, 1.0], [1.2, 4.0], [2.5, 2.5]])
    want = np.ones(n, bool)
    for t in range(n):
        if prev[t] < 0 or dist[t] < 0:
            continue
        mine = [s for s in range(prev[t] + 1) if warp[s] == warp[t] and sid[s] == sid[t]]
        gap = ordinal[t] - (ordinal[mine[-1]] if mine else -1)
        p = prev[t]
        if not mine and warp[p] == warp[t] and sid[p] != sid[t]:  # (L1g): the rest of p's walk
            theirs = [s for s in range(t) if warp[s] == warp[p] and sid[s] == sid[p]]
            gap += ordinal[theirs[-1]] - ordinal[p]
        g = 1.0
        for i in range(thr.shape[1]):
            if gap >= thr[sid[t], i]:
                g = grow[sid[t], i]
        want[t] = dist[t] * g < 40
    assert (_keep(prev, dist, warp, sid, ordinal, thr, grow, 40) == want).all()


def test_loads_by_sm_is_the_stable_sort_of_their_sms():
    """_loads_by_sm (a counting sort): the loads' positions grouped by SM, in issue order
    within each, as a stable argsort of the loads' SMs orders them; no load, none."""
    from cgpredict.memory.l1scale import _loads_by_sm

    rng = np.random.default_rng(7)
    sm = rng.integers(0, 13, 5000).astype(np.int64)
    loads = rng.random(5000) < 0.7
    idx = np.flatnonzero(loads)
    assert (_loads_by_sm(sm, loads) == idx[np.argsort(sm[idx], kind="stable")]).all()
    assert len(_loads_by_sm(sm, np.zeros(5000, np.bool_))) == 0


@pytest.mark.parametrize("spread", [1 << 12, 1 << 40, 1 << 50])
def test_sm_ids_are_dense_ids_of_the_sm_keyed_sectors(spread):
    """_sm_ids of a stream grouped by SM: the ids (and counts) dense_ids gives the keys
    SM << 44 | sector and those keys >> the line shift, whether the sectors span few values
    (the tables), many (dense_ids) or reach bit 44 (dense_ids of the keys as they were)."""
    from cgpredict.hashing import dense_ids
    from cgpredict.memory.l1scale import _loads_by_sm, _sm_ids

    rng = np.random.default_rng(5)
    n = 20000
    sm = rng.integers(0, 11, n).astype(np.int64)
    base = rng.integers(0, spread, 40).astype(np.uint64)
    keys = base[rng.integers(0, 40, n)] + rng.integers(0, 64, n).astype(np.uint64)
    order = _loads_by_sm(sm, rng.random(n) < 0.8)
    sm_o, keys_o = sm[order], keys[order]
    keyed = (sm_o.astype(np.uint64) << np.uint64(44)) | keys_o
    units, n_units, lines, n_lines = _sm_ids(sm_o, keys_o, 2)
    want_u, vals_u = dense_ids(keyed)
    want_l, vals_l = dense_ids(keyed, 2)
    assert (units == want_u).all() and n_units == len(vals_u)
    assert (lines == want_l).all() and n_lines == len(vals_l)
    empty = _sm_ids(sm_o[:0], keys_o[:0], 2)
    assert len(empty[0]) == len(empty[2]) == empty[1] == empty[3] == 0


def test_grouped_distances_are_the_whole_stream_reuse_distances():
    """_grouped_distances (a Fenwick tree per SM's run): the previous uses and distances
    reuse._reuse_distances finds over the whole stream grouped by SM, and a brute-force
    count of the distinct other lines in between on a few accesses."""
    from cgpredict.memory.l1scale import _grouped_distances, _loads_by_sm, _sm_ids
    from cgpredict.memory.reuse import _reuse_distances

    rng = np.random.default_rng(3)
    n = 6000
    sm = rng.integers(0, 7, n).astype(np.int64)
    keys = rng.integers(0, 300, n).astype(np.uint64)
    order = _loads_by_sm(sm, rng.random(n) < 0.9)
    sm_o, keys_o = sm[order], keys[order]
    units, n_units, lines, n_lines = _sm_ids(sm_o, keys_o, 2)
    prev, dist = _grouped_distances(units, lines, sm_o, n_units, n_lines)
    want_prev, want_dist = _reuse_distances(units, lines, n_units, n_lines)
    assert (prev == want_prev).all() and (dist == want_dist).all()
    for t in rng.integers(0, len(order), 200):
        p = prev[t]
        if p < 0:
            continue
        between = {int(x) for x in lines[p + 1:t]} - {int(lines[t])}
        assert dist[t] == len(between) and units[p] == units[t]
    assert [len(x) for x in _grouped_distances(units[:0], lines[:0], sm_o[:0], 0, 0)] == [0, 0]


def test_live_room_is_littles_law_by_hand():
    """Four units read round robin R = 5 times on one SM: 16 reuses of interval 4 over 20
    accesses hold 3.2 units on average (4 (R - 1) / R); a second SM's run is its own."""
    prev = np.array([-1] * 4 + list(range(16)))
    sm = np.zeros(20, np.int64)
    room = live_room(prev, np.ones(20, bool), sm)
    assert np.allclose(room, 3.2)
    both = live_room(np.r_[prev, np.where(prev >= 0, prev + 20, -1)], np.ones(40, bool),
                     np.r_[sm, sm + 1])
    assert np.allclose(both, 3.2)
    assert np.allclose(live_room(prev, np.zeros(20, bool), sm), 0.0)


def test_gather_hit_needs_the_room_the_kept_loads_leave():
    """(LP2v) by hand: sectors 100-103 (load 0, kept) read twice around a gather's sector
    500 (load 1, growth 2): its reuse sees 4 distinct lines, 8 grown. Capacity 10 keeps it
    by (LP2) alone; the kept reuses (4 of interval 5 over 10 accesses) hold 2 units, leaving
    8, so it misses; capacity 11 leaves 9 and keeps it."""
    keys = np.array([100, 101, 102, 103, 500] * 2, np.uint64)
    sid = np.array([0, 0, 0, 0, 1] * 2)
    sm = np.zeros(10, np.int64)
    loads = np.ones(10, bool)
    hits = np.array([False] * 5 + [True] * 5)
    out = scale_l1_gathered(keys, 0, sm, sid, loads, hits, 10, ((1, 2.0),))
    assert out.tolist() == [False] * 5 + [True] * 4 + [False]
    out = scale_l1_gathered(keys, 0, sm, sid, loads, hits, 11, ((1, 2.0),))
    assert out.tolist() == [False] * 5 + [True] * 5


def _two_passes(elems: int = 256):
    """One lane walks its row of ``elems`` 4-B floats (32 B a sector: 8 reads each) with
    load 0, then walks it again with load 1 (softmax's max pass, then its sum pass)."""
    a = np.array([4 * j for j in range(elems)] * 2, np.uint64)
    s = np.array([0] * elems + [1] * elems, np.int64)
    ordinal = np.array(list(range(elems)) * 2, np.int64)
    return a, s, ordinal


@pytest.mark.parametrize(("work", "kept"), [(256 * 8, 256), (256 * 32, 256 - 32)])
def test_second_pass_of_another_load_grows_with_the_row(work, kept):
    """(L1g), (L1u) by hand: a 1-KB row (8 lines, 32 sectors) fits the 128-line L1 at the
    trace size, so pass 2 hits all 256 reads. Its first read of a sector reuses pass 1's last
    read of it, 249 executions of the two loads later (the 248 - 8 m reads pass 1 made after
    it and pass 2's 8 m + 1) against the sweep of 256 less the 8 reads a sector lasts
    (unit_runs), so that reuse spans the sweep and grows by the row's ratio: about 7 lines
    in between, 56 at 8x (kept), 224 at 32x (more than 128: each of the 32 sectors' first
    read misses; the 7 reads after it hit pass 2's own fill)."""
    a, s, o = _two_passes()
    growth = tuple(sweep_growth(i, ((256.0, float(work)),)) for i in (0, 1))
    exact, out = _scaled(a, s, o, growth)
    assert exact[256:].all() and exact[:256].sum() == 256 - 32
    assert out[256:].sum() == kept
    if kept < 256:
        assert not out[256::8].any() and out[256:].reshape(32, 8)[:, 1:].all()


def test_unit_runs_count_the_reads_a_unit_lasts():
    """unit_runs by hand: a lane walking 4-B floats stays 8 reads on a 32-B sector; a warp
    whose 32 lanes read one 128-B line an execution (4 new sectors each time) 1; a load
    read once or not at all 1."""
    from cgpredict.memory.l1scale import unit_runs

    lane = np.array([4 * j for j in range(64)], np.uint64) >> np.uint64(5)
    coal = (np.repeat(np.arange(16, dtype=np.uint64) * 4, 4)
            + np.tile(np.arange(4, dtype=np.uint64), 16))
    keys = np.r_[lane, coal, np.array([999], np.uint64)]
    sid = np.r_[np.zeros(64, np.int64), np.ones(64, np.int64), [2]]
    warp = np.zeros(len(keys), np.int64)
    loads = np.ones(len(keys), bool)
    assert unit_runs(keys, warp, sid, loads, 4).tolist() == [8, 1, 1, 1]
