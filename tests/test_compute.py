"""Tests of cgpredict.compute (SPEC §2.4): LLVM operation -> PTX-equivalent instruction counts.

The table (module docstring of compute.py): fmul feeding fadd fuses into one fma (the fmul
costs 0, the fadd 1); llvm.fmuladd is one fma; a compare feeding a loop branch is its setp
(1, as in nvcc's PTX); a conditional branch is 1, an unconditional 0; getelementptr costs its
number of variable indices; integer casts are free, float conversions one cvt; division, remainder,
sqrt and the float libm calls are their sm_90 SASS expansions (SFU ones counted apart); loads
and stores are not counted here."""

from __future__ import annotations

from collections import Counter

import pytest

from cgpredict.compute import ComputeCounts, compute_counts, ptx_cost
from cgpredict.pipes import PipeCounts


@pytest.mark.parametrize("op, ty, detail, expected", [
    # (cost, sfu, fp)
    ("fadd", "float", "", (1, False, True)),
    ("fmul", "float", "fma", (0, False, False)),   # fused into the fadd
    ("fmul", "float", "", (1, False, True)),
    ("fsub", "double", "", (1, False, True)),
    ("fneg", "float", "", (1, False, True)),
    ("fneg", "float", "operand", (0, False, False)),  # an FFMA/FADD/FMUL operand modifier
    ("add", "i32", "", (1, False, False)),
    ("mul", "i64", "", (1, False, False)),
    ("shl", "i64", "", (1, False, False)),
    ("select", "i1", "", (1, False, False)),
    ("icmp", "eq", "branch", (1, False, False)),   # the loop branch's setp
    ("icmp", "slt", "", (1, False, False)),
    ("fcmp", "olt", "branch", (1, False, False)),
    ("br", "", "cond", (1, False, False)),
    ("br", "", "", (0, False, False)),
    ("getelementptr", "ptr", "0", (0, False, False)),
    ("getelementptr", "ptr", "1", (1, False, False)),
    ("getelementptr", "ptr", "2", (2, False, False)),
    ("getelementptr", "ptr", "", (0, False, False)),
    ("sext", "i32", "i64", (0, False, False)),
    ("zext", "i32", "i64", (0, False, False)),
    ("trunc", "i64", "i32", (0, False, False)),
    ("bitcast", "ptr", "ptr", (0, False, False)),
    ("phi", "float", "", (0, False, False)),
    ("alloca", "float", "", (0, False, False)),
    ("sitofp", "float", "float", (1, False, True)),
    ("fpext", "float", "double", (1, False, True)),
    # as the sm_90 SASS runs them (compute.SASS_EXPANSION, tests/test_sass_ops.py)
    ("fdiv", "float", "", (10, True, True)),      # MUFU.RCP, 5 FFMA, FCHK, branch
    ("sdiv", "i32", "", (24, True, False)),       # I2F/MUFU.RCP/IMAD.HI sequence
    ("sdiv", "i32", "pow2", (2, False, False)),   # shift and add
    ("srem", "i32", "const", (5, False, False)),  # magic-number multiply
    ("frem", "float", "", (1, True, True)),
    ("load", "float", "", (0, False, False)),
    ("store", "float", "", (0, False, False)),
    ("call", "float", "llvm.fmuladd.f32", (1, False, True)),
    ("call", "float", "fmaf", (1, False, True)),
    # sqrtf: BSSY, IADD3, MUFU.RSQ, ISETP, BRA, FMUL, FMUL, FFMA, FFMA, BSYNC (the inline
    # path the branch takes for ordinary operands, not the slow path's CALL set-up)
    ("call", "float", "llvm.sqrt.f32", (10, True, True)),
    ("call", "float", "sqrtf", (10, True, True)),
    ("call", "double", "exp", (1, True, True)),
    ("call", "float", "expf", (9, True, True)),    # MUFU.EX2 + FFMA range reduction
    ("call", "float", "logf", (26, False, True)),  # an FFMA polynomial, no SFU
    ("call", "float", "sinf", (26, False, True)),  # fast path |x| < 105615, no SFU
    ("call", "float", "cosf", (27, False, True)),
    ("call", "float", "powf", (64, True, True)),
    ("call", "float", "llvm.fabs.f32", (1, False, True)),
    ("call", "float", "fabsf", (1, False, True)),
    ("call", "float", "fmaxf", (1, False, True)),
    ("call", "i32", "llvm.smax.i32", (1, False, False)),
])
def test_ptx_cost_table(op, ty, detail, expected):
    assert ptx_cost(op, ty, detail) == expected


@pytest.mark.parametrize("callee", ["erff", "erf", "llvm.erf.f32"])
def test_erf_is_sfu(callee):
    assert ptx_cost("call", "float", callee) == (1, True, True)
    assert compute_counts(Counter({("call", "float", callee): 1})).unknown_calls == ()


def test_compute_counts_fma_loop_body():
    """A loop body: acc += a[k] * b[k]: fmul (fused) + fadd, i++ (add), setp and branch
    (1 + 1), two geps with one variable index each: 1 + 1 + 2 + 2 = 6 per iteration, 1 of
    them floating point, no SFU."""
    body = Counter({("fmul", "float", "fma"): 1, ("fadd", "float", ""): 1,
                    ("add", "i64", ""): 1, ("icmp", "eq", "branch"): 1, ("br", "", "cond"): 1,
                    ("getelementptr", "ptr", "1"): 2, ("load", "float", ""): 2,
                    ("phi", "i64", ""): 2})
    c = compute_counts(Counter({k: 100 * n for k, n in body.items()}))
    assert (c.total, c.sfu, c.fp, c.unknown_calls) == (600.0, 0.0, 100.0, ())
    # by pipe: the fadd FP32, the add and setp integer, the two geps' mad.wide multiplies
    assert c.pipes == PipeCounts(fp32=100, int_add=100, int_cmp=100, int_mul=200)


def test_compute_counts_sfu_and_unknown_calls():
    ops = Counter({("fdiv", "float", ""): 3, ("call", "float", "sqrtf"): 2,
                   ("call", "float", "my_helper"): 5, ("fadd", "float", ""): 4,
                   ("add", "i32", ""): 1.5})
    c = compute_counts(ops)
    # fdiv 10 SASS instructions (MUFU.RCP and FCHK on the SFU pipe), sqrtf 10 (1 MUFU), an
    # unknown call 1
    assert c.total == pytest.approx(3 * 10 + 2 * 10 + 5 + 4 + 1.5)
    assert c.sfu == pytest.approx(3 * 2 + 2)
    assert c.fp == pytest.approx(3 * 10 + 2 * 10 + 5 + 4)
    assert c.unknown_calls == ("my_helper",)


def test_compute_counts_empty_and_scaled():
    assert compute_counts(Counter()) == ComputeCounts(0.0, 0.0, 0.0, ())
    c = ComputeCounts(10.0, 2.0, 4.0, ("f",)).scaled(2.5)
    assert c == ComputeCounts(25.0, 5.0, 10.0, ("f",))


def test_kernel_entry():
    """2-D, three arrays: 2 x (tid, ctaid, ntid, mad, setp) + guard branch + 3 x (ld.param,
    cvta.to.global) = 17; 1-D, one array: 5 + 1 + 2 = 8."""
    from cgpredict.compute import kernel_entry_insts

    assert kernel_entry_insts(2, 3) == 17
    assert kernel_entry_insts(1, 1) == 8
