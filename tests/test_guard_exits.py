"""Tests of cgpredict.guard_exits: what the threads leaving at the guard do not run, where a
test of the thread's body merges into the guard (eq. (12g)).

Oracles by hand: Gram-Schmidt k1's shape, 256 threads of which only t == 0 computes; ptxas
merges ``t == 0`` into the guard (one ISETP, one @P0 EXIT: its sm_90 SASS), so 255 of 256
threads leave there, without their final branch and without the constant loads after the
guard (2 array parameters, the size, the memory descriptor: 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sass_entry import _traced

from cgpredict.guard_exits import GuardExits, guard_exits, left_at_guard
from cgpredict.machine_code import after_guard_loads, machine_extras

ONE_LANE = """\
#define N 64
#define T 256
#pragma cgp trace N=64
static float A[N][N], R[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = i - j;
  for (int k = 0; k < 2; k++) {
#pragma cgp kernel norm grid=1
    for (int t = 0; t < T; t++) {
      if (t == 0) {
        float s = 0.0f;
        for (int i = 0; i < N; i++) s += A[i][k] * A[i][k];
        R[k][k] = s;
      }
    }
  }
  return R[1][1] != 12345.0f ? 0 : 1;
}
"""


def test_the_share_leaving_is_the_tests_runs_less_its_entering_sides() -> None:
    assert left_at_guard(((3, 4),), {3: 1.0, 4: 1 / 256}) == pytest.approx(255 / 256)
    assert left_at_guard(((3, 4),), {3: 1.0, 4: 1.0}) == 0.0  # a zero-trip test: all enter
    got = guard_exits(((3, 4), (5, 6)), {3: 1.0, 4: 0.25, 5: 0.5, 6: 0.5}, 4)
    assert got == GuardExits(branch=0.75, other=3.0) and got.total == 3.75


def test_a_one_lane_kernels_other_threads_leave_at_the_guard(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, ONE_LANE, 1)
    assert len(shape.merged_entries) == 1
    assert left_at_guard(shape.merged_entries, per_thread) == pytest.approx(255 / 256)
    # A and R, the size and the memory descriptor: 4 constant loads after the guard
    assert after_guard_loads(shape, True) == 4
    extras = machine_extras(shape, lambda lid: 0.0, per_thread, touches_global=True,
                            staging_stores=0.0)
    assert extras.guard_exits.branch == pytest.approx(255 / 256)
    assert extras.guard_exits.other == pytest.approx(4 * 255 / 256)


def test_a_test_whose_sides_enter_two_loops_leaves_no_thread() -> None:
    """softmax's first loop header tests n > 0: one side enters the first loop (255 runs a
    thread: its iterations), the other skips to the second loop's preheader (0): it is found
    for both loops, and no thread leaves."""
    assert left_at_guard(((2, 5), (2, 3)), {2: 1.0, 5: 255.0, 3: 0.0}) == 0.0
