"""Tests of cgpredict.lane_trips (a warp runs its slowest lane's trips, eqs. (D1)-(D3)):
hand-derived factors, a brute-force reference over random trips, the span rule (D2), and the
runtime's trip records of a traced C kernel whose lanes' trips are known by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cgpredict.instrument.records import LoopInfo

from cgpredict.block import Block
from cgpredict.frontend.tracefile import TRIP_DTYPE
from cgpredict.frontend.tracefile_format import NO_INDEX
from cgpredict.frontend.tracer import TraceOptions, trace_program
from cgpredict.lane_trips import (
    LaneSpan,
    lane_records,
    launch_trip_factors,
    per_warp,
    warp_span,
    warp_trip_factors,
)


def records(rows) -> np.ndarray:
    """TRIP_DTYPE records from (loop, trips, index1, index2) tuples of launch row 0."""
    return np.array([(0, lp, n, i1, i2) for lp, n, i1, i2 in rows], TRIP_DTYPE)


def test_hand_derived_1d_factor():
    """8 lanes of a 1-D grid, trips 1..8, groups of 4: the warps run 4 and 8 iterations, 4
    lanes each: 48 lane slots against 36 lane iterations, F = 4/3."""
    t = records([(1, n, x, NO_INDEX) for x, n in enumerate(range(1, 9))])
    assert warp_trip_factors(t, 1, LaneSpan(4, 1), (8, 1)) == {1: pytest.approx(4 / 3)}
    assert warp_trip_factors(t, 1, LaneSpan(1, 1), (8, 1)) == {}  # one lane a group: the mean


def test_equal_trips_and_depth2_records_under_a_2d_grid():
    """Lanes that run the same trips give no factor; a depth-2 loop's records (index2 is
    NO_INDEX) belong to the mapped x loop of a 2-D grid and are ignored there."""
    t = records([(2, 5, y, x) for y in range(4) for x in range(8)]
                + [(1, 8, y, NO_INDEX) for y in range(4)])
    assert warp_trip_factors(t, 2, LaneSpan(8, 4), (8, 4)) == {}


def test_entries_align_by_ordinal():
    """Lane 0 enters the loop twice (3 then 1 iterations), lane 1 once (2): the warp runs
    entry 0 for max(3, 2) and entry 1 for max(1, 0): 2 lanes x 4 = 8 slots over 6."""
    t = records([(3, 3, 0, 0), (3, 1, 0, 0), (3, 2, 0, 1)])
    assert warp_trip_factors(t, 2, LaneSpan(2, 1), (2, 1)) == {3: pytest.approx(8 / 6)}


def brute_force(trips: np.ndarray, X: int, Y: int, kx: int, ky: int) -> float:
    """(D1) by loops: trips[y, x, k] of every lane's k-th entry (0: none)."""
    warp = 0
    for y0 in range(0, Y, ky):
        for x0 in range(0, X, kx):
            g = trips[y0:y0 + ky, x0:x0 + kx]
            warp += g.shape[0] * g.shape[1] * int(g.max(axis=(0, 1)).sum())
    return warp / int(trips.sum())


@pytest.mark.parametrize("seed, kx, ky", [(0, 2, 1), (1, 4, 2), (2, 3, 3), (3, 32, 1)])
def test_brute_force_reference(seed, kx, ky):
    rng = np.random.default_rng(seed)
    X, Y, K = 13, 7, 3
    trips = rng.integers(1, 40, (Y, X, K))
    entries = rng.integers(1, K + 1, (Y, X))  # lanes enter 1..K times
    for k in range(K):
        trips[:, :, k][entries <= k] = 0
    t = records([(4, int(trips[y, x, k]), y, x) for y in range(Y) for x in range(X)
                 for k in range(entries[y, x])])
    got = warp_trip_factors(t, 2, LaneSpan(kx, ky), (X, Y))
    assert got[4] == pytest.approx(brute_force(trips, X, Y, kx, ky), rel=1e-12)


def test_span_rule():
    """(D2): the window is the warp's shape in trace lanes (wx = min(32, bx), wy = 32 / wx
    rows), at most the traced lanes along each axis: a 32x32 block's warp is 32 lanes of a
    row, a 16x16 block's 16 x 2, whatever the work size (eq. (D4) scales the spacing)."""
    assert warp_span(Block(32, 32), (128, 128)) == LaneSpan(32, 1)
    assert warp_span(Block(32, 8), (128, 128)) == LaneSpan(32, 1)
    assert warp_span(Block(16, 16), (128, 128)) == LaneSpan(16, 2)
    assert warp_span(Block(16, 16), (64, 64)) == LaneSpan(16, 2)
    assert warp_span(Block(256, 1), (1024, 1)) == LaneSpan(32, 1)
    assert warp_span(Block(8, 8), (64, 64)) == LaneSpan(8, 4)
    assert warp_span(Block(128, 1), (12, 1)) == LaneSpan(12, 1)  # fewer traced lanes
    assert warp_span(Block(64, 4), (0, 0)) == LaneSpan(1, 1)


def test_per_warp_takes_the_innermost_factor():
    loops = (LoopInfo(0, 0, "f", "a", -1, 1, 1, True, (1, 2, 3)),
             LoopInfo(1, 0, "f", "b", 0, 2, 2, True, (2, 3)),
             LoopInfo(2, 0, "f", "c", 1, 3, 3, True, (3,)))
    got = per_warp({0: 1.0, 1: 2.0, 2: 4.0, 3: 8.0}, loops, {1: 1.5, 2: 2.0})
    assert got == {0: 1.0, 1: 2.0, 2: 6.0, 3: 16.0}
    assert per_warp({0: 1.0}, loops, {}) == {0: 1.0}


KERNEL = """
#ifndef N
#define N 64
#endif
static float a[N];
int main(void) {
#pragma cgp kernel
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int j = 0; j <= i % 4; j++)
      s += (float)j;
    a[i] = s;
  }
  return a[3] == 6.0f ? 0 : 1;
}
"""


def test_traced_trips_by_hand(tmp_path: Path, compiler):
    """Lane i of the 1-D kernel runs i % 4 + 1 iterations of its inner loop: one record per
    lane, with its index; a warp of 32 lanes runs 4 for a mean of 2.5 (F = 1.6)."""
    src = tmp_path / "k.c"
    src.write_text(KERNEL)
    tr = trace_program(src, tmp_path / "k.cgptrace", TraceOptions())
    inner = [lp.id for lp in tr.header.loops if lp.depth == 2]
    t = tr.trips[np.isin(tr.trips["loop"], inner)]
    assert sorted(t["index1"].tolist()) == list(range(64))
    assert (t["trips"] == t["index1"] % 4 + 1).all()
    assert (t["index2"] == NO_INDEX).all()
    f = warp_trip_factors(tr.trips, 1, LaneSpan(32, 1), (64, 1))
    assert f == {inner[0]: pytest.approx(1.6)}


def launch_records(launches) -> np.ndarray:
    """TRIP_DTYPE records of several launches: ``launches`` maps a row to its
    (loop, trips, index1, index2) tuples."""
    return np.array([(row, lp, n, i1, i2) for row, recs in launches.items()
                     for lp, n, i1, i2 in recs], TRIP_DTYPE)


def per_launch(t: np.ndarray, grid: int, spans) -> dict[int, dict[int, float]]:
    """The reference path: warp_trip_factors on each launch's records alone."""
    return {row: warp_trip_factors(t[t["row"] == row], grid, span, traced)
            for row, (span, traced) in spans.items()}


def test_one_pass_equals_per_launch_on_an_offset_grid():
    """GRAMSCHMIDT's gs_k3 shape: launch k runs lanes j = k+1..N-1 (x absolute, while the
    traced grid X = N-1-k counts from 0: _group_lanes' n_g = clip(X - gx kx, 1, kx)), lane
    j's inner loop M iterations in launches 0-2. By hand at span 4, N = 8: launch 0 (lanes
    1..7, X = 7) groups {1,2,3} counted 4, {4..7} counted 3: 7 M slots over 7 M, no factor;
    launch 1 (2..7, X = 6) 4 + 2, none; launch 2 (3..7, X = 5) 4 + 1, none. Lanes that
    differ, j % 3 + 1 iterations: launch 3 (2..7, X = 6): {2,3} 4 x 3 + {4..7} 2 x 3 = 18
    over 3+1+2+3+1+2 = 12, F = 1.5; launch 4 (4..7, X = 4): {4..7} counted as 1 lane
    (clip(4 - 4, 1, 4)), 3 slots over 8: no factor (the quirk of absolute x, kept)."""
    N, M = 8, 5
    launches = {k: [(7, M, j, NO_INDEX) for j in range(k + 1, N)] for k in range(3)}
    launches[3] = [(7, j % 3 + 1, j, NO_INDEX) for j in range(2, N)]
    launches[4] = [(7, j % 3 + 1, j, NO_INDEX) for j in range(4, N)]
    t = launch_records(launches)
    spans = {k: (LaneSpan(4, 1), (X, 1)) for k, X in enumerate((7, 6, 5, 6, 4))}
    got = launch_trip_factors(lane_records(t, 1), spans)
    assert got == per_launch(t, 1, spans)
    assert got == {0: {}, 1: {}, 2: {}, 3: {7: pytest.approx(18 / 12, rel=1e-12)}, 4: {}}


def test_one_pass_equals_per_launch_mandelbrot_like():
    """A 2-D grid whose lanes escape after data-dependent trips (mandelbrot's inner loop):
    random trips per lane, several launches with spans of their own (one of a single lane:
    no factor), brute force (eq. (D1) by loops over the groups) and the per-launch path."""
    rng = np.random.default_rng(7)
    X, Y = 12, 6
    launches, spans, trips = {}, {}, {}
    for row, span in enumerate([LaneSpan(2, 1), LaneSpan(4, 2), LaneSpan(1, 1), LaneSpan(3, 3)]):
        trips[row] = rng.integers(1, 60, (Y, X, 1))
        launches[row] = [(5, int(trips[row][y, x, 0]), y, x) for y in range(Y) for x in range(X)]
        spans[row] = (span, (X, Y))
    t = launch_records(launches)
    got = launch_trip_factors(lane_records(t, 2), spans)
    assert got == per_launch(t, 2, spans)
    assert got[2] == {}
    for row in (0, 1, 3):
        s = spans[row][0]
        assert got[row][5] == pytest.approx(brute_force(trips[row], X, Y, s.x, s.y), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_one_pass_equals_per_launch_random(seed):
    """Random launches of a 2-D grid with offset lanes, several loops, several entries a
    lane and records of the mapped x loop (index2 NO_INDEX, dropped): factor for factor,
    bit for bit, the per-launch path."""
    rng = np.random.default_rng(seed)
    launches, spans = {}, {}
    for row in rng.choice(40, 6, replace=False):
        x0, y0 = rng.integers(0, 9, 2)
        recs = [(1, 3, y, NO_INDEX) for y in range(y0, y0 + 3)]
        for y in range(y0, y0 + int(rng.integers(1, 5))):
            for x in range(x0, x0 + int(rng.integers(1, 11))):
                for _ in range(int(rng.integers(1, 3))):
                    recs.append((int(rng.integers(2, 5)), int(rng.integers(0, 9)), y, x))
        launches[int(row)] = recs
        spans[int(row)] = (LaneSpan(*map(int, rng.integers(1, 5, 2))),
                           tuple(map(int, rng.integers(1, 12, 2))))
    t = launch_records(launches)
    t = t[rng.permutation(len(t))]  # launches interleaved; each loop's entries out of order
    t = t[np.argsort(t["row"], kind="stable")]  # as the region's records: by row
    assert launch_trip_factors(lane_records(t, 2), spans) == per_launch(t, 2, spans)
