"""Eq. (12rw): a 2-D thread's row work (cgpredict/row_work.py), counted by hand: the arithmetic
the IR hoists into the row block of the outer mapped loop runs once per row in the trace and
once in every CUDA thread."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from test_sass_entry import _traced

from cgpredict.machine_code import MachineExtras
from cgpredict.row_work import (
    RowWork,
    is_row_work,
    row_ops,
    row_work_insts,
    row_work_weights,
)
from cgpredict.sass_entry import EntryShape

# 2-D, bilinear's row half: out[y][x] = in[y][x] * (float)y * 0.5f. clang hoists
# (float)y * 0.5f out of the x loop into the row block: a uitofp (I2FP: y >= 0) and an fmul,
# 2 instructions the trace runs once per row (1/64 a thread), the port in every thread: the
# row work is 2 x (1 - 1/64) a thread.
ROWSCALE = """\
#define N 64
#pragma cgp trace N=64
static float in[N][N], out[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) in[i][j] = i - j;
#pragma cgp kernel rowscale grid=2
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) out[y][x] = in[y][x] * ((float)y * 0.5f);
  return out[3][3] != 12345.0f ? 0 : 1;
}
"""


def test_the_row_blocks_arithmetic_runs_in_every_thread(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, ROWSCALE, 2)
    ops = {op[0] for _, block_ops in shape.row_ops for op in block_ops}
    assert {"uitofp", "fmul"} <= ops and "getelementptr" not in ops and "br" not in ops
    assert row_work_insts(shape.row_ops, shape.entry, per_thread) == pytest.approx(2 * 63 / 64)


def test_a_1d_thread_has_no_row_work() -> None:
    e = EntryShape(grid=1)
    h = SimpleNamespace(blocks={})
    assert row_ops(h, e) == () and row_work_insts((), e, {1: 1.0}) == 0.0


def test_the_weight_is_the_share_per_row_less_the_traced_executions() -> None:
    e = EntryShape(grid=2, row_blocks=frozenset({1, 2, 3}), row_headers=(1,),
                   latches=((3, 2),))
    per_thread = {1: 1 / 64, 2: 1 / 128, 3: 1 / 64}
    w = row_work_weights(e, per_thread)
    assert w[1] == pytest.approx(63 / 64) and w[2] == pytest.approx(0.5 - 1 / 128)
    block = SimpleNamespace(ops=[("fmul", "float", "", 2), ("getelementptr", "ptr", "1", 1),
                                 ("icmp", "i64", "branch", 1), ("br", "", "cond", 1)])
    latch = SimpleNamespace(ops=[("add", "i64", "", 1), ("icmp", "i64", "branch", 1)])
    h = SimpleNamespace(blocks={1: block, 2: SimpleNamespace(ops=[]), 3: latch})
    ops = row_ops(h, e)  # the latch's control and the block's address and branch left out
    assert ops == ((1, (("fmul", "float", "", 2),)),)
    assert row_work_insts(ops, e, per_thread) == pytest.approx(2 * 63 / 64)


def test_address_and_control_are_no_row_work() -> None:
    assert is_row_work("fptosi", "i32") and is_row_work("call", "llvm.smax.i32")
    assert is_row_work("icmp", "")  # a select's compare (a clamp) is work
    assert not is_row_work("getelementptr", "1") and not is_row_work("icmp", "branch")


def test_the_row_work_adds_to_the_compute_count() -> None:
    extras = MachineExtras(row_work=RowWork(insts=3.0))
    assert extras.total == pytest.approx(3.0)
    assert extras.added == 0.0  # PTX-level operations, not SASS-only
