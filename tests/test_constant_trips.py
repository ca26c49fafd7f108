"""Tests of eq. (12ct): how deep nvcc unrolls a loop whose trip count the port knows
(cgpredict.constant_trips), and what such a trip keeps (runtime_trips.RuntimeTrip with
``constant``, machine_code's zero-trip tests).

Oracles by hand from the rule: a budget of 100 model instructions a trip less the back edge's
2, shared among copies of a body of ``c`` instructions less the same 2, rounded down to a power
of two that divides the trip count; the probes' PTX depths (validation/cuda/probes/
constant_trip.py) are the same numbers."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cgpredict.constant_trips import (
    BACKEDGE_INSTS,
    PARTIAL_UNROLL_BUDGET,
    constant_bound,
    constant_trip_depth,
    loop_body_cost,
)
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.runtime_trips import RuntimeTrip, loop_trip_at
from cgpredict.zero_trip_tests import merged_zero_trip_tests


@pytest.mark.parametrize("cost, trip, depth", [
    (6, 1024, 16),   # 98 / 4 = 24.5: 16 (u1: two loads and an fma)
    (12, 1024, 8),   # 98 / 10 = 9.8: 8 (SYR2K's body)
    (5, 1024, 32),   # 98 / 3 = 32.7: 32 (one load and an add)
    (17, 1024, 4),   # 98 / 15 = 6.5: 4
    (29, 1024, 2),   # 98 / 27 = 3.6: 2
    (6, 1000, 8),    # 24.5 allows 16, but 16 does not divide 1000: 8
    (6, 96, 16),     # 96 = 3 x 32: 16 divides it
    (12, 96, 8),
    (200, 1024, 1),  # a body beyond the budget: not unrolled
    (6, 7, 1),       # an odd count: no power of two above 1 divides it
])
def test_constant_trip_depth_is_the_budget_over_the_body_at_a_divisor(cost, trip, depth):
    assert (PARTIAL_UNROLL_BUDGET, BACKEDGE_INSTS) == (100, 2)
    assert constant_trip_depth(cost, trip) == depth


def test_loop_body_cost_sums_each_blocks_operations_once():
    costs = {"fadd": 1, "load": 0, "br": 1}
    blocks = [SimpleNamespace(ops=(("fadd", "float", "", 2), ("load", "float", "", 3))),
              SimpleNamespace(ops=(("br", "", "cond", 1),))]
    assert loop_body_cost(blocks, lambda op, ty, d: (costs[op], False, False)) == 3.0


def _trace(bounds: str, iters, entries):
    """A stand-in trace of one region and one loop (id 0) with the given per-launch counts."""
    header = SimpleNamespace(regions=(SimpleNamespace(index=0, bounds=bounds),))
    return SimpleNamespace(header=header, loop_iters=np.array(iters).reshape(-1, 1),
                           loop_entries=np.array(entries).reshape(-1, 1))


def test_a_constant_bound_needs_the_pragma_and_one_count_an_entry():
    loop = SimpleNamespace(id=0, region=0)
    assert constant_bound(_trace("constant", [640, 320], [10, 5]), loop)  # 64 an entry
    assert not constant_bound(_trace("runtime", [640], [10]), loop)
    assert not constant_bound(_trace("constant", [640, 300], [10, 5]), loop)  # 64, then 60
    assert not constant_bound(_trace("constant", [0], [0]), loop)


def test_a_constant_rebased_trip_keeps_no_index_no_copy_and_a_pointer_per_array():
    # SYR2K's 8-deep trip: 4 unit-stride accesses of A and B, offset by i and by j
    trip = RuntimeTrip(depth=8, pointers=4, rebased=True, constant=True, unit_arrays=2)
    # count and test 2, an induction pointer's 64-bit add per array 2 x 2, two IMAD.WIDE per
    # access 2 x 4; no index (no remainder stage); no move
    assert trip.integer == 2 + 4 + 8
    assert trip.other == 0 and trip.branch == 1
    run_time = RuntimeTrip(depth=16, pointers=4, rebased=True, unit_arrays=2)
    assert run_time.integer == 3 + 4 + 8 and run_time.other == 2


SOURCE = """
#include <stdio.h>
#ifndef N
#define N 1024
#endif
#pragma cgp trace N=128
static float A[N][N], C[N];
int main(void) {
  for (int i = 0; i < N; i++) for (int k = 0; k < N; k++) A[i][k] = (float)(i + k);
#pragma cgp kernel rows grid=1 BOUNDS
  for (int i = 0; i < N; i++) {
    C[i] = 0.5f;
    for (int k = 0; k < N; k++)
      C[i] += A[i][k] * A[k][i];
  }
  printf("%f\\n", C[3]);
  return 0;
}
"""


@pytest.mark.parametrize("bounds", ["bounds=constant", ""])
def test_a_kernels_bounds_decide_its_loops_trip_and_zero_trip_test(tmp_path: Path, bounds):
    c = tmp_path / "rows.c"
    c.write_text(SOURCE.replace("BOUNDS", bounds))
    with prepare(c, RunOptions(port="restrict")) as prep:
        tr = prep.trace
        k = next(lp for lp in tr.header.loops if lp.parent >= 0)
        trip = loop_trip_at(tr, k.id)
        tests = merged_zero_trip_tests(tr, k.region, 1)
    if bounds:  # 128 iterations (traced), a body of (12ct)'s size: no remainder, no zero-trip test
        from cgpredict.compute import ptx_cost
        cost = loop_body_cost([tr.header.blocks[b] for b in k.blocks], ptx_cost)
        assert trip.constant and trip.depth == constant_trip_depth(cost, 128)
        assert len(tests) == 1  # C[i] is stored before the loop: kept apart at run time
    else:
        assert not trip.constant and trip.depth in (4, 16)
        assert tests == ()
