"""Folding across the iterations of a loop nvcc unrolls whole (cgpredict/loop_fold.py, eq. (12f)).

Oracles derived by hand:

* ``x ^= x >> 16`` twice is x for 32 bits (the second shift by 16 brings back the bits the
  first put in, x ^ (x >> 16) ^ (x >> 16) ^ (x >> 32) with x >> 32 = 0): a 2-trip loop of it
  keeps 2 x 2 instructions traced and none optimised;
* ``h *= 3; h *= 5`` four times is one multiply by 15^4 = 50625: 8 kept, 1 optimised;
* a 17-tap multiply-add (conv1d's taps) has nothing to fold: 17 fmuladd either way;
* a loop whose trip count is a run-time value is not unrolled whole: no fold;
* int_hash's 16 rounds of fmix32 keep 8 instructions a round (3 shifts, 3 xors, 2 multiplies;
  the loop control is affine) and 53 optimised (18 shifts, 18 xors, 17 multiplies: a round's
  last xor-shift cancels the next one's first, 15 times; c2 x c1 merge, 15 times), as its
  sm_90 SASS (19 LOP3 with the index's, 18 SHF, 18 IMAD with the index's).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cgpredict.instrument.irtext import parse_module

from cgpredict.compute import ComputeCounts
from cgpredict.loop_fold import LoopFold, LoopFolds, fold_counts, kept_counts, probe_text
from cgpredict.pipes import PipeCounts

HEAD = """\
target datalayout = "e-m:e-i64:64-n8:16:32:64-S128"
declare float @llvm.fmuladd.f32(float, float, float) #1
define i32 @k(i32 %x, ptr %a, ptr %w, i32 %n) #0 {
entry:
  br label %body
"""

#: a loop of ``trips`` iterations whose body is ``body`` (it reads %v.0, defines %v.1)
LOOP = """\
body:
  %r = phi i32 [ 0, %entry ], [ %r.next, %body ]
  %v.0 = phi i32 [ %x, %entry ], [ %v.1, %body ]
{body}
  %r.next = add nuw nsw i32 %r, 1
  %done = icmp eq i32 %r.next, {trips}
  br i1 %done, label %exit, label %body, !llvm.loop !7
exit:
  ret i32 %v.1
}}
"""


def _ir(body: str, trips: str) -> str:
    return HEAD + LOOP.format(body=body, trips=trips)


XORSHIFT = "  %s = lshr i32 %v.0, 16\n  %v.1 = xor i32 %s, %v.0"
MULS = "  %m = mul i32 %v.0, 3\n  %v.1 = mul i32 %m, 5"


def _counts(ir: str) -> tuple[float, float] | None:
    """(kept by one iteration, kept by the optimised straight-line code) of loop ``body``."""
    got = fold_counts(ir, "k", ("body",))
    if got is None:
        return None
    (label, per_iteration), = got[0]
    assert label == "body"
    return per_iteration.total, got[1].total


def test_xorshift_twice_folds_to_nothing() -> None:
    assert _counts(_ir(XORSHIFT, "2")) == (2.0, 0.0)


def test_xorshift_three_times_keeps_one() -> None:
    assert _counts(_ir(XORSHIFT, "3")) == (2.0, 2.0)  # 6 traced, x ^ (x >> 16) left


def test_constant_multiplies_merge_into_one() -> None:
    assert _counts(_ir(MULS, "4")) == (2.0, 1.0)
    assert "mul i32 %x, 50625" in _optimised(_ir(MULS, "4"))


def _optimised(ir: str) -> str:
    from cgpredict.loop_fold import optimise

    mod = parse_module(ir)
    text, _ = probe_text(mod, mod.functions["k"], ("body",))
    return optimise(text)


TAPS = """\
body:
  %r = phi i64 [ 0, %entry ], [ %r.next, %body ]
  %s.0 = phi float [ 0.0, %entry ], [ %s.1, %body ]
  %pa = getelementptr inbounds float, ptr %a, i64 %r
  %va = load float, ptr %pa, align 4
  %pw = getelementptr inbounds float, ptr %w, i64 %r
  %vw = load float, ptr %pw, align 4
  %s.1 = tail call float @llvm.fmuladd.f32(float %va, float %vw, float %s.0)
  %r.next = add nuw nsw i64 %r, 1
  %done = icmp eq i64 %r.next, 17
  br i1 %done, label %exit, label %body
exit:
  %o = fptosi float %s.1 to i32
  ret i32 %o
}
"""


def test_multiply_adds_of_loaded_values_do_not_fold() -> None:
    """conv1d's 17 taps: one fmuladd a tap traced (the addresses and the loop control are
    affine, not kept), 17 after the unrolling."""
    assert _counts(HEAD + TAPS) == (1.0, 17.0)


BOUNDED = """\
define i32 @k(i32 %x, i32 %s) {
entry:
  %end = add nsw i32 %s, 4
  br label %body
body:
  %r = phi i32 [ %s, %entry ], [ %r.next, %body ]
  %v.0 = phi i32 [ %x, %entry ], [ %v.1, %body ]
  %m = mul i32 %v.0, 3
  %v.1 = mul i32 %m, 5
  %r.next = add nsw i32 %r, 1
  %done = icmp slt i32 %r.next, %end
  br i1 %done, label %body, label %exit
exit:
  ret i32 %v.1
}
"""


def test_a_bound_computed_before_the_loop_is_copied_into_the_probe() -> None:
    """``for (k = s; k < s + 4; k++)``: the exit test's ``s + 4`` is copied into the probe,
    so O3 sees 4 trips and unrolls them (one multiply by 15^4 left)."""
    mod = parse_module(BOUNDED)
    text, _ = probe_text(mod, mod.functions["k"], ("body",))
    assert "%end = add nsw i32 %s, 4" in text.split("br label %body")[0]
    assert _counts(BOUNDED) == (2.0, 1.0)


def test_run_time_trip_count_is_not_unrolled() -> None:
    assert _counts(_ir(XORSHIFT, "%n")) is None


def test_probe_names_live_ins_live_outs_and_data() -> None:
    mod = parse_module(_ir(XORSHIFT, "2"))
    text, data = probe_text(mod, mod.functions["k"], ("body",))
    assert "define void @__cgp_fold(i32 %x, ptr %__cgp_out0)" in text
    assert "store i32 %v.1, ptr %__cgp_out0" in text
    assert "label %__cgp_exit, label %body, !llvm.loop !0" in text
    assert data == frozenset({"x"})  # the carried value's start; not the counter's 0


def test_kept_counts_leave_out_the_affine_control() -> None:
    mod = parse_module(_ir(MULS, "4"))
    kept = kept_counts(mod.functions["k"], frozenset({"x"}))
    assert kept["body"].total == 2.0  # the two multiplies; add, compare, branch affine
    assert kept["body"].pipes.int_mul == 2.0


def _counts_of(total: float, mul: float) -> ComputeCounts:
    return ComputeCounts(total, 0.0, 0.0, (), PipeCounts(int_mul=mul), total)


def test_saving_scales_with_the_executions() -> None:
    """Hand count: 4 entries of a 4-trip loop a thread (16 header executions), 2 kept an
    iteration, 1 an entry optimised: 4 x (8 - 1) = 28 saved."""
    fold = LoopFold(3, 9, 4.0, ((9, _counts_of(2.0, 2.0)),), _counts_of(1.0, 1.0))
    got = LoopFolds((fold,)).saving({9: 16.0})
    assert got.total == pytest.approx(28.0) and got.pipes.int_mul == pytest.approx(28.0)
    none = LoopFold(3, 9, 4.0, ((9, _counts_of(1.0, 1.0)),), _counts_of(4.0, 4.0))
    assert none.saving({9: 16.0}) is None
    assert LoopFolds((none,)).saving({9: 16.0}).total == 0.0


INT_HASH = Path(__file__).resolve().parents[1] / "examples" / "blind" / "int_hash.c"


@pytest.mark.usefixtures("compiler")
def test_int_hash_counts_as_its_sass() -> None:
    """The blind int_hash: 148 compute instructions a thread before (eq. (12f)), 73 with the
    fold: 128 - 53 = 75 fewer, its 53 round instructions as its sm_90 SASS's; 68 with eq.
    (12wu): the 16 rounds, unrolled whole, keep none of the loop's control (3 integer and a
    branch a thread) and no set-up move (one), as the SASS (integer 58, branch 2, other 8)."""
    import cgpredict

    rep = cgpredict.predict(INT_HASH, block="256x1", device="h100",
                            sizes={"N": 65536}, trace_sizes={"N": 4096})
    p = rep.kernels[0].profile
    assert p.comp_insts == pytest.approx(68.0)
