"""Kernels given by --function (a whole function as one GPU kernel), whatever the optimiser
would do to the function: static or not, inlined or not, called once or from a loop."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cgpredict.errors import RegionError
from cgpredict.frontend.compiler import compile_to_ir
from cgpredict.frontend.ctext import statement_end
from cgpredict.pipeline import predict_source
from cgpredict.prediction import PredictionError, RunOptions
from cgpredict.scaling import overridable_sizes

POLYBENCH = Path(__file__).resolve().parent.parent / "polybench_c"

SAXPY = """#include <stdio.h>
#ifndef N
#define N 4096
#endif
static float x[N], y[N];
STATIC void saxpy(float a) { for (int i = 0; i < N; i++) y[i] = a * x[i] + y[i]; }
static float peek(void) { return x[3] + y[4]; }
static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
static void unused(void) { for (int i = 0; i < N; i++) y[i] = 0; }
void never(int k) { for (int i = 0; i < N; i++) y[i] = k; }
int main(int argc, char **argv) {
  for (int i = 0; i < N; i++) { x[i] = i; y[i] = 1; }
  for (int t = 0; t < CALLS; t++) saxpy(2.0f);
  if (argc > 5) never(3);
  printf("%f %f %d\\n", y[7], peek(), fact(argc + 2));
  return 0;
}
"""


def _source(tmp_path: Path, static: bool = True, calls: int = 1) -> Path:
    src = tmp_path / "sx.c"
    text = SAXPY.replace("STATIC ", "static " if static else "").replace("CALLS", str(calls))
    src.write_text(text)
    return src


def _mem(kernel) -> dict[tuple[str, str], tuple[str, float]]:
    return {(m.text, m.kind): (m.pattern, m.per_thread) for m in kernel.mem}


def _assert_same_kernels(got, ref, comp: bool = False) -> None:
    """Kernel by kernel, ``got`` predicts as ``ref``: grid, launches, blocks, memory
    instructions, time within 5 % (and, with ``comp``, computation within 5 %)."""
    for g, r in zip(got.kernels, ref.kernels):
        assert (g.grid_threads, g.launches, g.blocks) == (r.grid_threads, r.launches, r.blocks)
        assert _mem(g) == _mem(r)
        if comp:
            assert g.profile.comp_insts == pytest.approx(r.profile.comp_insts, rel=0.05)
        assert g.total_ms == pytest.approx(r.total_ms, rel=0.05)


@pytest.mark.parametrize("static", [True, False])
def test_a_function_the_optimiser_would_inline_is_one_kernel(tmp_path, static):
    rep = predict_source(_source(tmp_path, static), RunOptions(functions=("saxpy",)))
    (k,) = rep.kernels
    assert k.name == "saxpy" and k.launches == 1 and k.grid_threads == (4096, 1)
    assert k.location == "sx.c:6"  # the line of its definition
    assert _mem(k) == {("x[i]", "load"): ("coalesced", 1.0), ("y[i]", "load"): ("coalesced", 1.0),
                       ("y[i]", "store"): ("coalesced", 1.0)}


@pytest.mark.slow
def test_a_function_called_from_a_loop_is_one_launch_per_call(tmp_path):
    one = predict_source(_source(tmp_path, calls=1), RunOptions(functions=("saxpy",))).kernels[0]
    three = predict_source(_source(tmp_path, calls=3), RunOptions(functions=("saxpy",)))
    k = three.kernels[0]
    assert k.launches == 3
    # calls 2 and 3 find x and y (32 KB) in the L2 the first call filled: faster than the
    # first, never free
    assert one.total_ms < k.total_ms < 3 * one.total_ms
    assert any("still in the L2 from an earlier launch" in w for w in k.warnings)
    # with nothing kept between launches, three calls cost three times one
    from cgpredict.devices import load_device
    from cgpredict.prepared import prepare

    cold = dataclasses.replace(load_device("tk1"), l2_persist_bytes=0)
    opts = RunOptions(functions=("saxpy",))
    with prepare(_source(tmp_path, calls=3), opts) as prep:
        again = prep.analyze(opts, cold).kernels[0]
    assert again.total_ms == pytest.approx(3 * one.total_ms, rel=0.02)


def test_several_functions_are_several_kernels(tmp_path):
    rep = predict_source(_source(tmp_path), RunOptions(functions=("saxpy", "peek")))
    assert [k.name for k in rep.kernels] == ["saxpy", "peek"]
    peek = rep.kernels[1]
    assert peek.grid_threads == (1, 1) and peek.launches == 1
    assert any("single-thread kernel" in w for w in peek.warnings)
    assert set(_mem(peek)) == {("x[3]", "load"), ("y[4]", "load")}


@pytest.mark.parametrize("name, error, message", [
    ("fact", RegionError, r"--function fact is recursive \(fact -> fact\)"),
    ("unused", RegionError, r"--function unused: it never runs"),
    ("never", PredictionError, r"kernel never did not run: the program never called"),
    ("nothere", RegionError,
     r"--function nothere: no such function \(defined: fact, main, never, peek, saxpy\)"),
])
def test_functions_that_cannot_be_kernels_are_refused_in_one_line(tmp_path, name, error, message):
    with pytest.raises(error, match=message):
        predict_source(_source(tmp_path), RunOptions(functions=(name,)))


def _body(ir: str, name: str) -> list[str]:
    """The instructions of function ``name`` with metadata numbers and the module-wide
    uniquing suffixes of value names (``%indvars.iv20``) blanked."""
    lines = ir.split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("define") and f"@{name}(" in x)
    end = lines.index("}", start)
    blank = [re.sub(r"!\d+", "!N", x) for x in lines[start + 1:end]]
    return [re.sub(r"%([A-Za-z_][\w.]*?)\d+\b", r"%\1#", x) for x in blank]


def test_keeping_a_function_out_of_line_leaves_its_code_as_O1_makes_it(tmp_path):
    """The two-step compile with noinline injected gives, inside the function, exactly the
    code of a one-step -O1 compile of a source that declares it noinline itself."""
    text = (POLYBENCH / "gemm.c").read_text()
    loop = text[text.index("#pragma cgp kernel"):]
    loop = loop[loop.index("\n") + 1:]
    loop = loop[:statement_end(loop, 0)]
    body = text.replace(text[text.index("#pragma cgp kernel"):text.index(loop) + len(loop)],
                        "kern();")
    fn = f"static void kern(void) {{\n{loop}\n}}\n"
    plain = body.replace("int main(void)", fn + "int main(void)")
    marked = body.replace("int main(void)", "__attribute__((noinline)) " + fn + "int main(void)")
    (tmp_path / "plain.c").write_text(plain)
    (tmp_path / "marked.c").write_text(marked)
    unopt = compile_to_ir(tmp_path / "plain.c", tmp_path / "plain.ll", {}, noinline=("kern",))
    compile_to_ir(tmp_path / "marked.c", tmp_path / "marked.ll", {})
    assert "@kern(" in unopt
    two_step = _body((tmp_path / "plain.ll").read_text(), "kern")
    assert len(two_step) > 20
    assert two_step == _body((tmp_path / "marked.ll").read_text(), "kern")


def as_functions(text: str) -> tuple[str, list[str]]:
    """A corpus file with every '#pragma cgp kernel NAME' loop nest moved into a function
    ``static void NAME(void)`` defined before main and called where the loop was."""
    names, defs = [], []
    while True:
        m = re.search(r"^[ \t]*#pragma cgp kernel (\w+).*\n", text, re.M)
        if not m:
            break
        end = statement_end(text, m.end())
        names.append(m.group(1))
        defs.append(f"static void {m.group(1)}(void) {{\n{text[m.end():end]}\n}}\n")
        text = text[:m.start()] + f"  {m.group(1)}();" + text[end:]
    main = re.search(r"^int main\(", text, re.M).start()
    return text[:main] + "\n".join(defs) + text[main:], names


def with_parameters(text: str, names: list[str], tmp_path: Path) -> str:
    """``text`` (from as_functions) with every local of main that a kernel function reads
    passed to it by value: each identifier the compiler calls undeclared becomes a parameter
    of the type main declares it with, and each call passes it."""
    from cgpredict.errors import CompileError

    params: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
    for _ in range(8):
        src = tmp_path / "params.c"
        src.write_text(text)
        try:
            compile_to_ir(src, tmp_path / "params.ll", {})
            return text
        except CompileError as exc:
            missing = set(re.findall(r"use of undeclared identifier '(\w+)'", str(exc)))
            if not missing:
                raise
        for name in names:
            body = re.search(rf"static void {name}\((.*?)\) {{\n(.*?)\n}}\n", text, re.S)
            used = sorted(v for v in missing if re.search(rf"\b{v}\b", body.group(2)))
            for v in used:
                decl = re.search(rf"\b((?:const\s+)?(?:float|double|int|long))\s+[^;]*?\b{v}\s*=",
                                 text)
                params[name].append((decl.group(1), v))
            if not used:
                continue
            plist = ", ".join(f"{t} {v}" for t, v in params[name])
            args = ", ".join(v for _, v in params[name])
            text = text.replace(body.group(0), body.group(0).replace(
                f"static void {name}({body.group(1)})", f"static void {name}({plist})", 1))
            text = re.sub(rf"\b{name}\(([^)]*)\);", f"{name}({args});", text)
    raise AssertionError("locals of main left undeclared")


# every other corpus file: kernels that read locals of main
# get them as parameters (with_parameters); a function's grid is the tool's choice, so the
# pragma file is predicted with its grid hints removed, the tool choosing there too
EVERY = ["2dconv", "3dconv", "corr", "covar", "dct1d", "deriche", "fdtd2d", "gemver",
         "gramschmidt", "syrk_transposed", "gemm_tiled", "2mm_tiled", "3mm_tiled",
         "syrk_tiled", "syr2k_tiled"]


# deriche: its kernels read file-scope coefficients that main writes; as functions, each
# loads them before its thread loop, kernel arguments of the port as the pragma form's
# folded ones (scalar_args.hoisted_scalars, eq. (12s))
@pytest.mark.parametrize("name", EVERY)
def test_corpus_kernels_reading_main_locals_rewritten_as_functions(tmp_path, name):
    text = re.sub(r"(#pragma cgp kernel \w+) grid=\d", r"\1", (POLYBENCH / f"{name}.c").read_text())
    (tmp_path / f"{name}.c").write_text(text)
    fn_text, kernels = as_functions(text)
    fn_text = with_parameters(fn_text, kernels, tmp_path)
    src = tmp_path / f"{name}_fn.c"
    src.write_text(fn_text)
    small = {n: 32 for n in overridable_sizes(text)}
    opts = dict(work_sizes=small, trace_sizes=small)
    ref = predict_source(tmp_path / f"{name}.c", RunOptions(**opts))
    got = predict_source(src, RunOptions(functions=tuple(kernels), **opts))
    assert [k.name for k in got.kernels] == [k.name for k in ref.kernels] == kernels
    _assert_same_kernels(got, ref)


# files whose kernels use only globals (2dconv, fdtd2d, ... read locals of main)
CORPUS = ["gemm", "atax", "bicg", "mvt", "2mm", "3mm", "gesummv", "syrk", "syr2k", "mm"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_corpus_kernels_rewritten_as_functions_predict_as_their_pragmas(tmp_path, name):
    # a --function kernel has run-time loop bounds: the pragma form's without bounds=constant
    # (SYR2K's, eq. (12ct)) is its reference
    text = (POLYBENCH / f"{name}.c").read_text().replace(" bounds=constant", "")
    grids = set(re.findall(r"#pragma cgp kernel \w+ grid=(\d)", text))
    assert len(grids) == 1
    fn_text, kernels = as_functions(text)
    src = tmp_path / f"{name}_fn.c"
    src.write_text(fn_text)
    (tmp_path / f"{name}.c").write_text(text)
    small = {n: 64 for n in overridable_sizes(text)}
    opts = dict(grid=int(grids.pop()), work_sizes=small, trace_sizes=small)
    ref = predict_source(tmp_path / f"{name}.c", RunOptions(**opts))
    got = predict_source(src, RunOptions(functions=tuple(kernels), **opts))
    assert [k.name for k in got.kernels] == [k.name for k in ref.kernels] == kernels
    _assert_same_kernels(got, ref, comp=True)


def as_one_function(text: str) -> tuple[str, list[str]] | None:
    """A corpus file whose consecutive '#pragma cgp kernel' loop nests are moved, pragmas
    dropped, into one function ``static void all_nests(void)`` called where they were; None
    when host code lies between two of them."""
    spans, names = [], []
    for m in re.finditer(r"^[ \t]*#pragma cgp kernel (\w+).*\n", text, re.M):
        spans.append((m.start(), m.end(), statement_end(text, m.end())))
        names.append(m.group(1))
    if any(text[a[2]:b[0]].strip() for a, b in zip(spans, spans[1:])):
        return None
    body = "\n".join(text[s[1]:s[2]] for s in spans)
    text = text[:spans[0][0]] + "  all_nests();" + text[spans[-1][2]:]
    main = re.search(r"^int main\(", text, re.M).start()
    return (text[:main] + f"static void all_nests(void) {{\n{body}\n}}\n" + text[main:], names)


@pytest.mark.parametrize("name", ["atax", "mvt", "2mm", "3mm"])
def test_a_function_with_several_loop_nests_is_a_kernel_per_nest(tmp_path, name):
    """--function on a function holding several loop nests predicts each nest as its own
    kernel, NAME_k1, NAME_k2, ... (one launch each per call), as the pragmas did."""
    text = (POLYBENCH / f"{name}.c").read_text()
    moved = as_one_function(text)
    assert moved is not None
    fn_text, kernels = moved
    src = tmp_path / f"{name}_one.c"
    src.write_text(fn_text)
    grid = int(re.search(r"#pragma cgp kernel \w+ grid=(\d)", text).group(1))
    small = {n: 64 for n in overridable_sizes(text)}
    opts = dict(grid=grid, work_sizes=small, trace_sizes=small)
    ref = predict_source(POLYBENCH / f"{name}.c", RunOptions(**opts))
    got = predict_source(src, RunOptions(functions=("all_nests",), **opts))
    assert [k.name for k in got.kernels] == [f"all_nests_k{j + 1}" for j in range(len(kernels))]
    assert len(kernels) >= 2
    _assert_same_kernels(got, ref)


def test_nests_of_a_function_called_twice_launch_twice(tmp_path):
    src = tmp_path / "two.c"
    src.write_text("""#include <stdio.h>
#define N 1024
static float x[N], y[N], z[N];
static void two(float a) {
  for (int i = 0; i < N; i++) y[i] = a * x[i] + y[i];
  /* a comment with for ( in it */
  for (int i = 0; i < N; i++) z[i] = y[i] * 2.0f;
}
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; y[i] = 1; }
  for (int t = 0; t < 2; t++) two(2.0f);
  printf("%f\\n", z[5]);
  return 0;
}
""")
    rep = predict_source(src, RunOptions(functions=("two",)))
    assert [(k.name, k.location, k.launches) for k in rep.kernels] == [
        ("two_k1", "two.c:5", 2), ("two_k2", "two.c:7", 2)]
