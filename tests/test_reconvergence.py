"""Eq. (12rv): the reconvergence region (BSSY, BSYNC) around a loop that some threads of a
warp skip (cgpredict/reconvergence.py), on loops of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.machine_code import MachineShape, machine_extras
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.reconvergence import RECONVERGENCE_INSTS, divergent_loop, reconvergence_insts


def _kernel(loop: str, decl: str = "") -> str:
    """A 1-D kernel over i of 64 threads running ``loop`` (which sums into s) per thread."""
    return f"""\
#define N 64
#pragma cgp trace N=64
static float A[N][N], x[N * N], y[N];
static int rowptr[N + 1];
{decl}
int main(void) {{
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) {{ A[i][j] = i - j; x[i * N + j] = j; }}
  for (int i = 0; i <= N; i++) rowptr[i] = i * (N / 2);
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {{
    float s = 0.0f;
    {loop}
    y[i] = s;
  }}
  return y[3] != 12345.0f ? 0 : 1;
}}
"""


#: exits on a size (a constant in the C, a kernel parameter in the port): uniform
UNIFORM = _kernel("for (int j = 0; j < N; j++) s += A[i][j];")
#: counts down from a size: uniform
DOWN = _kernel("for (int j = N - 1; j >= 0; j--) s += A[i][j];")
#: a grid-stride walk from the thread's index (dot_gridstride): the start is the thread's
GRID_STRIDE = _kernel("for (int k = i; k < N * N; k += N) s += x[k];")
#: a triangle (CORR's j2 = j1 + 1): the start follows the thread's index
TRIANGLE = _kernel("for (int j = i + 1; j < N; j++) s += A[i][j];")
#: CSR's bounds, loaded at the thread's row (spmv_csr)
LOADED = _kernel("for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += x[k];")
#: a triangle that ends the thread's work (CORR's corr_corr): nothing to reconverge for
TRIANGLE_LAST = _kernel("for (int j = i + 1; j < N; j++) y[j] += A[i][j];").replace(
    "    y[i] = s;\n", "")
#: a bound loaded from one file-scope scalar, the same for every thread
SCALAR = _kernel("for (int j = 0; j < n; j++) s += A[i][j];", "static int n;").replace(
    "#pragma cgp kernel", "  n = N / 2;\n#pragma cgp kernel")


def _prepared(tmp_path: Path, src: str):
    """``src`` written to a file and prepared (traced) for the H100: a context manager."""
    path = tmp_path / "k.c"
    path.write_text(src)
    return prepare(path, RunOptions(device="h100"))


@pytest.mark.parametrize(
    "src, want",
    [(UNIFORM, False), (DOWN, False), (SCALAR, False), (GRID_STRIDE, True),
     (TRIANGLE, True), (LOADED, True), (TRIANGLE_LAST, False)],
    ids=["uniform", "down", "scalar", "grid_stride", "triangle", "loaded", "triangle_last"],
)
def test_a_loop_is_divergent_when_its_zero_trip_test_depends_on_the_thread(
        tmp_path: Path, src: str, want: bool) -> None:
    with _prepared(tmp_path, src) as prep:
        tr = prep.trace
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        assert divergent_loop(tr, lp, 1) is want
        mapped = next(lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 1)
        assert divergent_loop(tr, mapped, 0) is False  # no mapped loop above it


def test_a_divergent_loop_runs_a_bssy_and_a_bsync_per_entry() -> None:
    """Two instructions a loop entry (BSSY B0 before the loop, BSYNC B0 after it, as the
    SASS of spmv_csr and dot_gridstride); none for a uniform loop. Weighed by the entries a
    thread makes: loop 3 entered 2.5 times a thread, loop 4 (uniform) 7 times: 5."""
    assert reconvergence_insts(True) == RECONVERGENCE_INSTS == 2
    assert reconvergence_insts(False) == 0
    shape = MachineShape(reconvergence=((3, 2), (4, 0)))
    extras = machine_extras(shape, {3: 2.5, 4: 7.0}.get, {}, touches_global=True,
                            staging_stores=0.0)
    assert extras.reconvergence == pytest.approx(5.0)
    assert extras.other == pytest.approx(extras.prologue + 5.0)


#: a data exit on the thread's values (mandelbrot's escape test, eq. (12x)): its zero-trip
#: test is uniform, but threads leave it at their own iterations
ESCAPE = _kernel("float z = 0.0f; int it = 0;\n"
                 "    while (it < N && z * z <= 4.0f) { z = z * z + 0.01f * i; it++; }\n"
                 "    s = it;")
#: a data exit on a file-scope scalar's value: the same for every thread
ESCAPE_UNIFORM = _kernel("float z = 0.0f; int it = 0;\n"
                         "    while (it < N && z * z <= 4.0f) { z = z * z + c; it++; }\n"
                         "    s = it;", "static float c;").replace(
    "#pragma cgp kernel", "  c = 0.3f;\n#pragma cgp kernel")


@pytest.mark.parametrize("src, want", [(ESCAPE, True), (ESCAPE_UNIFORM, False)],
                         ids=["escape", "escape_uniform"])
def test_a_data_exit_on_the_threads_values_is_divergent(tmp_path: Path, src: str,
                                                        want: bool) -> None:
    """Eq. (12rv) with a data exit: the exit test follows the thread's index through the
    floating-point update (z = z * z + 0.01 i): a region (BSSY, BSYNC: the blind mandelbrot's
    SASS); on a value every thread shares (c), none."""
    with _prepared(tmp_path, src) as prep:
        tr = prep.trace
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        assert divergent_loop(tr, lp, 1) is want
