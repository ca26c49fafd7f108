"""Tests of cgpredict.machine_code: the SASS instructions a kernel issues beyond its PTX count.

Oracles from the mechanisms the module names (read from the sm_90 SASS of the corpus,
validation/results/sass-check.md): every kernel loads its stack pointer and, when it touches
global memory, the memory descriptor (2); before each entry of a sequential loop one move per
value the loop carries (a phi of its header) and one pointer copy per array whose address the
loop advances; a tiled kernel one shared store per staging load; in the code a thread runs
once, one address computation per array and index, constant offsets folded."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.machine_code import MachineExtras, loop_setup_insts, prologue_insts
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

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
# pointers); y[i] is stored after it. 2 + 2 + 2 = 6 per thread.
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
# addresses nothing itself. 2 + 2 + 4 x 3 = 16 per thread.
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
    assert prologue_insts(True) == 2 and prologue_insts(False) == 1
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
    assert p.machine_insts == pytest.approx(2.0)
    assert p.address_folded_insts == pytest.approx(1.0)


def test_a_loop_sets_up_its_carried_values_and_the_pointers_it_advances(tmp_path: Path) -> None:
    p = _profile(tmp_path, ROWSUM)
    assert p.machine_insts == pytest.approx(2.0 + 2 + 2)
    assert p.address_folded_insts == pytest.approx(0.0)  # y[i]: one access, one base
    assert p.comp_insts > p.machine_insts  # included in the compute count


def test_an_inner_loop_is_set_up_at_each_of_its_entries(tmp_path: Path) -> None:
    assert _profile(tmp_path, NESTED).machine_insts == pytest.approx(2.0 + 2 + 4 * 3)
