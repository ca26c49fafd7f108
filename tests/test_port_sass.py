"""cgpredict's per-thread instruction counts by class against the sm_90 SASS of the CUDA ports
(what the GPU runs; ``validation/sass_check.py`` says how each side is counted).

For every kernel of every port and both pointer models, per thread, against the unrolled
SASS (what the measured binaries run: the counts with ``#pragma unroll 1`` corrected at the
hot loop by the unrolled build, ``sass_check.unrolled_estimate``; the model counts unrolled
code, ``kernel.launch_loops.loop_unroll_at``):

* global loads, global stores, shared loads, shared stores (a tiled kernel's staging
  stores, ``cgpredict.machine_code``) and barriers must equal the SASS counts;
* the FP32, integer/address, branch and other instructions, and the total, must be within 10%
  (the target of issue 24);
* the classes cgpredict's side is split into (its staging stores included) add up to the
  model's own compute count.

The oracle is nvcc + nvdisasm (``nvcc -cubin -O3 -arch=sm_90``: ``validation/sass_counts.py``);
the tests skip without either (nvdisasm: ``pip install nvidia-cuda-nvdisasm
nvidia-cuda-cuobjdump``). The gaps that are real (the model counts otherwise than ptxas emits)
are strict xfails with the reason, kept in ``sass_check.known_gap`` so that the table and these
markers say the same. The per-kernel comparisons build every port twice (about 5 minutes on 2
cores): they are marked ``slow``. The parser is tested on a hand-written listing without
either tool.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import kernel_checks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import ptx_counts  # noqa: E402
import sass_check  # noqa: E402
import sass_counts  # noqa: E402

needs_tools = pytest.mark.skipif(
    shutil.which("nvcc") is None or sass_counts.find_nvdisasm() is None,
    reason=(
        "nvcc not found" if shutil.which("nvcc") is None
        else f"nvdisasm not found: {sass_counts.INSTALL_HINT}"
    ),
)  # fmt: skip

CASES = [
    (name, launch, port)
    for name in ptx_counts.port_names()
    for launch in dict.fromkeys(launch for launch, _ in ptx_counts.launches(name))
    for port in ptx_counts.PORTS
]
EXACT = ("ld_global", "st_global", "ld_shared", "st_shared", "barrier")
WITHIN = ("fp32", "integer", "branch", "other", "total")


def _params(classes: tuple[str, ...]) -> list:
    out = []
    for name, launch, port in CASES:
        for cls in classes:
            reason = sass_check.known_gap(launch, port, cls)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(
                pytest.param(name, launch, port, cls, marks=marks, id=f"{launch}-{port}-{cls}")
            )
    return out


@pytest.fixture(scope="session")
def sass_dir(tmp_path_factory) -> Path:
    """The one folder the session's cubins and listings go to (compile_cubin and disassemble
    reuse what is there: each port and build is compiled once whichever test asks first)."""
    return tmp_path_factory.mktemp("sass")


@pytest.fixture(scope="session")
def checks(sass_dir, tmp_path_factory):
    """check_file results per (port file, pointer model), computed once per test run (each
    port compiled twice, without and with unrolling, into the computing worker's
    ``sass_dir``; the other xdist worker reads the result back: ``conftest.run_once``)."""
    return kernel_checks(tmp_path_factory, "sass-check",
                         lambda name, port: sass_check.check_file(name, port, sass_dir))


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("name,launch,port,cls", _params(EXACT))
def test_memory_instructions_and_barriers_per_thread_equal_sass(
    checks, name: str, launch: str, port: str, cls: str
) -> None:
    kc = checks(name, port)[launch]
    assert kc.sass is not None, kc.structure
    assert kc.model[cls] == pytest.approx(kc.sass[cls], rel=1e-6, abs=1e-6), (
        f"{launch} ({port}) {cls}: cgpredict {kc.model[cls]:.2f}, SASS {kc.sass[cls]:.2f}"
    )


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("name,launch,port,cls", _params(WITHIN))
def test_compute_instructions_per_thread_within_10_percent_of_sass(
    checks, name: str, launch: str, port: str, cls: str
) -> None:
    kc = checks(name, port)[launch]
    assert kc.sass is not None, kc.structure
    assert kc.within(cls), (
        f"{launch} ({port}) {cls}: cgpredict {kc.model[cls]:.1f}, SASS {kc.sass[cls]:.1f}"
    )


# The model's comp_insts counts a warp's slowest lane in a loop whose trips differ between
# lanes (lane_trips, eq. (D1): gs_k1's loop runs on thread 0 alone, CORR's and COVAR's
# triangular loops); the class split counts the mean thread, as the SASS check compares.
LANE_FACTORED = {"corr_corr", "covar_covar", "gs_k1"}


def _split_case(c):
    mark = () if c[1] not in LANE_FACTORED else pytest.mark.xfail(
        strict=True, reason="comp_insts counts a warp's slowest lane (eq. (D1)); the split "
        "the mean thread")
    return pytest.param(*c, id=f"{c[1]}-{c[2]}", marks=mark)


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("name,launch,port", [_split_case(c) for c in CASES])
def test_the_class_split_adds_up_to_the_models_compute_count(
    checks, name: str, launch: str, port: str
) -> None:
    """FP32 + integer + branch + other (the unrolling fold subtracted per class) + the
    staging stores of the launch the report's profile is of equal the model's comp_insts."""
    kc = checks(name, port)[launch]
    assert kc.model_split_sum == pytest.approx(kc.model_comp_insts, rel=1e-9, abs=1e-9)


@needs_tools
@pytest.mark.slow
def test_the_tiled_gemm_compute_phase_vectorises_shared_loads_when_unrolled(sass_dir) -> None:
    """ptxas fully unrolls the 32-step loop of a tile and reads the row of As with LDS.128:
    per multiply-add 1.25 shared loads (8 LDS.128 + 32 LDS per 32), where the loop without
    unrolling has 2, and the address arithmetic almost vanishes."""
    port = sass_counts.port_kernels("gemm_tiled", "plain", sass_dir, unroll=True)
    k = port["gemm_tiled"]
    hot = sass_check._hot(k)
    phase = sass_check._between_barriers(k, hot)
    assert (phase["ld_shared_128"], phase["ld_shared_32"]) == (8, 32)
    plain = sass_counts.port_kernels("gemm_tiled", "plain", sass_dir)["gemm_tiled"]
    h = sass_check.hot_loop(plain, k, sass_check.ModelLoop(0, 2, 32.0))
    assert h.factor == 32
    assert h.nounroll["ld_shared"] == pytest.approx(2.0, abs=0.05)
    assert h.unrolled["ld_shared"] == pytest.approx(1.25)
    assert h.unrolled["integer"] < 1.0 < h.nounroll["integer"]


_SASS = """
//--------------------- .text._Z3fooPfS_ --------------------------
\t.section\t.text._Z3fooPfS_,"ax",@progbits
\t.align\t128
_Z3fooPfS_:
.text._Z3fooPfS_:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;
        /*0030*/               @P0 EXIT ;
.L_x_1:
        /*0040*/                   LDG.E R2, desc[UR4][R4.64] ;
.L_x_5:
        /*0050*/                   LDG.E R9, desc[UR4][R10.64] ;
        /*0060*/                   STS [R7], R9 ;
        /*0070*/               @P3 BRA `(.L_x_5) ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
.L_x_0:
        /*0090*/                   LDS.128 R8, [R3] ;
        /*00a0*/                   LDS R12, [R3+0x80] ;
        /*00b0*/                   FFMA R13, R8, R12, R13 ;
        /*00c0*/                   UIADD3 UR4, UR4, 0x1, URZ ;
        /*00d0*/                   ISETP.NE.AND P1, PT, R6, 0x20, PT ;
        /*00e0*/               @P1 BRA `(.L_x_0) ;
        /*00f0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0100*/              @!P2 BRA `(.L_x_1) ;
        /*0110*/                   STS.64 [R7], R8 ;
        /*0120*/                   STG.E desc[UR4][R4.64], R13 ;
        /*0130*/                   EXIT ;
.L_x_2:
        /*0140*/                   BRA `(.L_x_2);
        /*0130*/                   NOP;
        /*0140*/                   NOP;
.L_x_3:
//--------------------- .text._Z3barv --------------------------
\t.section\t.text._Z3barv,"ax",@progbits
_Z3barv:
.text._Z3barv:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm3x_div_slowpath) ;
        /*0020*/                   EXIT ;
$__internal_0_$__cuda_sm3x_div_slowpath:
        /*0030*/                   SHF.R.U32.HI R7, RZ, 0x17, R3 ;
.L_x_6:
        /*0040*/                   FFMA R8, R0, 1.84467440737095516160e+19, RZ ;
        /*0050*/                   RET.REL.NODEC R4 `(_Z3barv) ;
.L_x_4:
        /*0060*/                   BRA `(.L_x_4);
"""


def test_sass_parser_finds_nested_loops_and_counts_their_own_instructions_by_class() -> None:
    foo, bar = sass_counts.parse_sass(_SASS)
    assert (foo.mangled, foo.name, bar.name) == ("_Z3fooPfS_", "foo", "bar")
    assert len(foo.insts) == 20 and foo.cold == 0  # padding (BRA to itself, NOP) dropped
    assert (len(bar.insts), bar.cold) == (3, 4)  # the slow-path subroutine is left out
    outer, staging, inner = foo.loops
    assert (outer.label, outer.depth, outer.parent) == (".L_x_1", 1, -1)
    assert (staging.label, staging.depth, staging.parent) == (".L_x_5", 2, 0)
    assert (inner.label, inner.depth, inner.parent) == (".L_x_0", 2, 0)
    assert sass_check.is_staging(staging) and not sass_check.is_staging(outer)
    nonzero = lambda c: {k: v for k, v in c.counts.items() if v}  # noqa: E731
    assert nonzero(inner.own) == {
        "ld_shared_128": 1, "ld_shared_32": 1, "fp32": 1, "integer": 2, "branch": 1,
    }  # fmt: skip
    assert nonzero(outer.own) == {"ld_global": 1, "barrier": 2, "branch": 1}
    assert nonzero(staging.own) == {"ld_global": 1, "st_shared_32": 1, "branch": 1}
    assert nonzero(foo.outside) == {
        "other": 2, "integer": 1, "branch": 2, "st_global": 1, "st_shared_64": 1,
    }  # fmt: skip
    assert nonzero(bar.outside) == {"other": 1, "branch": 2} and bar.loops == []


# sfu_heavy's sqrtf and division (nvcc -O3 -arch=sm_90, shortened): each slow-path call sits
# in a block of its own that a predicated branch skips for ordinary operands
_SLOW_CALLS = """
\t.section\t.text._Z1kPf,"ax",@progbits
_Z1kPf:
        /*0000*/                   S2R R3, SR_TID.X ;
        /*0010*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*0020*/                   BSSY B0, `(.L_x_0) ;
        /*0030*/                   VIADD R6, R2, 0xf3000000 ;
        /*0040*/                   MUFU.RSQ R3, R2 ;
        /*0050*/                   ISETP.GT.U32.AND P0, PT, R6, 0x727fffff, PT ;
        /*0060*/              @!P0 BRA `(.L_x_1) ;
        /*0070*/                   MOV R9, 0x90 ;
        /*0080*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath) ;
        /*0090*/                   IMAD.MOV.U32 R3, RZ, RZ, R5 ;
        /*00a0*/                   BRA `(.L_x_2) ;
.L_x_1:
        /*00b0*/                   FMUL.FTZ R5, R2, R3 ;
        /*00c0*/                   FMUL.FTZ R3, R3, 0.5 ;
        /*00d0*/                   FFMA R2, -R5, R5, R2 ;
        /*00e0*/                   FFMA R3, R2, R3, R5 ;
.L_x_2:
        /*00f0*/                   BSYNC B0 ;
.L_x_0:
        /*0100*/                   MUFU.RCP R2, R3 ;
        /*0110*/                   BSSY B0, `(.L_x_3) ;
        /*0120*/                   FCHK P0, R0, R3 ;
        /*0130*/                   FFMA R7, R5, R6, R2 ;
        /*0140*/              @!P0 BRA `(.L_x_4) ;
        /*0150*/                   MOV R2, 0x170 ;
        /*0160*/                   CALL.REL.NOINC `($__internal_1_$__cuda_sm3x_div_rn_noftz_f32_slowpath) ;
        /*0170*/                   IMAD.MOV.U32 R7, RZ, RZ, R0 ;
.L_x_4:
        /*0180*/                   BSYNC B0 ;
.L_x_3:
        /*0190*/                   STG.E desc[UR4][R4.64], R7 ;
        /*01a0*/                   EXIT ;
$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath:
        /*01b0*/                   LOP3.LUT P0, RZ, R2, 0x7fffffff, RZ, 0xc0, !PT ;
        /*01c0*/                   RET.REL.NODEC R8 `(_Z1kPf) ;
"""  # noqa: E501


def test_the_slow_path_calls_a_predicated_branch_skips_are_not_counted() -> None:
    (k,) = sass_counts.parse_sass(_SLOW_CALLS)
    # MOV, CALL, IMAD.MOV, BRA (sqrtf) and MOV, CALL, IMAD.MOV (division); the subroutine 2
    assert (len(k.insts), k.slow_insts, k.cold) == (27, 7, 2)
    nonzero = {c: v for c, v in k.outside.counts.items() if v}
    # other: S2R, BSSY x 2, MUFU.RSQ, MUFU.RCP, BSYNC x 2; integer: VIADD, ISETP; fp32: the
    # FMUL x 2 and FFMA x 2 of sqrtf's inline path, FCHK, FFMA; branch: 2 tests and EXIT
    assert nonzero == {
        "ld_global": 1, "st_global": 1, "fp32": 6, "integer": 2, "branch": 3, "other": 7,
    }  # fmt: skip
    assert k.range_counts(0, len(k.insts) - 1).total == 20


def test_per_thread_counts_are_each_loops_own_counts_times_its_iterations() -> None:
    """2 trips of the outer loop, 32 of the inner per outer trip: 64 inner trips per thread;
    the staging loop runs once per trip of the outer loop."""
    (foo, _) = sass_counts.parse_sass(_SASS)
    loops = [sass_check.ModelLoop(10, 1, 2.0), sass_check.ModelLoop(11, 2, 64.0)]
    total, why = sass_check.sass_per_thread(foo, loops)
    assert why == ""
    s = sass_check.summary(total)
    assert (s["ld_global"], s["st_global"], s["ld_shared"], s["st_shared"]) == (4, 1, 128, 3)
    assert (s["fp32"], s["integer"], s["branch"], s["barrier"], s["other"]) == (64, 129, 70, 4, 2)
    assert s["total"] == 4 + 1 + 128 + 3 + 64 + 129 + 70 + 4 + 2
    bad, why = sass_check.sass_per_thread(foo, loops[:1])
    assert bad is None and "loop nests differ" in why


def _kernel(loops: list[dict[str, float]]) -> sass_counts.SassKernel:
    """A kernel of consecutive one-level loops with the given own counts (no barrier)."""
    out, insts = [], []
    for k, own in enumerate(loops):
        c = sass_counts.ClassCounts()
        for cls, n in own.items():
            c.add(cls, n)
        out.append(sass_counts.SassLoop(f".L{k}", 2 * k, 2 * k + 1, own=c))
        insts += [sass_counts.SassInst(4 * k, "FFMA"), sass_counts.SassInst(4 * k + 2, "BRA")]
    return sass_counts.SassKernel("_Z1kv", "k", out, sass_counts.ClassCounts(), insts)


def test_every_inner_loop_with_its_own_mix_is_corrected_for_unrolling() -> None:
    """gs_k3's shape: a dot product (2 loads, 1 store per FFMA) and an update (3 loads, 1
    store), 64 iterations each, 7 integer instructions an iteration without unrolling; the
    unrolled build runs each 4 a trip with 7 integer a trip (and a 1-iteration remainder).
    The second loop's correction, by hand: (7/4 - 7) x 64 = -336 integer, (1/4 - 1) x 64 =
    -48 branch."""
    it = {"integer": 7, "branch": 1}
    plain = _kernel([{"ld_global": 2, "st_global": 1, "fp32": 1, **it},
                     {"ld_global": 3, "st_global": 1, "fp32": 1, **it}])
    unrolled = _kernel([{"ld_global": 8, "st_global": 4, "fp32": 4, **it},
                        {"ld_global": 12, "st_global": 4, "fp32": 4, **it},
                        {"ld_global": 3, "st_global": 1, "fp32": 1, **it}])
    loops = [sass_check.ModelLoop(1, 1, 64.0), sass_check.ModelLoop(2, 1, 64.0)]
    (second,) = sass_check.other_loops(plain, unrolled, loops)
    assert second.factor == 4
    assert second.nounroll["integer"] == 7 and second.unrolled["integer"] == 7 / 4
    hot = sass_check.hot_loop(plain, unrolled, loops[0])
    total, _ = sass_check.sass_per_thread(plain, loops)
    sass1 = sass_check.summary(total)
    est = sass_check.unrolled_estimate(sass1, hot, [second])
    assert est["integer"] == 2 * 64 * 7 / 4
    assert est["branch"] == 2 * 64 / 4
    assert est["fp32"] == sass1["fp32"] == 128
    # two loops of one mix cannot be told apart: only the hot one is corrected
    same = _kernel([{"ld_global": 2, "st_global": 1, "fp32": 1, **it}] * 2)
    assert sass_check.other_loops(same, unrolled, loops) == []


def test_the_compute_phase_of_a_tiled_loop_lies_between_its_barriers() -> None:
    (foo, _) = sass_counts.parse_sass(_SASS)
    phase = sass_check._between_barriers(foo, foo.loops[0])
    assert phase.total == 6 and phase["ld_shared_128"] == 1 and phase["ld_global"] == 0


@pytest.mark.parametrize(
    "opcode,cls",
    [
        ("LDG.E.128.CONSTANT", "ld_global"), ("STG.E", "st_global"), ("LDS.U.128", "ld_shared_128"),
        ("LDS.64", "ld_shared_64"), ("LDS.U8", "ld_shared_32"), ("STS", "st_shared_32"),
        ("FFMA", "fp32"), ("FSETP.GT.AND", "fp32"), ("IMAD.WIDE.U32", "integer"),
        ("LEA.HI.X", "integer"), ("UIADD3", "integer"), ("ULEA", "integer"),
        ("BRA", "branch"), ("EXIT", "branch"), ("BAR.SYNC.DEFER_BLOCKING", "barrier"),
        ("MOV", "other"), ("S2R", "other"), ("HFMA2.MMA", "other"), ("MUFU.RCP", "other"),
        ("I2F.U32.RP", "other"), ("BSSY", "other"), ("LDC.64", "other"),
    ],
)  # fmt: skip
def test_sass_opcodes_fall_in_the_classes_of_the_issue(opcode: str, cls: str) -> None:
    assert sass_counts.sass_class(opcode) == cls


def test_the_models_operations_and_entry_code_are_split_into_the_same_classes() -> None:
    from cgpredict.compute import kernel_entry_insts

    cls = sass_check.model_op_class
    assert cls("fadd", "float", "") == ("fp32", 1) and cls("fmul", "float", "fma")[1] == 0
    assert cls("br", "", "cond") == ("branch", 1) and cls("br", "", "")[1] == 0
    assert cls("getelementptr", "ptr", "2") == ("integer", 2)
    assert cls("icmp", "i32", "") == ("integer", 1)
    assert cls("sitofp", "float", "") == ("other", 1)
    # an expanded operation is split as its SASS fast path is (sass_model.EXPANSION_CLASSES)
    assert sass_check.model_op_classes("fdiv", "float", "") == (
        ("branch", 1), ("fp32", 6), ("other", 3))
    assert sass_check.model_op_classes("call", "float", "sqrtf") == (
        ("branch", 1), ("fp32", 4), ("integer", 2), ("other", 3))
    for grid, arrays in ((1, 2), (2, 3)):
        assert sum(sass_check.entry_classes(grid, arrays).values()) == kernel_entry_insts(
            grid, arrays
        )


def test_nvdisasm_is_found_on_path_or_in_the_wheel_or_reported_missing(monkeypatch) -> None:
    monkeypatch.setattr(sass_counts.shutil, "which", lambda _: None)
    monkeypatch.setattr(sass_counts.sys, "path", [])
    monkeypatch.setattr(
        sass_counts.sysconfig,
        "get_paths",
        lambda: {"purelib": "/nonexistent", "platlib": "/nonexistent"},
    )
    assert sass_counts.find_nvdisasm() is None
    with pytest.raises(RuntimeError, match="pip install nvidia-cuda-nvdisasm"):
        sass_counts.disassemble(Path("/nonexistent/x.cubin"))


#: a strip loop whose one tile's staging nvcc unrolled 4 times, remainder first (the shape of
#: gemm_tiled's A tile, trimmed): entry test, remainder count test, first remainder element
#: (bounds test over the load, STS, exit test), second element, the remainder's exit and the
#: test for a 4-element trip, the 4-element loop, then the compute phase between barriers
_UNROLLED_STAGING = """\
//--------------------- .text._Z4tileP --------------------------
\t.section\t.text._Z4tileP,"ax",@progbits
_Z4tileP:
.text._Z4tileP:
        /*0000*/                   S2R R0, SR_TID.X ;
.L_x_9:
        /*0010*/                   ISETP.GE.AND P1, PT, R20, UR8, PT ;
        /*0020*/                   BSSY B1, `(.L_x_0) ;
        /*0030*/               @P1 BRA `(.L_x_1) ;
        /*0040*/                   LOP3.LUT R6, R6, 0x3, RZ, 0xc0, !PT ;
        /*0050*/                   ISETP.NE.AND P1, PT, R6, RZ, PT ;
        /*0060*/              @!P1 BRA `(.L_x_3) ;
        /*0070*/                   ISETP.GT.AND P1, PT, R4, 0x3ff, PT ;
        /*0080*/               @P1 BRA `(.L_x_5) ;
        /*0090*/                   LDG.E R9, desc[UR12][R8.64] ;
.L_x_5:
        /*00a0*/                   STS [R10], R9 ;
        /*00b0*/                   ISETP.NE.AND P1, PT, R6, 0x1, PT ;
        /*00c0*/              @!P1 BRA `(.L_x_3) ;
        /*00d0*/                   IMAD R11, R11, 0x4, R10 ;
        /*00e0*/                   LDG.E R8, desc[UR12][R8.64] ;
        /*00f0*/                   STS [R11], R8 ;
.L_x_3:
        /*0100*/                   BSYNC B0 ;
        /*0110*/                   ISETP.GE.U32.AND P1, PT, R18, 0x3, PT ;
        /*0120*/              @!P1 BRA `(.L_x_1) ;
        /*0130*/                   LEA R6, R23, UR7, 0x2 ;
.L_x_10:
        /*0140*/                   LDG.E R26, desc[UR12][R4.64] ;
        /*0150*/                   STS [R6], R26 ;
        /*0160*/              @!P1 BRA `(.L_x_10) ;
.L_x_1:
        /*0170*/                   BSYNC B1 ;
        /*0180*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0190*/                   LDS R4, [R3] ;
        /*01a0*/                   FFMA R13, R4, R4, R13 ;
        /*01b0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*01c0*/              @!P1 BRA `(.L_x_9) ;
        /*01d0*/                   EXIT ;
.L_x_2:
        /*01e0*/                   BRA `(.L_x_2);
"""


def test_the_unrolled_staging_path_of_a_one_element_thread() -> None:
    # by hand: entry 3 (ISETP BSSY BRA), remainder test 3 (LOP3 ISETP BRA), element 1 with its
    # bounds test, load, STS and exit test 6 (0x0070-0x00c0), the remainder's exit and the
    # 4-element test 3 (BSYNC ISETP BRA), the closing BSYNC 1: 16; element 2, the body's entry
    # and the 4-element loop are skipped
    (k,) = sass_counts.parse_sass(_UNROLLED_STAGING)
    strip = next(lp for lp in k.loops if lp.own["fp32"] > 0)
    path = sass_check.staging_path(k, strip)
    assert path.total == 16
    assert (path["ld_global"], path["st_shared_32"], path["branch"]) == (1, 1, 5)
    assert path["integer"] == 6 and path["other"] == 3  # 5 ISETP and LOP3; BSSY, 2 BSYNC
