"""Tests of cgpredict.frontend.tracer (SPEC §2.1): tracing PolyBench kernels at small sizes,
with the number of memory events derived by hand from each loop nest, and every kind of bad input.

Derivations follow what clang -O1 (cgpredict's IR_FLAGS: no unrolling, no vectorisation, no
load PRE) makes of the C: a value that stays in a register across a loop is loaded/stored once
(`trace-info` lists the static accesses that remain, with their dynamic counts)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

from cgpredict.errors import (
    CompileError,
    OutputExistsError,
    RegionError,
    ToolchainError,
    TraceRunError,
)
from cgpredict.frontend import compiler as cc
from cgpredict.frontend.summary import summarize
from cgpredict.frontend.tracefile import (
    ADDRESS_MASK,
    TAG_BEGIN,
    TAG_END,
    TAG_EXIT,
    TAG_LOOP,
    TAG_MARKERS,
)
from cgpredict.frontend.tracer import TraceOptions, trace_program

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def tags(trace) -> np.ndarray:
    return np.asarray(trace.events) >> np.uint64(48)


def mem_events(trace) -> int:
    """Memory events: records whose tag is a static instruction id (below the marker tags)."""
    return int((tags(trace) < TAG_MARKERS).sum())


def src_line(path: Path, needle: str) -> int:
    """1-based line of the only line of ``path`` that contains ``needle``."""
    hits = [k + 1 for k, line in enumerate(path.read_text().split("\n")) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def mem_counts(summary) -> dict[tuple[str, str, int], int]:
    """{(kind, source text, line): dynamic count} of a region summary."""
    out = {}
    for m in summary.mem:
        key = (m.kind, m.text, int(m.location.split(":")[1]))
        assert key not in out
        out[key] = m.count
    return out


def stream_counts(trace, region_summary) -> dict[int, int]:
    """Per static instruction id: its records in the event stream."""
    t = tags(trace)
    return {m.id: int((t == m.id).sum()) for m in region_summary.mem}


def trace_file(tmp_path, name, macros, **kw):
    return trace_program(POLYBENCH / name, tmp_path / (Path(name).stem + ".cgptrace"),
                         TraceOptions(macros={k: str(v) for k, v in macros.items()}, **kw))


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- GEMM

GEMM = POLYBENCH / "gemm.c"


def gemm_expected(ni, nj, nk):
    """GEMM's loop nest: for i < NI, for j < NJ { C[i][j] *= beta; for k < NK C[i][j] += ... }.

    Per (i, j): `C[i][j] *= beta` loads C[i][j] once and stores it (NK is a run-time bound
    in the port, frontend.loop_bounds: the k loop may run no iteration, so that store stays,
    as in nvcc's code); the k loop keeps C[i][j] in a register (a phi in the IR) and loads
    A[i][k] and B[k][j] once per k; a single store of C[i][j] follows the k loop. alpha and
    beta are static and never written: constants, no loads.
    """
    scale, update = src_line(GEMM, "C[i][j] *= beta;"), src_line(GEMM, "C[i][j] += alpha")
    return {
        ("load", "C[i][j]", scale): ni * nj,
        ("store", "C[i][j]", scale): ni * nj,
        ("store", "C[i][j]", update): ni * nj,
        ("load", "A[i][k]", update): ni * nj * nk,
        ("load", "B[k][j]", update): ni * nj * nk,
    }  # total: NI*NJ*(3 + 2*NK)


@pytest.fixture(scope="module", params=[(16, 16, 16), (24, 24, 24), (8, 12, 20)],
                ids=lambda s: "x".join(map(str, s)))
def gemm(request, tmp_path_factory):
    ni, nj, nk = request.param
    tr = trace_file(tmp_path_factory.mktemp("gemm"), "gemm.c", {"NI": ni, "NJ": nj, "NK": nk})
    return request.param, tr


def test_gemm_memory_events(gemm):
    (ni, nj, nk), tr = gemm
    assert mem_events(tr) == ni * nj * (3 + 2 * nk)
    assert mem_events(tr) == sum(gemm_expected(ni, nj, nk).values())


def test_gemm_per_instruction_counts(gemm):
    (ni, nj, nk), tr = gemm
    (s,) = summarize(tr)
    assert mem_counts(s) == gemm_expected(ni, nj, nk)
    # the block counts behind the summary agree with the recorded stream, record for record
    assert stream_counts(tr, s) == {m.id: m.count for m in s.mem}
    assert all(m.bytes == 4 for m in s.mem)


def test_gemm_loops_and_markers(gemm):
    (ni, nj, nk), tr = gemm
    (s,) = summarize(tr)
    assert (s.name, s.launches, s.recorded_launches) == ("gemm", 1, 1)
    text = GEMM.read_text().split("\n")
    pragma = src_line(GEMM, "#pragma cgp kernel gemm")
    lines = [pragma + 1, pragma + 2, pragma + 4]  # the for lines of i, j and k
    for line, v in zip(lines, "ijk"):
        assert f"for (int {v} = 0;" in text[line - 1]
    assert [(lp.depth, lp.line, lp.entries, lp.mean_trip) for lp in s.loops] == [
        (1, lines[0], 1, ni), (2, lines[1], ni, nj), (3, lines[2], ni * nj, nk)]
    assert [lp.iterations for lp in s.loops] == [ni, ni * nj, ni * nj * nk]
    t = tags(tr)
    # markers: BEGIN, END, and for the loops of depth <= 2 one LOOP record per iteration and
    # one EXIT record per entry (the i loop: NI iterations, 1 entry; j: NI*NJ, NI)
    assert (t == TAG_BEGIN).sum() == (t == TAG_END).sum() == 1
    assert (t == TAG_LOOP).sum() == ni + ni * nj
    assert (t == TAG_EXIT).sum() == 1 + ni
    assert len(tr.events) == mem_events(tr) + (ni + ni * nj) + (1 + ni) + 2
    assert s.events == len(tr.events) and t[0] == TAG_BEGIN and t[-1] == TAG_END
    # the j loop's records carry the iteration index: 0..NJ-1, NI times
    j_loop = s.loops[1].id
    loop_recs = np.asarray(tr.events)[t == TAG_LOOP]
    payload = loop_recs & np.uint64(ADDRESS_MASK)
    j_idx = (payload & np.uint64(0xFFFFFFFF))[(payload >> np.uint64(32)) == j_loop]
    assert j_idx.tolist() == list(range(nj)) * ni


def test_gemm_addresses(gemm):
    """Each access's addresses follow its subscript: B[k][j] is 4*(k*NJ + j) past B[0][0]."""
    (ni, nj, nk), tr = gemm
    (s,) = summarize(tr)
    ev = np.asarray(tr.events)
    t = tags(tr)
    i, j, k = np.meshgrid(np.arange(ni), np.arange(nj), np.arange(nk), indexing="ij")
    expected = {"A[i][k]": 4 * (i * nk + k), "B[k][j]": 4 * (k * nj + j)}
    for m in s.mem:
        addr = (ev[t == m.id] & np.uint64(ADDRESS_MASK)).astype(np.int64)
        rel = addr - addr.min()
        if m.text in expected:
            assert rel.tolist() == expected[m.text].ravel().tolist(), m.text
        else:  # C[i][j], once per (i, j)
            assert rel.tolist() == (4 * (i[:, :, 0] * nj + j[:, :, 0])).ravel().tolist()


# --------------------------------------------------------------------------- ATAX

ATAX = POLYBENCH / "atax.c"


def atax_expected(nx, ny):
    """Kernel 1: for i < NX { tmp[i] = 0; for j < NY tmp[i] += A[i][j] * x[j]; }
    tmp[i] lives in a register across the j loop and one store of tmp[i] follows the loop;
    the `= 0` store stays (NY is a run-time bound in the port: the loop may run no
    iteration); A[i][j] and x[j] are loaded per (i, j).
    Kernel 2 is the same with the roles of i/j, tmp/y swapped: for j < NY { y[j] = 0; for i < NX
    y[j] += A[i][j] * tmp[i]; }."""
    l1, l2 = src_line(ATAX, "tmp[i] += A[i][j] * x[j];"), src_line(ATAX, "y[j] += A[i][j]")
    z1, z2 = src_line(ATAX, "tmp[i] = 0.0f;"), src_line(ATAX, "y[j] = 0.0f;")
    return (
        {("store", "tmp[i]", z1): nx, ("store", "tmp[i]", l1): nx,
         ("load", "A[i][j]", l1): nx * ny, ("load", "x[j]", l1): nx * ny},
        {("store", "y[j]", z2): ny, ("store", "y[j]", l2): ny,
         ("load", "A[i][j]", l2): nx * ny, ("load", "tmp[i]", l2): nx * ny},
    )


@pytest.mark.parametrize("nx, ny", [(16, 24), (40, 8)])
def test_atax(tmp_path, nx, ny):
    tr = trace_file(tmp_path, "atax.c", {"NX": nx, "NY": ny})
    k1, k2 = summarize(tr)
    e1, e2 = atax_expected(nx, ny)
    assert (k1.name, k2.name) == ("atax_k1", "atax_k2")
    assert mem_counts(k1) == e1 and mem_counts(k2) == e2
    assert mem_events(tr) == 2 * (nx + ny) + 4 * nx * ny == sum(e1.values()) + sum(e2.values())
    assert stream_counts(tr, k1) == {m.id: m.count for m in k1.mem}
    assert [(lp.depth, lp.entries, lp.mean_trip) for lp in k1.loops] == [(1, 1, nx), (2, nx, ny)]
    assert [(lp.depth, lp.entries, lp.mean_trip) for lp in k2.loops] == [(1, 1, ny), (2, ny, nx)]
    # one launch per kernel, in source order
    assert tr.launches["region"].tolist() == [0, 1]
    # events per launch: memory + LOOP records (iterations of both loops) + EXIT records
    # (entries of both loops) + BEGIN/END
    assert tr.launches["n_events"].tolist() == [
        sum(e1.values()) + (nx + nx * ny) + (1 + nx) + 2,
        sum(e2.values()) + (ny + nx * ny) + (1 + ny) + 2]


# --------------------------------------------------------------------------- 2DCONV

CONV = POLYBENCH / "2dconv.c"


@pytest.mark.parametrize("ni, nj", [(10, 12), (20, 7)])
def test_2dconv(tmp_path, ni, nj):
    """for 1 <= i < NI-1, for 1 <= j < NJ-1: B[i][j] = 9 weighted A[i+di][j+dj].

    (NI-2)*(NJ-2) interior points, each 9 loads of A and 1 store of B; no load is shared
    between neighbouring points (load PRE is off, so A[i][j+1] of one j is not carried into
    the next as A[i][j]): 10 * (NI-2) * (NJ-2) memory events, 10 static instructions."""
    tr = trace_file(tmp_path, "2dconv.c", {"NI": ni, "NJ": nj})
    (s,) = summarize(tr)
    points = (ni - 2) * (nj - 2)
    line = src_line(CONV, "B[i][j] = c11")
    subscripts = [f"A[i{di}][j{dj}]" for di in ("-1", "", "+1") for dj in ("-1", "", "+1")]
    expected = {("load", a, line): points for a in subscripts}
    expected[("store", "B[i][j]", line)] = points
    assert mem_counts(s) == expected
    assert mem_events(tr) == 10 * points
    assert [(lp.depth, lp.entries, lp.mean_trip) for lp in s.loops] == [
        (1, 1, ni - 2), (2, ni - 2, nj - 2)]


# ------------------------------------------------------------------------- helpers, libm, launches

HELPER_C = """\
#include <math.h>
#include <stdio.h>
#ifndef N
#define N 16
#endif
float a[N], b[N];
__attribute__((noinline)) float twice(const float *p, int i) { return 2.0f * p[i]; }
int main(void) {
  for (int i = 0; i < N; i++) a[i] = (float)i;
  b[0] = twice(a, 1); /* outside the region: not traced */
#pragma cgp kernel k
  for (int i = 0; i < N; i++)
    b[i] = twice(a, i) + sqrtf(b[i]);
  printf("%f\\n", b[3]);
  return 0;
}
"""


def test_helper_function_is_traced_and_libm_is_external(tmp_path):
    src = write(tmp_path, "helper.c", HELPER_C)
    tr = trace_program(src, tmp_path / "h.cgptrace", TraceOptions(macros={"N": "20"}))
    (s,) = summarize(tr)
    body, helper = src_line(src, "b[i] = twice(a, i)"), src_line(src, "return 2.0f * p[i]")
    # per iteration: twice() loads p[i]; the region loads b[i] (for sqrtf) and stores b[i]
    assert mem_counts(s) == {("load", "p[i]", helper): 20, ("load", "b[i]", body): 20,
                             ("store", "b[i]", body): 20}
    assert mem_events(tr) == 60  # the call of twice() before the region adds nothing
    assert stream_counts(tr, s) == {m.id: m.count for m in s.mem}
    assert s.traced_helpers == ("twice",)
    assert "sqrtf" in s.external_calls and "twice" not in s.external_calls
    assert tr.header.helpers == ("twice",)
    (helper_mem,) = [m for m in tr.header.mem if m.function == "twice"]
    assert helper_mem.region == -1


HEAP_C = """\
#include <stdlib.h>
int main(void) {
  char *pad = malloc(3);
  float *a = malloc(37 * sizeof(float)), *b = calloc(37, sizeof(float));
#pragma cgp kernel k
  for (int i = 0; i < 37; i++)
    b[i] = a[i] + (float)pad[0];
  int r = (int)b[3];
  free(a); free(b); free(pad);
  return r;
}
"""


def test_heap_arrays_are_aligned_like_cudamalloc(tmp_path):
    """malloc/calloc in the traced program return 256-byte aligned blocks, as cudaMalloc does,
    so the first element of every heap array starts a 128-byte line."""
    src = write(tmp_path, "heap.c", HEAP_C)
    tr = trace_program(src, tmp_path / "heap.cgptrace", TraceOptions())
    ev = np.asarray(tr.events)
    mem = ev[(ev >> 48) < TAG_MARKERS]
    for sid in np.unique(mem >> 48):
        first = int((mem[(mem >> 48) == sid] & ADDRESS_MASK).min())
        if tr.header.mem[int(sid)].base.startswith(("a[", "b[")):
            assert first % 256 == 0


HOST_LOOP_C = """\
#include <stdio.h>
float a[16];
int main(void) {
  for (int rep = 0; rep < 3; rep++) {
#pragma cgp kernel k
    for (int i = 0; i < 16; i++)
      a[i] = a[i] + 1.0f;
  }
  printf("%f\\n", a[5]);
  return 0;
}
"""
PER_LAUNCH = 16 + 16 + 16 + 1 + 2  # 16 loads, 16 stores, 16 LOOP records, 1 EXIT, BEGIN, END


@pytest.mark.parametrize("max_launches, recorded", [(0, [1, 1, 1]), (1, [1, 0, 0])])
def test_region_in_a_host_loop(tmp_path, max_launches, recorded):
    src = write(tmp_path, "host.c", HOST_LOOP_C)
    tr = trace_program(src, tmp_path / "h.cgptrace", TraceOptions(max_launches=max_launches))
    assert tr.launches["region"].tolist() == [0, 0, 0]
    assert tr.launches["launch"].tolist() == [0, 1, 2]
    assert tr.launches["recorded"].tolist() == recorded
    assert tr.launches["n_events"].tolist() == [PER_LAUNCH * r for r in recorded]
    assert len(tr.events) == PER_LAUNCH * sum(recorded)
    assert mem_events(tr) == 32 * sum(recorded)
    for k in range(3):
        ev = tr.launch_events(k)
        assert len(ev) == PER_LAUNCH * recorded[k]
        if recorded[k]:
            assert int(ev[0]) >> 48 == TAG_BEGIN and int(ev[-1]) >> 48 == TAG_END
            assert int(ev[0]) & 0xFFFFFFFF == k
    # block and loop counts are kept for every launch, recorded or not
    assert tr.bb_counts.shape[0] == 3 and tr.bb_counts.sum() > 0
    assert (tr.bb_counts == tr.bb_counts[0]).all()
    assert tr.loop_iters[:, 0].tolist() == [16, 16, 16]
    assert tr.loop_entries[:, 0].tolist() == [1, 1, 1]
    (s,) = summarize(tr)
    assert (s.launches, s.recorded_launches) == (3, sum(recorded))
    assert {m.count for m in s.mem} == {48}  # counts over all 3 launches
    assert [(lp.entries, lp.mean_trip) for lp in s.loops] == [(3, 16)]
    assert tr.header.max_launches == max_launches


def test_function_region(tmp_path):
    src = write(tmp_path, "fn.c", """\
float v[32];
__attribute__((noinline)) void scale(float f) {
  for (int i = 0; i < 32; i++)
    v[i] = v[i] * f;
}
int main(void) {
  for (int i = 0; i < 32; i++) v[i] = (float)i;
  scale(2.0f);
  scale(3.0f);
  return 0;
}
""")
    tr = trace_program(src, tmp_path / "f.cgptrace", TraceOptions(functions=("scale",)))
    (s,) = summarize(tr)
    assert (s.name, s.launches) == ("scale", 2)
    assert mem_events(tr) == 2 * (32 + 32)
    assert [(lp.entries, lp.mean_trip) for lp in s.loops] == [(2, 32)]
    with pytest.raises(RegionError, match="--function nope: no such function.*scale"):
        trace_program(src, tmp_path / "g.cgptrace", TraceOptions(functions=("nope",)))


def test_header_records_the_source(tmp_path):
    tr = trace_file(tmp_path, "gemm.c", {"NI": 4, "NJ": 4, "NK": 4})
    h = tr.header
    assert h.source_name == "gemm.c" and h.source_text == GEMM.read_text()
    assert h.macros == {"NI": "4", "NJ": "4", "NK": "4"}
    assert "-O1" in h.flags and h.compiler
    assert [(r.name, r.function, r.line) for r in h.regions] == [
        ("gemm", "main", src_line(GEMM, "#pragma cgp kernel gemm") + 1)]
    assert "checksum C" in h.stdout_tail
    assert "define" in h.ir_text and "__cgp_mem" not in h.ir_text


# --------------------------------------------------------------------------- bad input


def test_compile_error_names_the_users_file(tmp_path):
    src = write(tmp_path, "bad.c", "int main(void) {\n#pragma cgp kernel\n"
                                   "  for (int i = 0; i < 4; i++) undefined_var += i;\n"
                                   "  return 0;\n}\n")
    with pytest.raises(CompileError) as exc:
        trace_program(src, tmp_path / "o.cgptrace")
    msg = str(exc.value)
    assert f"{src}:3:" in msg and "undefined_var" in msg and "error" in msg
    assert "cgp-" not in msg and tempfile.gettempdir() + "/cgp" not in msg
    assert exc.value.exit_code == 2
    assert not (tmp_path / "o.cgptrace").exists()


def test_no_marked_region_lists_the_functions(tmp_path):
    src = write(tmp_path, "none.c", "__attribute__((noinline)) int helper(int x) "
                                    "{ return x + 1; }\nint main(void) { return helper(-1); }\n")
    with pytest.raises(RegionError, match=r"no kernel marked.*--function \(helper, main\)"):
        trace_program(src, tmp_path / "o.cgptrace")


def test_segfault_in_the_region(tmp_path):
    src = write(tmp_path, "segv.c", "int main(void) {\n  int *volatile p = 0;\n  int s = 0;\n"
                                    "#pragma cgp kernel\n  for (int i = 0; i < 4; i++) s += p[i];\n"
                                    "  return s;\n}\n")
    with pytest.raises(TraceRunError, match="SIGSEGV"):
        trace_program(src, tmp_path / "o.cgptrace")
    assert not (tmp_path / "o.cgptrace").exists()


def test_endless_loop_hits_the_timeout(tmp_path):
    src = write(tmp_path, "loop.c", "int main(void) {\n  volatile int stop = 0;\n"
                                    "  while (!stop) {}\n  int s = 0;\n#pragma cgp kernel\n"
                                    "  for (int i = 0; i < 4; i++) s += i;\n  return s & 0;\n}\n")
    with pytest.raises(TraceRunError, match=r"longer than --timeout=2 s"):
        trace_program(src, tmp_path / "o.cgptrace", TraceOptions(timeout_s=2))


def _event_limit_error(tmp_path) -> str:
    with pytest.raises(TraceRunError) as exc:
        trace_file(tmp_path, "gemm.c", {"NI": 16, "NJ": 16, "NK": 16}, max_events=1000)
    return str(exc.value)


def test_event_limit(tmp_path):
    msg = _event_limit_error(tmp_path)
    assert "--max-events=1000" in msg and "smaller problem size" in msg
    assert re.search(r"-D NI=\d+", msg)
    assert not (tmp_path / "gemm.cgptrace").exists()


def test_event_limit_suggests_a_smaller_size_than_traced(tmp_path):
    msg = _event_limit_error(tmp_path)
    suggested = {k: int(v) for k, v in re.findall(r"-D (\w+)=(\d+)", msg)}
    assert suggested and all(v < 16 for v in suggested.values()), suggested


def test_existing_non_trace_output_is_not_overwritten(tmp_path):
    out = tmp_path / "notes.txt"
    out.write_text("my notes\n")
    with pytest.raises(OutputExistsError, match="exists and is not a cgpredict trace"):
        trace_program(GEMM, out, TraceOptions(macros={"NI": "4", "NJ": "4", "NK": "4"}))
    assert out.read_text() == "my notes\n"
    # --force overwrites it; an existing trace is replaced without --force
    trace_program(GEMM, out, TraceOptions(macros={"NI": "4", "NJ": "4", "NK": "4"}), force=True)
    tr = trace_program(GEMM, out, TraceOptions(macros={"NI": "2", "NJ": "2", "NK": "2"}))
    assert mem_events(tr) == 2 * 2 * (3 + 2 * 2)


def test_only_the_output_is_written(tmp_path, monkeypatch):
    work, scratch = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    scratch.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    tr = trace_program(GEMM, Path("g.cgptrace"), TraceOptions(macros={"NI": "4", "NJ": "4",
                                                                      "NK": "4"}))
    assert len(tr.events) > 0
    assert sorted(os.listdir(work)) == ["g.cgptrace"]
    assert os.listdir(scratch) == []  # temporary files removed
    bad = write(work, "bad.c", "int main(void) { return nope; }\n")
    with pytest.raises(CompileError):
        trace_program(bad, Path("b.cgptrace"))
    assert sorted(os.listdir(work)) == ["bad.c", "g.cgptrace"]
    assert os.listdir(scratch) == []


# --------------------------------------------------------------------------- compiler discovery


@pytest.fixture()
def fresh_discovery(tmp_path, monkeypatch):
    """find_compiler's cache cleared, run from an empty directory; re-warmed afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CGP_CC", raising=False)
    cc.find_compiler.cache_clear()
    yield tmp_path
    cc.find_compiler.cache_clear()
    monkeypatch.delenv("CGP_CC", raising=False)
    cc.find_compiler()  # still inside tmp_path


def test_compiler_discovery_writes_nothing_in_cwd(fresh_discovery):
    cc.find_compiler()
    assert os.listdir(fresh_discovery) == []


def test_cgp_cc_that_emits_no_ir_is_rejected(fresh_discovery, monkeypatch):
    monkeypatch.setenv("CGP_CC", "true")
    with pytest.raises(ToolchainError):
        cc.find_compiler()


@pytest.mark.parametrize("line,column,text", [
    ("    C[i][j] += alpha * A[i][k] * B[k][j];", 13, "C[i][j]"),  # compound assignment
    ("    C[i][j] += alpha * A[i][k] * B[k][j];", 34, "B[k][j]"),
    ("  p[i].y = p[i].x * 2.0f;", 17, "p[i].x"),  # clang points at the member
    ("  s += q->v[i];", 11, "q->v[i]"),
    ("  y[ j ] = 3;", 3, "y[j]"),
    ("  y = 3;", 0, ""),
    ("      s += val[k] * x[col[k]];", 21, "x[col[k]]"),  # a subscript inside a subscript
    ("    hist[data[i] & (BINS - 1)]++;", 5, "hist[data[i]&(BINS-1)]"),
    ("  a[idx[b[i]]] = 1;", 3, "a[idx[b[i]]]"),
])
def test_access_text(line, column, text):
    from cgpredict.frontend.tracer import access_text

    assert access_text(line, column) == text


def test_trip_counts_with_break_and_while_loops(tmp_path):
    """Iterations are iterations started: a `break` in the first block of a bottom-tested loop
    does not make its header look like a while-form exit test (that one runs once more)."""
    src = write(tmp_path, "brk.c", """\
float A[16][16], B[16][16];
int main(void) {
  for (int i = 0; i < 16; i++) for (int j = 0; j < 16; j++) A[i][j] = j == 2*i || j == 15 ? -1 : 1;
#pragma cgp kernel brk grid=1
  for (int i = 0; i < 16; i++) {
    for (int j = 0; j < 16; j++) {
      if (A[i][j] < 0) break;
      B[i][j] = A[i][j] * 2;
    }
  }
#pragma cgp kernel wh grid=1
  for (int i = 0; i < 16; i++) {
    int j = 0;
    while (A[i][j] >= 0) { B[i][j] += 1; j++; }
  }
  return 0;
}
""")
    brk, wh = summarize(trace_program(src, tmp_path / "b.cgptrace", TraceOptions()))
    # row i breaks at j = 2i (i < 8: 2i + 1 iterations started) or at j = 15 (16 started)
    started = sum(2 * i + 1 for i in range(8)) + 8 * 16
    assert [(lp.entries, lp.iterations) for lp in brk.loops] == [(1, 16), (16, started)]
    assert {m.kind: m.count for m in brk.mem} == {"load": started, "store": started - 16}
    # the while body runs min(2i, 15) times in row i; row 0 never enters it (the compiler's
    # guard skips a loop that runs zero times, so it counts 15 entries)
    body = sum(min(2 * i, 15) for i in range(16))
    assert [(lp.entries, lp.iterations) for lp in wh.loops] == [(1, 16), (15, body)]


def test_kernel_in_a_function_inlined_twice_is_refused(tmp_path):
    """A marked loop in a static helper that main calls twice is inlined into two copies; the
    trace would hold only one of them, so tracing stops and says what to do."""
    src = write(tmp_path, "twice.c", """\
static float A[256], B[256];
static void work(float *dst, const float *src, int n) {
#pragma cgp kernel kfunc
  for (int i = 0; i < n; i++) dst[i] = src[i] * 3.0f + 1.0f;
}
int main(void) {
  for (int i = 0; i < 256; i++) A[i] = i;
  work(B, A, 256);
  work(A, B, 256);
  return A[3] > 0 ? 0 : 1;
}
""")
    with pytest.raises(RegionError, match=r"twice.c:4: kernel kfunc appears at several places "
                                          r".*declare that function __attribute__\(\(noinline\)\)"):
        trace_program(src, tmp_path / "t.cgptrace", TraceOptions())
    noinline = write(tmp_path, "once.c", src.read_text().replace(
        "static void work", "__attribute__((noinline)) static void work"))
    (s,) = summarize(trace_program(noinline, tmp_path / "o.cgptrace", TraceOptions()))
    assert (s.name, s.launches) == ("kfunc", 2)
    assert {m.kind: m.count for m in s.mem} == {"load": 512, "store": 512}


def test_size_hint_names_only_macros_of_the_file():
    from cgpredict.frontend.tracer import _size_hint

    text = "#define NI 64\n#define NJ 64\nint A[NI][NJ];\n"
    # the message puts the option before the first; the hint joins the others with it
    assert _size_hint({}, {"NI": "64", "FOO": "3"}, text) == "NI=32"
    assert _size_hint({"NI": 16, "NJ": 16}, {}, text) == "NI=8 -D NJ=8"
    # run, advise, report: -D is the work size, the trace size is --trace-size
    assert _size_hint({"NI": 16, "NJ": 16}, {}, text, "--trace-size") == "NI=8 --trace-size NJ=8"
    assert _size_hint({}, {"FOO": "3"}, "int main(void) { for (;;); }\n") == ""


def test_marked_source_names_file_and_line(tmp_path):
    from cgpredict.errors import RegionError
    from cgpredict.frontend.tracer import marked_source

    src = tmp_path / "k.c"
    text = ("int main(void) {\n#pragma cgp kernel k\n#pragma cgp shared A tile 0x0\n"
            "  for (;;) ;\n}\n")
    with pytest.raises(RegionError, match=rf"^{re.escape(str(src))}:3: tile 0x0: want positive"):
        marked_source(src, text)


def test_a_hoisted_load_is_named_by_its_access():
    """A load hoisted out of the j loop carries the loop's line, where the array is not
    written: named by its loop-invariant access below (px[i], not px[j] nor px)."""
    from cgpredict.frontend.tracer import hoisted_text

    lines = ["  for (int i = 0; i < N; i++) {", "    for (int j = 0; j < N; j++) {",
             "      float dx = px[j] - px[i];", "    }", "  }"]
    assert hoisted_text(lines, 2, "px") == "px[i]"
    assert hoisted_text(lines, 2, "qx") == ""


TWO_BRANCH_NESTS = """#include <stdio.h>
#define N 1024
int a[N];
__attribute__((noinline)) void f(int c) {
  int i;
  if (c) {
    for (i = 0; i < N; i++) a[i] = i;
  } else {
    for (i = 0; i < N; i++) a[i] = 2 * i + 1;
  }
}
int main(int argc, char **argv) {
  f(argc > 1);
  f(argc > 2);
  printf("%d\\n", a[7]);
  return 0;
}
"""


def test_kernels_ending_in_one_place_keep_their_own_end_markers(tmp_path):
    """Two loop nests of a --function body in the two arms of an if end where the arms join:
    without ``nomerge`` on the markers, the optimiser sank their end calls into one whose
    region number is a phi (csmith seed 217: an internal error). Each is its own kernel, the
    arm that ran launched twice (argc is 1: c is 0 both times)."""
    src = tmp_path / "two.c"
    src.write_text(TWO_BRANCH_NESTS)
    tr = trace_program(src, tmp_path / "two.cgptrace", TraceOptions(functions=("f",)))
    assert len(tr.header.regions) == 2
    assert len(tr.launches) == 2 and len(set(tr.launches["region"].tolist())) == 1
    assert mem_events(tr) == 2 * 1024  # the else arm's a[i] stores, N per call
