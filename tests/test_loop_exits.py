"""Loops with a data-dependent exit (loop_exits, eq. (12x)): hand-written IR loops whose exit
tests are known to read the loop's data or only its counter, and a traced escape-time loop
that nvcc keeps at one iteration a trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from cgpredict.instrument import loopbody
from cgpredict.instrument.irtext import parse_module

from cgpredict.kernel.launch_loops import loop_unroll_at
from cgpredict.loop_exits import (
    data_exit,
    data_tainted,
    has_data_exit,
    leaving_branches,
)
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.runtime_trips import loop_trip_at

IR = """\
define void @escape(float %cr) {
entry:
  br label %head
head:
  %it = phi i32 [ 0, %entry ], [ %inc, %body ]
  %z = phi float [ 0.000000e+00, %entry ], [ %zn, %body ]
  %m = fmul float %z, %z
  %out = fcmp ugt float %m, 4.000000e+00
  br i1 %out, label %exit, label %body
body:
  %zn = fadd float %m, %cr
  %inc = add nuw nsw i32 %it, 1
  %done = icmp eq i32 %inc, 256
  br i1 %done, label %exit, label %head
exit:
  ret void
}

define void @counted(ptr %a, i32 %n) {
entry:
  br label %loop
loop:
  %j = phi i32 [ 0, %entry ], [ %j.next, %join ]
  %s = phi float [ 0.000000e+00, %entry ], [ %s.next, %join ]
  %p = getelementptr inbounds float, ptr %a, i32 %j
  %v = load float, ptr %p
  %pos = fcmp ogt float %v, 0.000000e+00
  br i1 %pos, label %then, label %join
then:
  %w = fmul float %v, 2.000000e+00
  br label %join
join:
  %x = phi float [ %w, %then ], [ %v, %loop ]
  %s.next = fadd float %s, %x
  %j.next = add nuw nsw i32 %j, 1
  %c = icmp slt i32 %j.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

define void @search(ptr %a, i32 %key) {
entry:
  br label %loop
loop:
  %j = phi i32 [ 0, %entry ], [ %j.next, %loop ]
  %p = getelementptr inbounds i32, ptr %a, i32 %j
  %v = load i32, ptr %p
  %j.next = add nuw nsw i32 %j, 1
  %hit = icmp eq i32 %v, %key
  br i1 %hit, label %exit, label %loop
exit:
  ret void
}
"""


def _exit(name: str, labels: tuple[str, ...]) -> bool:
    fn = parse_module(IR).functions[name]
    body = loopbody.loop_body(fn, labels, {})
    return has_data_exit(body, leaving_branches(fn, set(labels)))


def test_leaving_branches_name_the_exits() -> None:
    """escape: both branches leave (the escape test in the header, the counter at the
    latch); counted: the branch of its if stays inside, its latch leaves."""
    mod = parse_module(IR)
    assert leaving_branches(mod.functions["escape"], {"head", "body"}) == [True, True]
    assert leaving_branches(
        mod.functions["counted"], {"loop", "then", "join"}) == [False, False, True]


def test_escape_time_loop_has_a_data_exit() -> None:
    """|z|^2 > 4 reads the float recurrence z (a phi that is no induction): eq. (12x)."""
    assert _exit("escape", ("head", "body"))


def test_counted_loop_with_a_data_branch_inside_has_none() -> None:
    """The if on the loaded value stays inside the loop; the exit tests the counter
    against a value from before the loop: unrollable."""
    assert not _exit("counted", ("loop", "then", "join"))


def test_search_loop_has_a_data_exit() -> None:
    """The exit compares a value loaded in the iteration."""
    assert _exit("search", ("loop",))


def test_taint_follows_operands_within_an_iteration() -> None:
    """In escape: it and inc (the induction) and done stay clean; z, m, out, zn tainted."""
    fn = parse_module(IR).functions["escape"]
    body = loopbody.loop_body(fn, ("head", "body"), {})
    tainted = {o.name: t for o, t in zip(body.ops, data_tainted(body)) if o.name}
    assert tainted == {"%it": False, "%z": True, "%m": True, "%out": True, "%zn": True,
                       "%inc": False, "%done": False}


SOURCE = """\
#define W 64
#define MAXIT 256
#pragma cgp trace W=64
static int img[W], B[MAXIT];
int main(void) {
#pragma cgp kernel esc grid=1
  for (int px = 0; px < W; px++) {
    float c = -2.0f + px * (2.5f / W), z = 0.0f;
    int it = 0;
    while (it < MAXIT && z * z <= 4.0f) { z = z * z + c; it++; }
    img[px] = it;
  }
  %s
  return img[5] == 12345 ? 1 : 0;
}
"""


@pytest.mark.parametrize("counted", [False, True], ids=["escape", "counted"])
def test_traced_loop_unroll(tmp_path: Path, counted: bool) -> None:
    """The traced escape-time loop (over 32 iterations an entry for c in [-2, 0.25]) runs one
    iteration a trip and is no run-time trip; a counted loop of the same length is."""
    extra = ("\n#pragma cgp kernel cnt grid=1\n  for (int px = 0; px < W; px++)"
             " { int s = 0; for (int k = 0; k < MAXIT; k++) s += B[k] * px; img[px] = s; }")
    path = tmp_path / "k.c"
    path.write_text(SOURCE % (extra if counted else ""))
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        region = 1 if counted else 0
        (lp,) = [lp for lp in tr.header.loops if lp.region == region and lp.depth == 2]
        assert data_exit(tr, lp.id) is (not counted)
        if counted:
            assert loop_unroll_at(tr, lp.id) > 1
        else:
            assert loop_unroll_at(tr, lp.id) == 1
            assert loop_trip_at(tr, lp.id) is None


# CSR's row loop: k from rowptr[r] to rowptr[r + 1], both loaded before it, and the gather
# x[col[k]]; a loop bounded by its argument n for contrast
CSR = """\
define void @csr(ptr %rowptr, ptr %col, ptr %val, ptr %x, i64 %r, i32 %n) {
entry:
  %pr = getelementptr inbounds i32, ptr %rowptr, i64 %r
  %lo = load i32, ptr %pr
  %r1 = add nsw i64 %r, 1
  %pr1 = getelementptr inbounds i32, ptr %rowptr, i64 %r1
  %hi = load i32, ptr %pr1
  %lo64 = sext i32 %lo to i64
  %trip = sext i32 %hi to i64
  br label %loop
loop:
  %k = phi i64 [ %lo64, %entry ], [ %k.next, %loop ]
  %s = phi float [ 0.000000e+00, %entry ], [ %s.next, %loop ]
  %pv = getelementptr inbounds float, ptr %val, i64 %k
  %v = load float, ptr %pv
  %pc = getelementptr inbounds i32, ptr %col, i64 %k
  %c = load i32, ptr %pc
  %c64 = sext i32 %c to i64
  %px = getelementptr inbounds float, ptr %x, i64 %c64
  %xv = load float, ptr %px
  %s.next = call float @llvm.fmuladd.f32(float %v, float %xv, float %s)
  %k.next = add nsw i64 %k, 1
  %done = icmp eq i64 %k.next, %trip
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define void @sized(ptr %a, i32 %n) {
entry:
  %m = add nsw i32 %n, -1
  br label %loop
loop:
  %j = phi i32 [ 0, %entry ], [ %j.next, %loop ]
  %p = getelementptr inbounds float, ptr %a, i32 %j
  store float 0.000000e+00, ptr %p
  %j.next = add nuw nsw i32 %j, 1
  %c = icmp slt i32 %j.next, %m
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

declare float @llvm.fmuladd.f32(float, float, float)
"""


def test_a_trip_count_loaded_before_the_loop_is_a_loaded_bound() -> None:
    """Eq. (12y): CSR's exit compares k with sext(rowptr[r + 1]), a load before the loop;
    a loop bounded by n - 1 (an argument) has no loaded bound, and its exit no data exit."""
    from cgpredict.loop_exits import _loaded_bound

    assert _loaded_bound(CSR, "csr", ("loop",))
    assert not _loaded_bound(CSR, "sized", ("loop",))
    fn = parse_module(CSR).functions["csr"]
    assert not has_data_exit(loopbody.loop_body(fn, ["loop"], {}), leaving_branches(fn, {"loop"}))
