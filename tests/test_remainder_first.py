"""Tests of cgpredict.remainder_first (eq. (W5)): the lane order of a loop whose nvcc
remainder runs first. Oracles: hand-derived steps, and a brute force of the triangular
``for (i = j; i < n; i++)`` loop (trmv_t) as its sm_90 SASS runs it (the remainder's passes,
then every lane in step from the row its start rounds up to, modulo 4: the order of
``validation/trmv_t_lanes.py``, whose sectors equal Nsight Compute's count)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fake_traces import A_BASE, B_BASE, FakeTrace, Header, loop_exit, loop_info, mark, mem_event

import cgpredict.remainder_first as rf
from cgpredict.block import Block
from cgpredict.frontend.tracefile import TAG_BEGIN, TAG_END
from cgpredict.kernel.region import is_store
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.remainder_first import _shifts, step_of
from cgpredict.warps import form_warps

X_BASE = 0x40000
IS_STORE = np.array([False, True, False])  # L[i][j] load, y[j] store, x[i] load


@pytest.mark.parametrize("trips, steps", [
    (7, [0, 1, 2, 3, 4, 5, 6]),  # remainder 3: passes 0..2, then trips from step 3
    (8, [3, 4, 5, 6, 7, 8, 9, 10]),  # remainder 0: every iteration in the unrolled trips
    (5, [0, 3, 4, 5, 6]),  # remainder 1: one pass, then its trips from step 3
    (2, [0, 1]),  # only the remainder
])
def test_step_of_hand_cases(trips, steps):
    assert [step_of(k, trips) for k in range(trips)] == steps


def trmv_trace(n: int) -> FakeTrace:
    """for j < n { for i = j; i < n { load L[i][j]; load x[i] } store y[j] } (loops 0, 1)."""
    ev = [TAG_BEGIN << 48]
    for j in range(n):
        ev.append(mark(0, j))
        for k, i in enumerate(range(j, n)):
            ev.append(mark(1, k))
            ev.append(mem_event(0, A_BASE + 4 * (i * n + j)))
            ev.append(mem_event(2, X_BASE + 4 * i))
        ev.append(loop_exit(1))
        ev.append(mem_event(1, B_BASE + 4 * j))
    ev += [loop_exit(0), TAG_END << 48]
    return FakeTrace(Header((loop_info(0, 1, -1), loop_info(1, 2, 0))), np.array(ev, np.uint64))


def sass_steps(n: int, warp: int) -> list[frozenset]:
    """Brute force: the (lane, row) pairs of each of a warp's L[i][j] loads in the SASS's
    order: lanes with (n - j) & 3 > p at i = j + p for p = 0, 1, 2, then every lane in step
    from i = j + ((n - j) & 3)."""
    j = 32 * warp + np.arange(32)
    j = j[j < n]
    r = (n - j) & 3
    out = [frozenset(zip((j[r > p] % 32).tolist(), (j[r > p] + p).tolist())) for p in range(3)]
    start = j + r
    for s in range(n - int(start.min())):
        m = start + s < n
        out.append(frozenset(zip((j[m] % 32).tolist(), (start[m] + s).tolist())))
    return [g for g in out if g]


def l_loads(wt, n: int) -> dict[int, list[frozenset]]:
    """Per warp, the (lane, row) pairs of its L[i][j] warp instructions in issue order."""
    ev = wt.events
    out: dict[int, list[frozenset]] = {}
    for a, b in zip(wt.inst_start, np.r_[wt.inst_start[1:], len(ev)]):
        if ev["sid"][a] == 0:
            rows = (ev["addr"][a:b] - A_BASE) // 4 // n
            out.setdefault(int(ev["warp"][a]), []).append(
                frozenset(zip(ev["lane"][a:b].tolist(), rows.tolist())))
    return out


@pytest.fixture
def prologue(monkeypatch):
    """Loop 1 counted as one whose remainder runs first (a fake trace has no IR to read)."""
    monkeypatch.setattr(rf, "prologue_loops",
                        lambda trace, region, grid_dims: np.array([False, True]))


@pytest.mark.parametrize("n", [64, 70, 45])
def test_triangular_loop_takes_the_sass_lane_order(prologue, n):
    wt = form_warps(trmv_trace(n), 0, 0, 1, Block(32), IS_STORE)
    got = l_loads(wt, n)
    for w in got:
        assert got[w] == sass_steps(n, w)


def test_a_full_step_of_the_triangle_reads_nine_rows(prologue):
    """n = 64: lane l of warp 0 starts its trips at l rounded up to a multiple of 4, so a step
    of all 32 lanes reads rows s, s + 4, ..., s + 32: 9 rows (the trace's order: 32)."""
    wt = form_warps(trmv_trace(64), 0, 0, 1, Block(32), IS_STORE)
    full = [g for g in l_loads(wt, 64)[0] if len(g) == 32]
    assert full and all(len({row for _, row in g}) == 9 for g in full)


def test_without_a_prologue_loop_the_trace_order_stays():
    wt = form_warps(trmv_trace(64), 0, 0, 1, Block(32), IS_STORE)
    first = l_loads(wt, 64)[0][0]
    assert first == frozenset((lane, lane) for lane in range(32))  # lane l at row l


def test_equal_trips_are_not_moved():
    """Every lane 6 iterations (remainder 2): the shifts are equal, the order the trace's."""
    ev = [TAG_BEGIN << 48]
    for j in range(32):
        ev.append(mark(0, j))
        for k in range(6):
            ev += [mark(1, k), mem_event(0, A_BASE + 4 * (k * 32 + j))]
        ev.append(loop_exit(1))
    ev.append(TAG_END << 48)
    shifts, pos, seen = _shifts(np.array(ev, np.uint64), np.array([True, False]),
                                np.array([False, True]), 4)
    assert shifts.tolist() == pos.tolist() == ([0, 0] + [1] * 4) * 32
    assert seen.tolist() == [False, False, True, False]  # one remainder: the order stays


def test_a_second_entry_keeps_the_first_ones_shift():
    """Two entries of 5 iterations (remainder 1: step(k) - k = 2 from k = 1): the second's
    ranks move by the first's 2 more, so the thread's ranks never collide."""
    ev = [TAG_BEGIN << 48, mark(0, 0)]
    for _ in range(2):
        for k in range(5):
            ev += [mark(1, k), mem_event(0, A_BASE + 4 * k)]
        ev.append(loop_exit(1))
    ev.append(TAG_END << 48)
    shifts, pos, _ = _shifts(np.array(ev, np.uint64), np.array([True, False]),
                             np.array([False, True]), 4)
    assert shifts.tolist() == pos.tolist() == [0, 2, 2, 2, 2, 2, 4, 4, 4, 4]
    ranks = np.arange(10) + shifts
    assert len(set(ranks.tolist())) == 10


TRACED = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], y[N];
int main(void) {{
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = i - j;
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {{
    float s = 0;
    {loop} s += A[j][i];
    y[i] = s;
  }}
  return y[3] != 12345.0f ? 0 : 1;
}}
"""


@pytest.mark.parametrize("loop, rows", [
    ("for (int j = i; j < N; j++)", 9),  # a run-time start: remainder first, 9 rows a step
    ("for (int j = 0; j < N - i; j++)", 1),  # from 0: remainder after, k with k: one row
], ids=["from_outer_index", "from_zero"])
def test_traced_triangle(tmp_path: Path, loop: str, rows: int) -> None:
    """The whole chain on a traced C loop: prologue_loops reads the loop's start from the
    IR, and the full warp loads of A read 9 rows (lanes in step from their start rounded up
    modulo 4) or, counting up from 0 (the remainder after the unrolled trips), one row: the
    lanes' k-th iterations together (4 rows, had (W5) moved them by their remainders)."""
    path = tmp_path / "k.c"
    path.write_text(TRACED.format(loop=loop))
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        stores = is_store(tr)
        wt = form_warps(tr, 0, 0, 1, Block(32), stores)
    ev = wt.events
    sizes = np.diff(np.r_[wt.inst_start, len(ev)])
    got = set()
    for a, size in zip(wt.inst_start, sizes):
        if size == 32 and not stores[ev["sid"][a]]:  # a load of A by every lane
            got.add(len(set((ev["addr"][a:a + size] // (4 * 64)).tolist())))
    assert got == {rows}
