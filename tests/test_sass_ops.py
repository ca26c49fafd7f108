"""The SASS expansion of arithmetic (compute.SASS_EXPANSION) and the pipe classes, checked
two ways: against the sm_90 SASS nvcc builds from validation/cuda/ops/arith_ops.cu (skipped
without nvcc and nvdisasm), and by hand on instruction listings and counts derived here."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from cgpredict.compute import (
    SASS_CHAIN,
    SASS_EXPANSION,
    compute_counts,
    op_pipes,
    ptx_cost,
    sass_op,
)
from cgpredict.pipes import PIPE_CLASSES, PipeCounts, PipeRates, pipe_cycles

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import sass_counts  # noqa: E402
import sass_model  # noqa: E402
import sass_ops  # noqa: E402

needs_tools = pytest.mark.skipif(
    shutil.which("nvcc") is None or sass_counts.find_nvdisasm() is None,
    reason="nvcc or nvdisasm not found (pip install nvidia-cuda-nvdisasm)",
)


@pytest.fixture(scope="module")
def sass_table() -> dict:
    return sass_ops.expansions(sass_ops.compile_sass())


@needs_tools
def test_every_expansion_in_the_model_equals_the_sm90_sass(sass_table) -> None:
    for key, (total, classes) in SASS_EXPANSION.items():
        got = sass_table[key]
        assert got["total"] == total, key
        assert {c: got[c] for c in PIPE_CLASSES if got[c]} == classes, key


@needs_tools
def test_every_expansion_in_the_checks_classes_equals_the_sm90_sass() -> None:
    table = sass_ops.check_expansions(sass_ops.compile_sass())
    for key in SASS_EXPANSION:
        got = {c: n for c, n in table[key].items() if n}
        assert got == sass_model.EXPANSION_CLASSES[key], key


def test_every_expansion_is_split_into_the_checks_classes_without_loss() -> None:
    # the check's split of an expanded operation adds up to what cgpredict counts for it
    assert set(sass_model.EXPANSION_CLASSES) == set(SASS_EXPANSION)
    for key, (total, _) in SASS_EXPANSION.items():
        assert sum(sass_model.EXPANSION_CLASSES[key].values()) == total, key
        assert set(sass_model.EXPANSION_CLASSES[key]) <= {"fp32", "integer", "branch", "other"}


@needs_tools
def test_an_add_and_a_double_multiply_add_are_one_sass_instruction(sass_table) -> None:
    assert sass_table["base_i32"]["total"] == sass_table["base_i32"]["int_add"] == 1
    assert sass_table["base_f32"]["fp32"] == 1 and sass_table["base_f64"]["fp64"] == 1
    for key in ("fadd_f64", "fmul_f64", "fma_f64"):
        assert sass_table[key]["total"] == sass_table[key]["fp64"] == 1, key


# an IEEE float division as nvcc -O3 -arch=sm_90 emits it, slow path after the kernel
FDIV = """
	.section	.text.fdiv_f32,"ax",@progbits
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R2, SR_TID.X ;
        /*0020*/                   LDC.64 R6, c[0x0][0x220] ;
        /*0050*/                   IMAD.WIDE R6, R2, 0x4, R6 ;
        /*0060*/                   LDG.E R3, desc[UR4][R6.64] ;
        /*0070*/                   IMAD.WIDE R4, R2, 0x4, R4 ;
        /*0080*/                   LDG.E R0, desc[UR4][R4.64] ;
        /*0090*/                   BSSY B0, `(.L_x_1) ;
        /*00a0*/                   MUFU.RCP R8, R3 ;
        /*00b0*/                   FCHK P0, R0, R3 ;
        /*00c0*/                   FFMA R9, -R3, R8, 1 ;
        /*00d0*/                   FFMA R9, R8, R9, R8 ;
        /*00e0*/                   FFMA R8, R0, R9, RZ ;
        /*00f0*/                   FFMA R10, -R3, R8, R0 ;
        /*0100*/                   FFMA R9, R9, R10, R8 ;
        /*0110*/              @!P0 BRA `(.L_x_2) ;
        /*0120*/                   MOV R4, 0x140 ;
        /*0130*/                   CALL.REL.NOINC `($__internal_slowpath) ;
        /*0140*/                   IMAD.MOV.U32 R9, RZ, RZ, R0 ;
.L_x_2:
        /*0150*/                   BSYNC B0 ;
.L_x_1:
        /*0160*/                   LDC.64 R4, c[0x0][0x210] ;
        /*0170*/                   IMAD.WIDE R2, R2, 0x4, R4 ;
        /*0180*/                   STG.E desc[UR4][R2.64], R9 ;
        /*0190*/                   EXIT ;
$__internal_slowpath:
        /*01a0*/                   MUFU.RCP R8, R3 ;
"""


def test_the_fast_path_skips_the_slow_path_call_and_keeps_only_the_division() -> None:
    path = sass_ops.fast_path(sass_ops.kernel_bodies(FDIV)["fdiv_f32"])
    assert not any("CALL" in t for t in path) and path[-1] == "EXIT"
    assert len(path) == 21  # 24 instructions less the MOV, the CALL and the IMAD.MOV
    op = sass_ops.op_slice(path)
    # BSSY, MUFU.RCP, FCHK, 5 FFMA, the branch, BSYNC: not the addresses, loads or store
    assert len(op) == 10
    counts = sass_ops.path_classes(op)
    # FCHK issues to the SFU (XU) pipe: ncu counts 2 pipe_xu instructions a division
    assert (counts["sfu"], counts["fp32"], counts["int_cmp"], counts["int_mul"]) == (2, 5, 0, 0)


def test_the_division_waits_for_its_reciprocal_and_five_ffma_by_hand() -> None:
    # MUFU.RCP R8 <- R3; FFMA R9 <- R8; FFMA R9 <- R9; FFMA R8 <- R9; FFMA R10 <- R8;
    # FFMA R9 <- R10: one SFU step and five ALU ones (FCHK feeds only the branch)
    path = sass_ops.fast_path(sass_ops.kernel_bodies(FDIV)["fdiv_f32"])
    assert sass_ops.dependent_chain(sass_ops.op_slice(path)) == {"sfu": 1, "fp64": 0, "alu": 5}


# sqrtf as nvcc -O3 -arch=sm_90 emits it: the slow path's set-up (MOV, CALL, MOV, BRA) is
# as long as the inline code the taken branch runs (FMUL, FMUL, FFMA, FFMA)
SQRT = """
	.section	.text.sqrt_f32,"ax",@progbits
        /*0000*/                   S2R R2, SR_TID.X ;
        /*0010*/                   LDG.E R0, desc[UR4][R4.64] ;
        /*0020*/                   BSSY B0, `(.L_x_39) ;
        /*0030*/                   IADD3 R6, R0, -0xd000000, RZ ;
        /*0040*/                   MUFU.RSQ R3, R0 ;
        /*0050*/                   ISETP.GT.U32.AND P0, PT, R6, 0x727fffff, PT ;
        /*0060*/              @!P0 BRA `(.L_x_40) ;
        /*0070*/                   MOV R8, 0x90 ;
        /*0080*/                   CALL.REL.NOINC `($__internal_sqrt_slowpath) ;
        /*0090*/                   MOV R0, R3 ;
        /*00a0*/                   BRA `(.L_x_41) ;
.L_x_40:
        /*00b0*/                   FMUL.FTZ R7, R0, R3 ;
        /*00c0*/                   FMUL.FTZ R3, R3, 0.5 ;
        /*00d0*/                   FFMA R0, -R7, R7, R0 ;
        /*00e0*/                   FFMA R0, R0, R3, R7 ;
.L_x_41:
        /*00f0*/                   BSYNC B0 ;
.L_x_39:
        /*0100*/                   STG.E desc[UR4][R4.64], R0 ;
        /*0110*/                   EXIT ;
"""


def test_the_square_root_fast_path_is_the_inline_one_not_the_call() -> None:
    path = sass_ops.fast_path(sass_ops.kernel_bodies(SQRT)["sqrt_f32"])
    assert not any("CALL" in t for t in path)
    op = sass_ops.op_slice(path)
    counts = sass_ops.path_classes(op)
    # BSSY, IADD3, MUFU.RSQ, ISETP, BRA, FMUL x 2, FFMA x 2, BSYNC
    assert (counts["total"], counts["fp32"], counts["sfu"]) == (10, 4, 1)
    # MUFU.RSQ -> FMUL -> FFMA -> FFMA
    assert sass_ops.dependent_chain(op) == {"sfu": 1, "fp64": 0, "alu": 3}
    assert SASS_EXPANSION["sqrt_f32"] == (10, {"fp32": 4, "int_add": 1, "int_cmp": 1, "sfu": 1})


def test_the_checks_classes_of_a_division_and_a_square_root_by_hand() -> None:
    # division: FCHK + 5 FFMA fp32; the test BRA; BSSY, MUFU.RCP, BSYNC other
    div = sass_ops.op_slice(sass_ops.fast_path(sass_ops.kernel_bodies(FDIV)["fdiv_f32"]))
    by_hand = {"fp32": 6, "integer": 0, "branch": 1, "other": 3}
    assert sass_ops.check_classes(div) == by_hand
    assert sass_model.EXPANSION_CLASSES["fdiv_f32"] == {k: v for k, v in by_hand.items() if v}
    # sqrtf (no add after it here): FMUL x 2 + FFMA x 2 fp32; IADD3, ISETP integer; the BRA;
    # BSSY, MUFU.RSQ, BSYNC other
    root = sass_ops.op_slice(sass_ops.fast_path(sass_ops.kernel_bodies(SQRT)["sqrt_f32"]))
    by_hand = {"fp32": 4, "integer": 2, "branch": 1, "other": 3}
    assert sass_ops.check_classes(root) == by_hand
    assert sass_model.EXPANSION_CLASSES["sqrt_f32"] == by_hand
    # the model side of the check takes the split (not the whole expansion as other)
    assert sass_model.model_op_classes("fdiv", "float", "") == (
        ("branch", 1), ("fp32", 6), ("other", 3))
    assert sass_model.model_op_classes("fadd", "float", "") == (("fp32", 1),)
    assert sass_model.class_share("fdiv", "float", "", "fp32") == pytest.approx(0.6)
    assert sass_model.class_share("icmp", "i32", "", "integer") == 1.0


@needs_tools
def test_every_chain_in_the_model_equals_the_sm90_sass() -> None:
    table = sass_ops.chains(sass_ops.compile_sass())
    for key, (sfu, fp64, alu) in SASS_CHAIN.items():
        assert table[key] == {"sfu": sfu, "fp64": fp64, "alu": alu}, key
    assert set(SASS_CHAIN) == set(SASS_EXPANSION) - {"srem_quotient_i32", "urem_quotient_i32"}


def test_sass_pipe_classes_by_hand() -> None:
    cases = {
        "MUFU.RCP64H R3, R5": "sfu", "DFMA R8, -R4, R2, 1": "fp64", "FFMA R9, R8, R9, R8":
        "fp32", "IMAD.HI.U32 R7, R7, R3, R6": "int_mul", "IMAD.MOV.U32 R5, RZ, RZ, 0x1": None,
        "IMAD.IADD R3, R8, 0x1, -R3": "int_add", "IMAD.SHL.U32 R6, R2, 0x100, RZ": "int_shift",
        "I2F.F64.S64 R6, R8": "cvt64", "F2I.FTZ.U32.TRUNC.NTZ R7, R6": "cvt",
        "ISETP.GE.AND P1, PT, R9, RZ, PT": "int_cmp", "UIADD3 UR8, UP0, UR8, 0x4, URZ": None,
        "BRA `(.L_x_1)": None, "LOP3.LUT R9, R9, R2, RZ, 0x3c, !PT": "int_add",
        "FCHK P0, R0, R3": "sfu",
    }  # fmt: skip
    for text, cls in cases.items():
        assert sass_ops.sass_pipe(text) == cls, text


def test_llvm_operations_map_to_their_expansion() -> None:
    assert sass_op("sdiv", "i32", "") == "sdiv_i32"
    assert sass_op("srem", "i32", "pow2") == "srem_pow2_i32"
    assert sass_op("udiv", "i32", "const") == "sdiv_const_i32"
    assert sass_op("fdiv", "double", "") == "fdiv_f64"
    assert sass_op("call", "float", "llvm.sqrt.f32") == "sqrt_f32"
    assert sass_op("call", "float", "expf") == "exp_f32"
    assert sass_op("call", "double", "exp") is None  # calls a subroutine: not in the table
    assert sass_op("fadd", "double", "") is None
    assert ptx_cost("fdiv", "float", "") == (10, True, True)
    assert ptx_cost("sdiv", "i32", "") == (24, True, False)
    assert op_pipes("fadd", "double", "") == (("fp64", 1),)
    assert op_pipes("getelementptr", "ptr", "2") == (("int_mul", 2),)
    assert op_pipes("call", "float", "llvm.fmuladd.f32") == (("fp32", 1),)
    assert op_pipes("br", "", "cond") == ()


def test_an_index_decomposition_counts_by_hand() -> None:
    # r = idx / w; c = idx % w (run-time w), one double fma: 24 + 22 + 1 instructions; SFU:
    # one reciprocal each for / and %; the fma on the FP64 pipe
    ops = Counter({("sdiv", "i32", ""): 1, ("srem", "i32", ""): 1,
                   ("call", "double", "llvm.fmuladd.f64"): 1})
    c = compute_counts(ops)
    assert c.total == 47 and c.sfu == 2
    assert c.pipes.sfu == 2 and c.pipes.fp64 == 1 and c.pipes.int_mul == 8
    assert c.pipes.int_add == 18 and c.pipes.cvt == 4 and c.pipes.int_cmp == 8


def test_a_remainder_beside_its_quotient_counts_by_hand() -> None:
    # r = idx / w; c = idx % w (run-time w): nvcc computes c = idx - r * w from the quotient
    # (sdivrem_i32 less sdiv_i32 of arith_ops.cu: an IADD3 pair and the IMAD), 24 + 3, one
    # SFU reciprocal; unsigned: the IMAD and a move, 18 + 2
    assert sass_op("srem", "i32", "quotient") == "srem_quotient_i32"
    assert sass_op("urem", "i32", "quotient") == "urem_quotient_i32"
    assert sass_op("sdiv", "i32", "quotient") == "sdiv_i32"  # only a remainder is derived
    c = compute_counts(Counter({("sdiv", "i32", ""): 1, ("srem", "i32", "quotient"): 1}))
    assert c.total == 27 and c.sfu == 1
    assert c.pipes.int_mul == 5 and c.pipes.int_add == 11 and c.pipes.cvt == 2
    u = compute_counts(Counter({("udiv", "i32", ""): 1, ("urem", "i32", "quotient"): 1}))
    assert u.total == 20 and u.sfu == 1 and u.pipes.int_mul == 5


def test_a_remainder_is_told_from_its_quotient_by_the_operands() -> None:
    from instrument.irtext import Instr
    from instrument.memtrace import _op_key

    div = Instr(1, "%r", "sdiv", "sdiv i32 %idx, %w, !dbg !7", None)
    rem = Instr(2, "%c", "srem", "srem i32 %idx, %w, !dbg !8", None)
    other = Instr(3, "%d", "srem", "srem i32 %idx, %v, !dbg !9", None)
    udiv = Instr(4, "%q", "udiv", "udiv i32 %idx, %v", None)
    uses = {"idx": [div, rem, other, udiv], "w": [div, rem], "v": [other, udiv]}
    assert _op_key(rem, uses) == ("srem", "i32", "quotient")
    assert _op_key(other, uses) == ("srem", "i32", "")  # udiv by v: not its quotient
    assert _op_key(div, uses) == ("sdiv", "i32", "")
    alone = {"idx": [rem], "w": [rem]}
    assert _op_key(rem, alone) == ("srem", "i32", "")


def test_pipe_cycles_is_the_busiest_class_at_its_rate() -> None:
    h100 = PipeRates(fp32=128, fp64=64, sfu=16, int_add=64)
    counts = PipeCounts(fp32=100, fp64=40, sfu=10)
    # fp32 100 x 32/128 = 25, fp64 40 x 32/64 = 20, sfu 10 x 32/16 = 20
    assert pipe_cycles(counts, h100, 32) == (25.0, "fp32")
    gtx980 = PipeRates(fp32=128, fp64=4, sfu=32)
    assert pipe_cycles(counts, gtx980, 32) == (320.0, "fp64")  # 40 x 32 / 4
    assert pipe_cycles(counts, None, 32) == (0.0, "")
    assert pipe_cycles(PipeCounts(int_mul=5), gtx980, 32) == (0.0, "")  # no rate: no limit


def test_folded_integer_instructions_come_out_of_the_integer_classes_only() -> None:
    # 8 integer instructions and 2 branches foldable, 5 of the 10 folded: half of each kept
    c = PipeCounts(fp32=10, int_add=6, int_mul=2).less_integer(5, 10)
    assert (c.fp32, c.int_add, c.int_mul) == (10, 3, 1)
    assert PipeCounts(int_add=1).less_integer(5, 2).int_add == 0


def test_compute_counts_tell_the_foldable_integer_and_branch_instructions() -> None:
    # a loop's add, setp and branch and a gep (4 foldable), an fadd (not)
    ops = Counter({("add", "i64", ""): 1, ("icmp", "slt", "branch"): 1,
                   ("br", "", "cond"): 1, ("getelementptr", "ptr", "1"): 1,
                   ("fadd", "float", ""): 1})
    c = compute_counts(ops)
    assert c.foldable == 4 and c.pipes.integer == 3 and c.pipes.fp32 == 1


def test_divisor_kinds_by_hand() -> None:
    from instrument.memtrace import _divisor_kind

    assert _divisor_kind(["%29,", "8,", "!dbg", "!68"]) == "pow2"
    assert _divisor_kind(["%29,", "-16"]) == "pow2"
    assert _divisor_kind(["%29,", "7,", "!dbg", "!71"]) == "const"
    assert _divisor_kind(["%29,", "%20,", "!dbg", "!74"]) == ""


@pytest.mark.usefixtures("compiler")
def test_only_the_run_time_divisor_reaches_the_sfu() -> None:
    """b = a / 8, c = a % 7, d = a / w: one MUFU.RCP a thread (d's); a / 8 and a % 7 are
    2 + 5 instructions against 24 and 22 by a run-time value: 39 fewer than three run-time
    divisions would be."""
    from cgpredict.prediction import RunOptions
    from cgpredict.prepared import prepare

    with prepare(ROOT / "tests" / "data" / "div_kinds.c", RunOptions()) as prep:
        (k,) = prep.analyze(RunOptions(device="h100")).kernels
    assert k.profile.sfu_insts == pytest.approx(1)
    assert k.profile.pipes.sfu == pytest.approx(1)
    assert k.profile.pipes.int_shift >= 2  # a / 8 and a % 7 each shift
