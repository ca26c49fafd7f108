"""Inputs checked before anything runs (issue 29): any file name is compiled as C, files that
are not regular files are refused in one line, pragmas are validated against the source, the
grid and the loop counters against CUDA's limits and their C types, and messages name what
the user typed (their file, the command's own options)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict import api
from cgpredict.cli import main
from cgpredict.errors import CGPredictError, RegionError
from cgpredict.frontend.regions import read_source

pytestmark = pytest.mark.usefixtures("compiler")

GEMM = Path(__file__).resolve().parents[1] / "polybench_c" / "gemm.c"
SMALL = ["-D", "NI=8", "-D", "NJ=8", "-D", "NK=8"]


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = [x for x in result.stderr.splitlines() if x.startswith("cgpredict: error: ")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    return result.stderr


@pytest.mark.parametrize("name", ["prog", "x.txt", "kernel.h"])
def test_any_file_name_is_compiled_as_c(tmp_path, name):
    src = tmp_path / name
    src.write_text(GEMM.read_text())
    r = invoke("trace", src, *SMALL, "-o", tmp_path / "o.cgptrace")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o.cgptrace").exists()


def test_fifos_devices_and_directories_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, what in ((fifo, "not a regular file"), ("/dev/null", "not a regular file"),
                       (tmp_path, "a directory")):
        with pytest.raises(RegionError, match=f"cannot read .* as C source: {what}"):
            read_source(path)
    msg = one_line_error(invoke("trace", fifo, "-o", tmp_path / "o.cgptrace"), 2)
    assert "not a regular file" in msg


def test_a_syntax_error_names_the_users_file(tmp_path):
    src = tmp_path / "syn.c"
    src.write_text(GEMM.read_text().replace("C[i][j] *= beta;", "C[i][j] *= beta +;"))
    msg = one_line_error(invoke("run", src), 2)
    assert f"{src}:" in msg and "cgp-macros" not in msg and "probe.c" not in msg


def test_run_suggests_its_own_options_at_the_event_limit(tmp_path):
    with pytest.raises(CGPredictError) as exc:
        api.predict(GEMM, "32x8", "tk1", {"NI": 64, "NJ": 64, "NK": 64},
                    trace_sizes={"NI": 16, "NJ": 16, "NK": 16},
                    max_events=1000)
    msg = str(exc.value)
    assert "--max-events" not in msg and "the limit of 1000 events" in msg
    assert "--trace-size NI=8" in msg and exc.value.exit_code == 3


TILED = Path(__file__).resolve().parents[1] / "polybench_c" / "gemm_tiled.c"


@pytest.mark.parametrize("edit, fragment", [
    (("#pragma cgp shared A tile 32x32", "#pragma cgp shared Aa tile 32x32"),
     "'#pragma cgp shared Aa': kernel gemm_tiled indexes no array Aa (it indexes A, B, C)"),
    (("#pragma cgp trace NI=128", "#pragma cgp trace QQ=8 NI=128"),
     "'#pragma cgp trace QQ=...': the source has no macro QQ"),
])
def test_pragmas_are_checked_against_the_source(tmp_path, edit, fragment):
    src = tmp_path / "k.c"
    src.write_text(TILED.read_text().replace(*edit))
    msg = one_line_error(invoke("trace", src, "-o", tmp_path / "o.cgptrace"), 2)
    assert fragment in msg


@pytest.mark.parametrize("typedef", [False, True])
def test_a_tile_larger_than_shared_memory_is_refused(tmp_path, typedef):
    """Before running when the declaration gives the element size, else after tracing."""
    text = TILED.read_text().replace("#pragma cgp shared A tile 32x32",
                                     "#pragma cgp shared A tile 512x512")
    if typedef:
        text = text.replace("static float A[NI][NK];",
                            "typedef float real;\nstatic real A[NI][NK];")
    src = tmp_path / "k.c"
    src.write_text(text)
    r = invoke("run", src, "--trace-size", "NI=32", "--trace-size", "NJ=32",
               "--trace-size", "NK=32", "--timeout", "0.001" if not typedef else "60")
    msg = one_line_error(r, 2)  # the 1 ms timeout would fail a run: refused before it
    assert "'#pragma cgp shared A tile 512x512' needs 1048576 bytes" in msg and "tk1" in msg


NESTED = """#define N 8
float A[N][N];
int main(void) {
#pragma cgp kernel outer
  for (int i = 0; i < N; i++) {
#pragma cgp kernel inner
    for (int j = 0; j < N; j++)
      A[i][j] = 1.0f;
  }
  return 0;
}
"""


def test_nested_kernel_pragmas_are_refused_before_running(tmp_path):
    src = tmp_path / "n.c"
    src.write_text(NESTED)
    msg = one_line_error(invoke("trace", src, "-o", tmp_path / "o.cgptrace"), 2)
    assert "kernel inner lies inside kernel outer (lines 5-9)" in msg
    assert not (tmp_path / "o.cgptrace").exists()


def test_a_counter_that_cannot_count_to_its_size_is_refused(tmp_path):
    msg = one_line_error(invoke("run", GEMM, "-D", "NI=99999999999"), 2)
    assert "the loop counter i (int) cannot count to NI=99999999999" in msg
    assert f"{GEMM}:34:" in msg


def test_a_grid_past_cudas_limits_is_refused():
    msg = one_line_error(invoke("run", GEMM, "-D", "NI=3000000", "-D", "NJ=64", "-D", "NK=64",
                                "--trace-size", "NI=64", "--trace-size", "NJ=64",
                                "--trace-size", "NK=8"), 2)
    assert "exceeds CUDA's limits" in msg and "y at most 65535" in msg


CALLED = """#define N 8
float A[N][N];
__attribute__((noinline)) void row(int i) {
#pragma cgp kernel inner
  for (int j = 0; j < N; j++)
    A[i][j] = 1.0f;
}
int main(void) {
#pragma cgp kernel outer
  for (int i = 0; i < N; i++)
    row(i);
  return 0;
}
"""


def test_a_kernel_reached_from_another_kernel_is_a_pragma_error(tmp_path):
    src = tmp_path / "c.c"
    src.write_text(CALLED)
    msg = one_line_error(invoke("trace", src, "-o", tmp_path / "o.cgptrace"), 2)
    assert "started inside another marked kernel" in msg


REDEFINED = """#include <stdio.h>
#define N 4096
float A[N];
int main(void) {
#pragma cgp kernel k
  for (int i = 0; i < N; i++) A[i] = i;
  printf("%f\\n", A[3]);
  return 0;
}
"""


def test_a_refused_size_is_named_as_typed(tmp_path):
    src = tmp_path / "r.c"
    src.write_text(REDEFINED)
    msg = one_line_error(invoke("run", src, "-D", "N=128"), 2)
    assert "-D N=128 cannot take effect" in msg
    msg = one_line_error(invoke("trace", src, "-D", "N=100", "-o", tmp_path / "o.t"), 2)
    assert "-D N=100 cannot take effect" in msg


LEFT = """#include <stdio.h>
#include <stdlib.h>
#define N 16
float A[N][N];
int main(void) {
#pragma cgp kernel k
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = i + j;
      if (i == N - 1 && j == N - 1) LEAVE;
    }
  printf("%f\\n", A[3][3]);
  return 0;
}
"""


@pytest.mark.parametrize("leave", ["return 0", "exit(0)"])
def test_a_kernel_left_early_is_named_as_such(tmp_path, leave):
    src = tmp_path / "l.c"
    src.write_text(LEFT.replace("LEAVE", leave))
    msg = one_line_error(invoke("run", src), 2)
    assert "kernel k began but never ended: the program left its loop nest" in msg
