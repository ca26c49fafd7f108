"""Tests of cgpredict.loop_counter: a loop's integer inductions (start, step) read from the
IR, and whether it counts up from a constant (compute.runtime_trip_depth's counts_up).

Oracles by hand from the loops' source: ``for (j = 0; j < N; j++)`` starts at the literal 0
and steps +1; ``for (j = N - 1; j >= 0; j--)`` starts at N - 1 (a literal after folding)
and steps -1; ``for (j = i; j < N; j++)`` starts at the outer index (a run-time value)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cgpredict.instrument.irtext import parse_module

from cgpredict.loop_counter import Induction, counts_up_from_constant, header_inductions
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

IR = """\
define void @f(i32 %n, i64 %k) {
entry:
  br label %loop
loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %dn = phi i32 [ 63, %entry ], [ %dn.next, %loop ]
  %kk = phi i64 [ %k, %entry ], [ %kk.next, %loop ]
  %s = phi float [ 0.000000e+00, %entry ], [ %s.next, %loop ]
  %rec = phi i64 [ 1, %entry ], [ %rec.next, %loop ]
  %iv.next = add nuw nsw i64 %iv, 1
  %dn.next = add nsw i32 %dn, -1
  %kk.next = sub i64 %kk, 2
  %s.next = fadd float %s, 1.000000e+00
  %rec.next = mul i64 %rec, 3
  %c = icmp ult i64 %iv.next, 64
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
"""


def test_header_inductions_read_start_and_step() -> None:
    """Integer phis updated by +/- a constant; the float accumulator and the product
    recurrence are not inductions."""
    fn = parse_module(IR).functions["f"]
    got = header_inductions(fn, "loop", {"loop"})
    assert got == (
        Induction(start="0", step=1), Induction(start="63", step=-1),
        Induction(start="%k", step=-2),
    )
    assert [i.constant_start for i in got] == [True, True, False]
    assert header_inductions(fn, "nowhere", {"loop"}) == ()


def _source(loop: str) -> str:
    """A traced C file whose kernel maps i and runs a column sum in the j loop ``loop``."""
    return f"""\
#define N 256
#pragma cgp trace N=256
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


@pytest.mark.parametrize(
    "loop, want",
    [
        ("for (int j = 0; j < N; j++)", True),
        ("for (int j = N - 1; j >= 0; j--)", False),
        ("for (int j = i; j < N; j++)", False),
    ],
    ids=["up_from_zero", "down_from_size", "up_from_outer_index"],
)
def test_counts_up_from_constant_of_traced_loops(tmp_path: Path, loop: str, want: bool) -> None:
    path = tmp_path / "k.c"
    path.write_text(_source(loop))
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        assert counts_up_from_constant(tr, lp) is want
