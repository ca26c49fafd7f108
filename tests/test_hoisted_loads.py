"""Tests of cgpredict.hoisted_loads: the loads clang hoists out of a thread's mapped loops,
which every CUDA thread runs (eq. (12L)).

Oracles by hand: in the restrict port clang's -O1 moves a load that does not change with the
mapped index out of the mapped loop (R[k][k] before a 1-D ``i`` loop, u[i] into a 2-D
thread's row block); the port has no loop to hoist it from, so each thread issues its LDG
once: 1 a thread per such load, its array one of the kernel's array parameters. The plain
port keeps the load in the loop: nothing hoisted."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sass_entry import COLUMN, DOT

from cgpredict.hoisted_loads import HoistedLoad, hoisted_arrays, hoisted_load_insts
from cgpredict.machine_code import machine_extras, machine_shape
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.warps import mapped_loops

# COLUMN (Gram-Schmidt k2's shape: Q[i][k] = A[i][k] / R[k][k] over i, k a host loop's
# variable) and DOT come from test_sass_entry, which checks the same kernels' entries.

# GEMVER k1's shape on a 2-D grid: A[i][j] += u[i] * v[j]; u[i] is the row's (i -> y)
RANK1 = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], u[N], v[N];
int main(void) {
  for (int i = 0; i < N; i++) { u[i] = i; v[i] = 2 * i; for (int j = 0; j < N; j++) A[i][j] = j; }
#pragma cgp kernel rank1 grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[i][j] += u[i] * v[j];
  return A[3][3] != 12345.0f ? 0 : 1;
}
"""


def _shape(tmp_path: Path, src: str, grid: int, port: str):
    """(machine shape, block executions per thread, memory bases by id) of the kernel."""
    path = tmp_path / "k.c"
    path.write_text(src)
    with prepare(path, RunOptions(device="h100", port=port)) as prep:
        tr = prep.trace
        d1, d2 = mapped_loops(tr, 0)
        mapped = d2 if grid == 2 else d1
        shape = machine_shape(tr, 0, grid, mapped, set())
        threads = float(sum(tr.loop_iters[:, i].sum() for i in mapped))
        per_thread = {b: float(n) / threads for b, n in enumerate(tr.bb_counts.sum(axis=0)) if n}
        bases = {m.id: m.base for m in tr.header.mem}
    return shape, per_thread, bases


def test_a_load_hoisted_before_a_1d_loop_is_one_ldg_a_thread(tmp_path: Path) -> None:
    shape, per_thread, bases = _shape(tmp_path, COLUMN, 1, "restrict")
    loads = shape.entry.hoisted_loads
    assert [bases[ld.sid] for ld in loads] == ["R[k][k]"]
    assert hoisted_arrays(loads) == {"R"}
    assert hoisted_load_insts(loads, per_thread) == pytest.approx(1.0)
    extras = machine_extras(shape, lambda lid: 0.0, per_thread, touches_global=True,
                            staging_stores=0.0)
    assert extras.hoisted_loads == pytest.approx(1.0)


def test_a_row_load_of_a_2d_thread_is_one_ldg_a_thread(tmp_path: Path) -> None:
    """The trace loads u[i] once per row of 64 threads; each CUDA thread once."""
    shape, per_thread, bases = _shape(tmp_path, RANK1, 2, "restrict")
    loads = shape.entry.hoisted_loads
    assert [bases[ld.sid] for ld in loads] == ["u[i]"]
    assert hoisted_load_insts(loads, per_thread) == pytest.approx(1.0)


def test_the_plain_port_hoists_nothing(tmp_path: Path) -> None:
    assert _shape(tmp_path, COLUMN, 1, "plain")[0].entry.hoisted_loads == ()


def test_the_weight_is_the_share_of_threads_using_the_value() -> None:
    """A value used by a block half the threads run, and one no thread runs."""
    loads = (HoistedLoad(sid=0, array="R", value="v", address="p", users=(3, 4)),
             HoistedLoad(sid=1, array="S", value="w", address="q", users=(5,)))
    assert hoisted_load_insts(loads, {3: 0.25, 4: 0.5}) == pytest.approx(0.5)
    assert hoisted_load_insts(loads, {3: 2.0, 5: 0.0}) == pytest.approx(1.0)
    assert hoisted_arrays(loads) == {"R", "S"}


# DOT: dot_reduce's shape (s += x[i] * y[i]; s loaded before the loop, stored after it).


def test_a_reductions_start_is_no_hoisted_load(tmp_path: Path) -> None:
    """The accumulator's load enters the loop through a phi only: the port's threads reduce
    their partial sums by atomics (cgpredict.atomics) and do not load it each."""
    for port in ("plain", "restrict"):
        assert _shape(tmp_path, DOT, 1, port)[0].entry.hoisted_loads == ()
