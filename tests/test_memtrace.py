"""Tests of instrument/memtrace.py (``cgpredict.instrument.memtrace``): the instrumentation pass.

IR comes from tiny C files compiled with cgpredict's own flags (``compile_to_ir`` + PRELUDE),
or from inline IR strings; every instrumented module must verify with llvmlite.
"""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from cgpredict.instrument.memtrace import (
    MAX_MEM_IDS,
    InstrumentError,
    instrument,
    type_bytes,
)

from cgpredict.frontend.compiler import compile_to_ir
from cgpredict.frontend.regions import PRELUDE, mark_regions

pytestmark = pytest.mark.usefixtures("compiler")


def compile_c(tmp_path: Path, text: str, name: str = "k.c") -> str:
    """IR of ``text`` after the region rewrite, compiled as the tracer compiles it."""
    src = tmp_path / name
    src.write_text(mark_regions(text).text)
    prelude = tmp_path / "cgp_prelude.h"
    prelude.write_text(PRELUDE)
    out = tmp_path / (src.stem + ".ll")
    compile_to_ir(src, out, {}, prelude)
    return out.read_text()


def verify(ir: str) -> None:
    llvm.parse_assembly(ir).verify()


def line_no(text: str, needle: str) -> int:
    """1-based line of the only line of ``text`` containing ``needle``."""
    hits = [k + 1 for k, line in enumerate(text.split("\n")) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


# --------------------------------------------------------------------------- type_bytes


@pytest.mark.parametrize("ty, size", [
    ("i1", 1), ("i8", 1), ("i16", 2), ("i32", 4), ("i64", 8), ("i128", 16),
    ("half", 2), ("bfloat", 2), ("float", 4), ("double", 8), ("x86_fp80", 16), ("fp128", 16),
    ("ptr", 8), ("ptr addrspace(1)", 8), (" float ", 4),
    ("<4 x float>", 16), ("<2 x double>", 16), ("[3 x i16]", 6), ("[2 x [3 x float]]", 24),
    ("{ i32, float }", 8), ("{ ptr, i64 }", 16), ("[2 x <4 x i32>]", 32),
])
def test_type_bytes(ty, size):
    assert type_bytes(ty) == size


@pytest.mark.parametrize("ty", ["label", "void", "i24x", "token", ""])
def test_type_bytes_unknown(ty):
    with pytest.raises(InstrumentError, match="cannot size"):
        type_bytes(ty)


@pytest.mark.parametrize("ty", ["{ i8, i32 }", "{ double, i8 }", "[2 x { i8, i16 }]",
                                "<{ i8, i32 }>", "{ i8, <4 x float> }", "<3 x float>",
                                "{ i16, [3 x i8], i64 }", "x86_fp80", "{ i8, { i8, i32 } }"])
def test_type_bytes_matches_llvm_abi_size(ty):
    """The oracle: LLVM's own ABI size for the x86-64 data layout."""
    dl = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
    mod = llvm.parse_assembly(f'target datalayout = "{dl}"\n@g = global {ty} zeroinitializer\n')
    abi = llvm.create_target_data(dl).get_abi_size(mod.get_global_variable("g").global_value_type)
    assert type_bytes(ty) == abi


# --------------------------------------------------------------------------- regions from C

PROGRAM = """\
#include <math.h>
float a[16], b[16];
float c[4][5][6];
__attribute__((noinline)) float get(const float *p, int i) { return p[i] * 2.0f; }
__attribute__((noinline)) void nest(void) {
#pragma cgp kernel n
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 6; k++)
        c[i][j][k] += 1.0f;
}
int main(void) {
  for (int i = 0; i < 16; i++) a[i] = (float)i;
  b[0] = get(a, 3);
#pragma cgp kernel k
  for (int i = 0; i < 16; i++)
    b[i] = get(a, i) + sqrtf(a[i]) + expf(b[i]);
  float s = 0.0f;
  for (int i = 0; i < 16; i++) s += b[i];
  nest();
  return (int)s & 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory, compiler):
    ir = compile_c(tmp_path_factory.mktemp("memtrace"), PROGRAM)
    return ir, instrument(ir)


def test_instrumented_ir_verifies(program):
    ir, inst = program
    verify(ir)
    verify(inst.ir)


def test_one_mem_entry_per_static_access_in_regions(program):
    _, inst = program
    kernel_line = line_no(PROGRAM, "b[i] = get(a, i)")
    nest_line = line_no(PROGRAM, "c[i][j][k] += 1.0f")
    get_line = line_no(PROGRAM, "return p[i] * 2.0f")
    got = sorted((m.region, m.function, m.kind, m.line, m.base) for m in inst.mem)
    assert got == sorted([
        # region 0 (nest): c[i][j][k] += 1  -> one load, one store
        (0, "nest", "load", nest_line, "c"),
        (0, "nest", "store", nest_line, "c"),
        # region 1 (k): loads a[i] (sqrtf's argument; get's a[i] is in get), b[i]; stores b[i]
        (1, "main", "load", kernel_line, "a"),
        (1, "main", "load", kernel_line, "b"),
        (1, "main", "store", kernel_line, "b"),
        # the helper get(): p[i], instrumented once, for every region (region -1)
        (-1, "get", "load", get_line, "p"),
    ])
    # nothing outside the regions: the init loop (store a[i]), b[0] = ..., the sum loop (load b)
    assert [m.id for m in inst.mem] == list(range(len(inst.mem)))
    assert all((m.bytes, m.type) == (4, "float") for m in inst.mem)
    assert all(Path(m.file).name == "k.c" and m.column > 0 for m in inst.mem)


def test_mem_calls_in_ir(program):
    _, inst = program
    # one recording call per access, through the inline check; the check itself calls once
    assert inst.ir.count("call void @__cgp_mem_fast(i64 ") == len(inst.mem)
    assert inst.ir.count("call void @__cgp_mem(i64 ") == 1
    for m in inst.mem:  # the static id in the top 16 bits of each record
        assert re.search(rf"= or i64 %__cgp_a\d+, {m.id << 48}\n", inst.ir)


def test_loop_table_of_a_three_deep_nest(program):
    _, inst = program
    nest = [lp for lp in inst.loops if lp.region == 0]
    lines = [line_no(PROGRAM, "for (int i = 0; i < 4; i++)"),
             line_no(PROGRAM, "for (int j = 0; j < 5; j++)"),
             line_no(PROGRAM, "for (int k = 0; k < 6; k++)")]
    assert [(lp.depth, lp.line, lp.function) for lp in nest] == [
        (1, lines[0], "nest"), (2, lines[1], "nest"), (3, lines[2], "nest")]
    assert nest[0].parent == -1
    assert nest[1].parent == nest[0].id
    assert nest[2].parent == nest[1].id
    (k_loop,) = [lp for lp in inst.loops if lp.region == 1]
    assert (k_loop.depth, k_loop.parent, k_loop.function) == (1, -1, "main")
    assert [lp.id for lp in inst.loops] == list(range(len(inst.loops)))
    # the runtime's tables: parents and depths in loop-id order
    parents = ", ".join(f"i32 {lp.parent}" for lp in inst.loops)
    depths = ", ".join(f"i32 {lp.depth}" for lp in inst.loops)
    assert f"@__cgp_loop_parent = constant [{len(inst.loops)} x i32] [{parents}]" in inst.ir
    assert f"@__cgp_loop_depth = constant [{len(inst.loops)} x i32] [{depths}]" in inst.ir
    for lp in inst.loops:  # one inline probe per loop header; it calls the runtime once
        assert inst.ir.count(f"call void @__cgp_loop_fast(i64 {lp.id}, ") == 1
    assert inst.ir.count("call void @__cgp_loop(") == 1
    # the host loops of main (init, sum) are not in the table
    assert len(inst.loops) == 4


def test_helper_is_traced_and_libm_is_external(program):
    _, inst = program
    assert inst.helpers == ("get",)
    calls = {(c.region, c.function, c.callee, c.traced) for c in inst.calls}
    assert calls == {(1, "main", "get", True), (1, "main", "sqrtf", False),
                     (1, "main", "expf", False)}
    helper_blocks = [b for b in inst.blocks if b.function == "get"]
    assert helper_blocks and all(b.region == -1 for b in helper_blocks)
    # helper blocks count through the runtime (only while a region runs)
    for b in helper_blocks:
        assert f"call void @__cgp_bb_h(i32 {b.id})" in inst.ir
    (m,) = [m for m in inst.mem if m.function == "get"]
    assert m.block in {b.id for b in helper_blocks}


def test_block_table(program):
    _, inst = program
    assert [b.id for b in inst.blocks] == list(range(len(inst.blocks)))
    assert {b.region for b in inst.blocks} == {-1, 0, 1}
    nb = len(inst.blocks)
    assert f"@__cgp_bbc = global [{nb} x i64] zeroinitializer" in inst.ir
    assert f"@__cgp_nbb = constant i32 {nb}" in inst.ir
    # the k loop body executes: 2 loads, 1 store, calls get, sqrtf, expf once each
    (body,) = [b for b in inst.blocks if b.region == 1 and any(o[0] == "store" for o in b.ops)]
    ops = {(o, t, d): n for o, t, d, n in body.ops}
    assert ops[("load", "float", "")] == 2
    assert ops[("store", "float", "")] == 1
    assert {d for (o, _, d) in ops if o == "call"} == {"get", "sqrtf", "expf"}
    for b in inst.blocks:
        for m in inst.mem:
            if m.block == b.id:
                assert (m.kind, m.type, "") in {(o, t, d) for o, t, d, _ in b.ops}


def test_input_is_not_mutated(program):
    ir, inst = program
    assert "__cgp_mem" not in ir and inst.ir != ir


def test_function_mode_instruments_a_whole_function(tmp_path):
    text = """\
float v[32];
__attribute__((noinline)) void scale(float f) {
  for (int i = 0; i < 32; i++)
    v[i] = v[i] * f;
}
int main(void) {
  for (int i = 0; i < 32; i++) v[i] = (float)i;
  scale(2.0f);
  return 0;
}
"""
    ir = compile_c(tmp_path, text)
    inst = instrument(ir, {"scale": 0})
    verify(inst.ir)
    assert sorted((m.function, m.kind, m.region) for m in inst.mem) == [
        ("scale", "load", 0), ("scale", "store", 0)]
    assert [(lp.function, lp.depth, lp.parent) for lp in inst.loops] == [("scale", 1, -1)]
    assert {b.function for b in inst.blocks} == {"scale"}
    body = re.search(r"define [^\n]*@scale\(.*?\n}\n", inst.ir, re.DOTALL).group(0)
    assert body.count("call void @__cgp_region_begin(i32 0)") == 1
    assert body.count("call void @__cgp_region_end(i32 0)") == body.count("\n  ret ")
    assert "declare void @__cgp_region_begin(i32)" in inst.ir


def test_function_mode_unknown_function(tmp_path):
    ir = compile_c(tmp_path, "int main(void) { return 0; }\n")
    with pytest.raises(InstrumentError, match="no function named 'nope'"):
        instrument(ir, {"nope": 0})


def test_no_region_instruments_nothing(tmp_path):
    ir = compile_c(tmp_path, "int a[4];\nint main(void) { for (int i = 0; i < 4; i++) a[i] = i;"
                             " return a[2] - 2; }\n")
    inst = instrument(ir)
    verify(inst.ir)
    assert (inst.mem, inst.loops, inst.blocks, inst.calls, inst.helpers) == ((), (), (), (), ())


def test_max_mem_ids_matches_runtime_tags():
    from cgpredict.frontend import tracefile

    assert MAX_MEM_IDS == tracefile.TAG_MARKERS


# --------------------------------------------------------------------------- inline IR

_IR_HEAD = """\
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
@g = dso_local global i64 0, align 8
"""


def _fn_ir(body: str) -> str:
    return _IR_HEAD + f"define dso_local void @f(ptr noundef %p) {{\nentry:\n{body}  ret void\n}}\n"


def test_inline_ir_load_store_kinds_and_sizes():
    ir = _fn_ir("  %x = load double, ptr %p, align 8\n"
                "  store i16 7, ptr %p, align 2\n"
                "  %y = load volatile <4 x float>, ptr %p, align 16\n"
                "  store ptr %p, ptr @g, align 8\n"
                "  %z = load i8, ptr getelementptr inbounds ([4 x i8], ptr @g, i64 0, i64 2), align 1\n")
    verify(ir)
    inst = instrument(ir, {"f": 0})
    verify(inst.ir)
    assert [(m.kind, m.type, m.bytes) for m in inst.mem] == [
        ("load", "double", 8), ("store", "i16", 2), ("load", "<4 x float>", 16),
        ("store", "ptr", 8), ("load", "i8", 1)]
    assert [m.base for m in inst.mem][3:] == ["g", "g"]


@pytest.mark.parametrize("store, nbytes", [
    ("store <2 x float> <float 1.000000e+00, float 2.000000e+00>, ptr %p, align 8", 8),
    ("store { i32, i32 } { i32 1, i32 2 }, ptr %p, align 4", 8),
    ("store i64 ptrtoint (ptr @g to i64), ptr %p, align 8", 8),
])
def test_store_of_a_constant_aggregate(store, nbytes):
    ir = _fn_ir(f"  {store}\n")
    verify(ir)
    inst = instrument(ir, {"f": 0})
    assert [m.bytes for m in inst.mem] == [nbytes]
    verify(inst.ir)


def test_atomic_load_and_store(tmp_path):
    text = """\
int x[8];
int main(void) {
  int s = 0;
#pragma cgp kernel
  for (int i = 0; i < 8; i++) {
    s += __atomic_load_n(&x[i], __ATOMIC_ACQUIRE);
    __atomic_store_n(&x[i], s, __ATOMIC_RELEASE);
  }
  return s;
}
"""
    inst = instrument(compile_c(tmp_path, text))
    assert [m.kind for m in inst.mem] == ["load", "store"]
    verify(inst.ir)


def test_cast_detail_has_no_trailing_comma(tmp_path):
    text = """\
float a[8];
double d[8];
int main(void) {
#pragma cgp kernel
  for (int i = 0; i < 8; i++) d[i] = (double)a[i];
  return 0;
}
"""
    inst = instrument(compile_c(tmp_path, text))
    casts = {(o, t, d) for b in inst.blocks for o, t, d, _ in b.ops if o == "fpext"}
    assert casts == {("fpext", "float", "double")}
