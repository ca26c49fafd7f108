"""Tests of cgpredict.scalar_args: the kernel arguments a port passes for the C's file-scope
scalar variables and their constant-bank loads (eq. (12s)).

Eq. (12u), the FMUL a port keeps for a folded scalar of value 1 used as a factor: hand
counts on source text, and a traced kernel of Deriche's sum shape (the sm_90 SASS of
deriche_hsum and deriche_vsum: 2 FP32 instructions a thread, the IR 1).

Oracles: hand-written IR debug information (a DIGlobalVariable of a DIBasicType that the
module no longer defines is a folded scalar; an array, a const scalar or a defined global is
not); a traced kernel of our own; and the hand count of the constant-bank loads of GEMM's
sm_90 SASS (validation/cuda/gemm.cu without unrolling: alpha at c[0x0][0x21c] and beta at
c[0x0][0x220] loaded once each, a ULDC)."""

from __future__ import annotations

from pathlib import Path

from cgpredict.machine_code import kept_factors, prologue_insts
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.scalar_args import (
    SCALAR_ARG_LOAD_INSTS,
    factor_uses,
    folded_scalars,
    hoisted_scalars,
    kept_factor_insts,
    kernel_text,
    named_in,
    scalar_arg_insts,
    scalar_args,
    unit_scalars,
)

IR = """\
@A = internal global [64 x float] zeroinitializer, align 16, !dbg !0
@gain = internal global float 0.0, align 4, !dbg !30
!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression())
!1 = distinct !DIGlobalVariable(name: "A", line: 5, type: !10, isLocal: true)
!5 = !DIBasicType(name: "float", size: 32, encoding: DW_ATE_float)
!10 = !DICompositeType(tag: DW_TAG_array_type, baseType: !5, size: 2048, elements: !11)
!20 = distinct !DIGlobalVariable(name: "beta", line: 28, type: !5, isLocal: true)
!22 = distinct !DIGlobalVariable(name: "alpha", line: 27, type: !5, isLocal: true)
!24 = distinct !DIGlobalVariable(name: "zeros", line: 6, type: !10, isLocal: true)
!26 = distinct !DIGlobalVariable(name: "pi", line: 7, type: !27, isLocal: true)
!27 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !5)
!31 = distinct !DIGlobalVariable(name: "gain", line: 8, type: !5, isLocal: true)
"""


def test_a_folded_scalar_is_a_basic_typed_variable_the_module_no_longer_defines() -> None:
    """alpha and beta: folded floats. A (defined), zeros (an array), pi (const) and gain
    (still a global: the program writes it) are not."""
    assert folded_scalars(IR) == frozenset({"alpha", "beta"})
    assert folded_scalars("") == frozenset()


def test_a_scalar_counts_where_the_kernels_lines_name_it_outside_comments() -> None:
    src = "a\n  C[i] *= beta; // alpha\n  /* alpha */ x = alphabet;\nD = alpha;\n"
    names = frozenset({"alpha", "beta"})
    assert named_in(src, 2, 3, names) == frozenset({"beta"})
    assert named_in(src, 1, 4, names) == names


def test_gemms_sass_loads_each_scalar_argument_once() -> None:
    """Hand count of the constant-bank loads of GEMM's kernel (plain port, no unrolling):
    LDC R1 c[0x28] (stack pointer), ULDC.64 c[0x210] (ni, nj: the guard's sizes), ULDC.64
    c[0x208] (memory descriptor), ULDC c[0x220] (beta), LDC c[0x218] (nk, the loop bound),
    ULDC c[0x21c] (alpha); the rest are pointers and blockDim: 2 for the two scalars."""
    scalar_loads = ["ULDC c[0x0][0x220]", "ULDC c[0x0][0x21c]"]
    assert scalar_arg_insts(2) == len(scalar_loads) == 2 * SCALAR_ARG_LOAD_INSTS
    assert prologue_insts(True, 2) == prologue_insts(True) + 2


KERNEL = """\
#define N 256
#pragma cgp trace N=256
static float A[N], B[N];
static float alpha = 1.5f;
static float beta = 1.2f;
static const float pi = 3.14f;
int main(void) {
  for (int i = 0; i < N; i++) A[i] = i * beta;
#pragma cgp kernel scale grid=1
  for (int i = 0; i < N; i++) B[i] = alpha * A[i] + pi; /* beta */
  return B[3] != 12345.0f ? 0 : 1;
}
"""


def test_a_kernel_of_our_own_reads_one_scalar_argument(tmp_path: Path) -> None:
    """alpha (folded, read by the kernel): 1; beta (folded, read before the kernel and
    named in it only in a comment) and pi (const: a constant in a port too): none."""
    path = tmp_path / "k.c"
    path.write_text(KERNEL)
    with prepare(path, RunOptions(device="h100")) as prep:
        assert folded_scalars(prep.trace.header.ir_text) >= {"alpha", "beta"}
        assert scalar_args(prep.trace, 0) == 1


AS_FUNCTIONS = """\
#define N 256
#pragma cgp trace N=256
static float A[N], B[N];
static float gain, bias;
static float alpha = 1.5f;
static float total;
static void scale(void) {
  for (int i = 0; i < N; i++) B[i] = gain * A[i] + bias + alpha; /* offset */
}
static void accumulate(void) {
  for (int i = 0; i < N; i++) total += B[i];
}
static float first(void) { return gain * A[0]; }
int main(int argc, char **argv) {
  gain = argc * 0.5f;
  bias = argc * 0.25f;
  for (int i = 0; i < N; i++) A[i] = i;
  scale();
  accumulate();
  return (B[3] + total + first()) != 12345.0f ? 0 : 1;
}
"""


def test_a_unit_scalar_is_one_every_assignment_sets_to_the_literal_1() -> None:
    src = """static float c1, c2, a1, g = 1.0f, h = 2.0f;
    /* c1 = 3; */
    int main(void) { float k = 0.5f; a1 = k; c1 = 1.0f; c2 = 1; c1 = c2 = 1; return 0; }"""
    names = frozenset(("c1", "c2", "a1", "g", "h", "never"))
    assert unit_scalars(src, names) == {"c1", "c2", "g"}


def test_a_use_as_a_factor_is_the_name_beside_a_star() -> None:
    src = "x = c1 * (a + b);\ny = a *c1 + c1;\nc1 *= 2; // c1 * 3\nz = c10 * a;"
    assert factor_uses(src, 1, 4, frozenset(("c1",))) == {1: 1, 2: 1}


def test_a_use_counts_once_per_run_of_its_most_run_block() -> None:
    assert kept_factor_insts((((4, 5), 2), ((6,), 1)), {4: 1.0, 5: 0.5, 6: 64.0}) == 66.0


SUM = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], B[N][N], C[N][N];
static float c1, alpha;
int main(void) {
  c1 = 1.0f;
  alpha = 1.5f;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = i; B[i][j] = j; }
#pragma cgp kernel sum grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = c1 * (A[i][j] + B[i][j]) * alpha;
  return C[3][3] != 12345.0f ? 0 : 1;
}
"""


def test_a_function_kernel_reads_the_scalars_main_writes_as_arguments(tmp_path: Path) -> None:
    """As functions the kernels keep the globals main writes: ``scale`` loads gain and bias
    once, before its loop (hoisted), and names the folded alpha in its body: 3 arguments,
    as a port passes them. ``accumulate`` stores total (a reduction, no argument); ``first``
    has no loop: its single thread's load of gain is its own."""
    path = tmp_path / "f.c"
    path.write_text(AS_FUNCTIONS)
    opts = RunOptions(device="h100", functions=("scale", "accumulate", "first"))
    with prepare(path, opts) as prep:
        h = prep.trace.header
        assert folded_scalars(h.ir_text) == frozenset({"alpha"})
        assert hoisted_scalars(h, 0) == frozenset({"gain", "bias"})
        assert "offset" in kernel_text(h, 0) and "total" in kernel_text(h, 1)
        assert [scalar_args(prep.trace, r) for r in range(3)] == [3, 0, 0]


def test_a_kernel_keeps_one_fmul_per_thread_for_its_unit_factor(tmp_path: Path) -> None:
    """c1 (1: folded away with its multiply) keeps one FMUL per thread; alpha (1.5) stays
    an immediate operand of the IR's fmul: none."""
    path = tmp_path / "k.c"
    path.write_text(SUM)
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        kept = kept_factors(tr, 0)
        assert [n for _, n in kept] == [1]
        counts = tr.bb_counts.sum(axis=0)
        threads = float(max(counts[b] for b in kept[0][0]))  # the body: once per thread
        per_thread = {b: float(n) / threads for b, n in enumerate(counts)}
        assert kept_factor_insts(kept, per_thread) == 1.0
