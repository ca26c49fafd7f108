"""Tests of cgpredict.machine_code: the SASS instructions a kernel issues beyond its PTX count.

Oracles from the mechanisms the module names (read from the sm_90 SASS of the corpus,
validation/results/sass-check.md): every kernel loads its stack pointer, the sizes its guard
compares with (kernel parameters in the ports: one LDC/LDC.64) and, when it touches global
memory, the memory descriptor (3); before each entry of a sequential loop one move per
value the loop carries (a phi of its header) and one pointer copy per array whose address the
loop advances; a tiled kernel one shared store per staging load; in the code a thread runs
once, one address computation per array and index, constant offsets folded; a first loop's
zero-trip test merged into the guard when the thread writes nothing before it and nothing
when the loop does not run."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.machine_code import (
    MachineExtras,
    MachineShape,
    loop_setup_insts,
    machine_extras,
    prologue_insts,
)
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.zero_trip_tests import merged_zero_trip_tests

STRAIGHT = """\
#define N 256
#pragma cgp trace N=256
static float A[N], B[N];
int main(void) {
  for (int i = 0; i < N; i++) A[i] = i;
#pragma cgp kernel copy grid=1
  for (int i = 1; i < N - 1; i++) B[i] = A[i - 1] + A[i + 1];
  return B[3] != 12345.0f ? 0 : 1;
}
"""

# y[i] = sum_j A[i][j] * x[j]: the j loop carries j and s (2 phis) and advances A and x (2
# pointers); y[i] is stored after it. 3 + 2 + 2 = 7 per thread.
ROWSUM = """\
#define N 256
#pragma cgp trace N=256
static float A[N][N], x[N], y[N];
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; for (int j = 0; j < N; j++) A[i][j] = i - j; }
#pragma cgp kernel rowsum grid=1
  for (int i = 0; i < N; i++) {
    float s = 0;
    for (int j = 0; j < N; j++) s += A[i][j] * x[j];
    y[i] = s;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""

# the same with an inner loop entered 4 times per thread: each entry sets up its 2 phis
# (k, s) and its one advancing array (A); the outer loop carries q and t (its 2 phis) and
# addresses nothing itself. 3 + 2 + 4 x 3 = 17 per thread.
NESTED = """\
#define N 256
#pragma cgp trace N=256
static float A[N][4][N], y[N];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int q = 0; q < 4; q++)
      for (int k = 0; k < N; k++) A[i][q][k] = i + q - k;
#pragma cgp kernel nested grid=1
  for (int i = 0; i < N; i++) {
    float t = 0;
    for (int q = 0; q < 4; q++) {
      float s = 0;
      for (int k = 0; k < N; k++) s += A[i][q][k];
      t += s * (q + 1);
    }
    y[i] = t;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""


def _profile(tmp_path: Path, src: str):
    path = tmp_path / "k.c"
    path.write_text(src)
    (k,) = predict_source(path, RunOptions(device="h100")).kernels
    return k.profile


def test_the_prologue_is_the_stack_pointer_and_the_memory_descriptor() -> None:
    assert prologue_insts(True) == 3 and prologue_insts(False) == 2
    assert loop_setup_insts(carried=2, arrays=3) == 5
    e = MachineExtras(prologue=2.0, loop_setup=6.0, staging_stores=4.0, folded_addresses=3.0)
    assert (e.other, e.added, e.total) == (8.0, 12.0, 9.0)


def test_straight_line_code_gets_the_prologue_and_folds_constant_offsets(
    tmp_path: Path,
) -> None:
    """B[i] = A[i - 1] + A[i + 1]: three index instructions at the PTX level (one per
    access); the SASS computes one address of A (i - 1 and i + 1 differ from i by
    constants: immediate offsets) and one of B: 1 folded."""
    p = _profile(tmp_path, STRAIGHT)
    assert p.machine_insts == pytest.approx(3.0)
    assert p.address_folded_insts == pytest.approx(1.0)


def test_a_loop_sets_up_its_carried_values_and_the_pointers_it_advances(tmp_path: Path) -> None:
    p = _profile(tmp_path, ROWSUM)
    assert p.machine_insts == pytest.approx(3.0 + 2 + 2)
    assert p.address_folded_insts == pytest.approx(0.0)  # y[i]: one access, one base
    assert p.comp_insts > p.machine_insts  # included in the compute count


def test_an_inner_loop_is_set_up_at_each_of_its_entries(tmp_path: Path) -> None:
    assert _profile(tmp_path, NESTED).machine_insts == pytest.approx(3.0 + 2 + 4 * 3)


def _kernel_1d(before: str, body: str, after: str) -> str:
    """A traced C file whose kernel maps i (256 threads): ``before``, a j loop of 256
    iterations running ``body``, ``after``."""
    return f"""\
#define N 256
#pragma cgp trace N=256
static float A[N][N], x[N], y[N], z[N];
int main(void) {{
  for (int i = 0; i < N; i++) {{ x[i] = i; z[i] = 1; for (int j = 0; j < N; j++) A[i][j] = i - j; }}
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {{
    {before}
    for (int j = 0; j < N; j++) {body}
    {after}
  }}
  return y[3] != 12345.0f ? 0 : 1;
}}
"""


# MVT's shape: nothing written before the loop, nothing when it does not run: the zero-trip
# test and the guard are one predicate (one branch per thread fewer)
ACCUMULATE = _kernel_1d("", "y[i] += A[i][j] * x[j];", "")
# ATAX's: y[i] = 0 is written before the test: kept apart
ZEROED = _kernel_1d("y[i] = 0;", "y[i] += A[i][j] * x[j];", "")
# GEMVER k2's: y[i] += z[i] runs after the loop whether it ran or not: kept apart
AFTER = _kernel_1d("", "y[i] += A[i][j] * x[j];", "y[i] += z[i];")


@pytest.mark.parametrize("port", ["plain", "restrict"])
@pytest.mark.parametrize("src, merged", [(ACCUMULATE, 1), (ZEROED, 0), (AFTER, 0)],
                         ids=["accumulate", "zeroed", "after"])
def test_a_zero_trip_test_merges_into_the_guard_when_nothing_is_written_around_it(
    tmp_path: Path, port: str, src: str, merged: int
) -> None:
    path = tmp_path / "k.c"
    path.write_text(src)
    with prepare(path, RunOptions(device="h100", port=port)) as prep:
        tests = merged_zero_trip_tests(prep.trace, 0, 1)
        assert len(tests) == merged
        for b in tests:  # the test is a conditional branch, run once per thread
            assert ("br", "", "cond", 1) in prep.trace.header.blocks[b].ops


def test_a_merged_test_is_one_branch_less_per_thread() -> None:
    shape = MachineShape(merged_tests=(7,))
    sass = machine_extras(shape, lambda lid: 0.0, {7: 1.0}, touches_global=True,
                          staging_stores=0.0)
    assert sass.merged_tests == 1.0
    assert sass.added == 3.0  # the prologue only
    assert sass.total == 3.0 - 1.0
