"""Tests of the `trace` and `trace-info` commands of cgpredict.cli (click's CliRunner): files
written, counts printed, exit codes, and one-line errors without a Python traceback."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict.cli import main

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GEMM = POLYBENCH / "gemm.c"
SMALL = ["-D", "NI=8", "-D", "NJ=8", "-D", "NK=8"]
GEMM_MEM_EVENTS = 8 * 8 * (2 + 3 * 8)  # plain port: NI*NJ*(2 + 3*NK), C stored every k


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_one_line_error(result, code: int, *fragments: str) -> None:
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no uncaught exception
    assert "Traceback" not in result.output
    lines = [x for x in result.stderr.splitlines() if x.startswith("cgpredict: error: ")]
    assert len(lines) == 1, result.stderr
    for f in fragments:
        assert f in result.stderr, (f, result.stderr)


@pytest.fixture(scope="module")
def gemm_trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "gemm8.cgptrace"
    result = invoke("trace", GEMM, *SMALL, "-o", out)
    assert result.exit_code == 0, result.output
    return out, result


def test_trace_writes_the_file_and_prints_counts(gemm_trace):
    out, result = gemm_trace
    assert out.exists()
    assert re.fullmatch(
        rf"wrote {re.escape(str(out))}: 1 kernel\(s\), 1 launch\(es\), {GEMM_MEM_EVENTS} memory "
        rf"events, {out.stat().st_size} bytes \(traced at NI=8 NJ=8 NK=8\)\n", result.output)


def test_trace_default_output_in_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("trace", GEMM, "-D", "NI=4", "-D", "NJ=4", "-D", "NK=4")
    assert result.exit_code == 0, result.output
    assert "wrote gemm.cgptrace:" in result.output
    assert os.listdir(tmp_path) == ["gemm.cgptrace"]


def test_trace_info(gemm_trace):
    out, _ = gemm_trace
    result = invoke("trace-info", out)
    assert result.exit_code == 0, result.output
    text = result.output
    update = next(k + 1 for k, line in enumerate(GEMM.read_text().split("\n"))
                  if "C[i][j] += alpha" in line)
    assert f"trace {out.name}: gemm.c" in text
    assert "macros: NI=8 NJ=8 NK=8" in text
    assert re.search(r"region 0 'gemm' at gemm\.c:\d+: 1 launch\(es\), 1 recorded", text)
    assert re.search(rf"load\s+4B\s+B\[k\]\[j\]\s+gemm\.c:{update}:\d+\s+x {8 * 8 * 8}\n", text)
    assert re.search(rf"load\s+4B\s+A\[i\]\[k\]\s+gemm\.c:{update}:\d+\s+x {8 * 8 * 8}\n", text)
    # plain port (the default): C[i][j] stored on every k iteration
    assert re.search(rf"store\s+4B\s+C\[i\]\[j\]\s+gemm\.c:{update}:\d+\s+x {8 * 8 * 8}\n", text)
    assert "mean trip count 8" in text


def test_compile_error_exit_code(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) { return nope; }\n")
    result = invoke("trace", bad, "-o", tmp_path / "b.cgptrace")
    assert_one_line_error(result, 2, "compiling", f"{bad}:1:", "nope")
    assert "cgp-" not in result.output


def test_no_region_exit_code(tmp_path):
    src = tmp_path / "none.c"
    src.write_text("int main(void) { return 0; }\n")
    result = invoke("trace", src, "-o", tmp_path / "n.cgptrace")
    assert_one_line_error(result, 2, "no kernel marked", "(main)")


def test_bad_pragma_exit_code(tmp_path):
    src = tmp_path / "p.c"
    src.write_text("int main(void) {\n#pragma cgp kernal\n  for (;;) ;\n}\n")
    result = invoke("trace", src)
    assert_one_line_error(result, 2, "p.c:2:", "unknown '#pragma cgp kernal'")


def test_crash_exit_code(tmp_path):
    src = tmp_path / "segv.c"
    src.write_text("int main(void) {\n  int *volatile p = 0;\n  int s = 0;\n#pragma cgp kernel\n"
                   "  for (int i = 0; i < 4; i++) s += p[i];\n  return s;\n}\n")
    result = invoke("trace", src, "-o", tmp_path / "s.cgptrace")
    assert_one_line_error(result, 3, "SIGSEGV")


def test_output_not_a_trace_exit_code(tmp_path):
    out = tmp_path / "keep.txt"
    out.write_text("keep me")
    result = invoke("trace", GEMM, *SMALL, "-o", out)
    assert_one_line_error(result, 2, "not a cgpredict trace", "--force")
    assert out.read_text() == "keep me"


def test_event_limit_exit_code(tmp_path):
    result = invoke("trace", GEMM, *SMALL, "--max-events", "100", "-o", tmp_path / "x.cgptrace")
    assert_one_line_error(result, 3, "--max-events=100", "-D")


@pytest.mark.parametrize(
    "content", [None, b"garbage", b"CGPTRACE\x01\x00\x00\x00\xff\x00\x00\x00{"]
)
def test_trace_info_bad_file_exit_code(tmp_path, content):
    path = tmp_path / "t.cgptrace"
    if content is not None:
        path.write_bytes(content)
    result = invoke("trace-info", path)
    assert_one_line_error(result, 4, str(path))


def test_trace_info_truncated_trace(tmp_path, gemm_trace):
    out, _ = gemm_trace
    cut = tmp_path / "cut.cgptrace"
    cut.write_bytes(out.read_bytes()[:-200])
    result = invoke("trace-info", cut)
    assert_one_line_error(result, 4, "truncated")


def test_bad_define_is_a_usage_error(tmp_path):
    result = invoke("trace", GEMM, "-D", "1X=3")
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "want NAME=VALUE" in result.output


def test_internal_error_is_one_line(tmp_path, monkeypatch):
    """A bug in the pass (instrumented IR that does not verify) is reported, not a traceback."""
    from cgpredict.instrument.memtrace import InstrumentError

    from cgpredict.frontend import tracer

    def broken(ir):
        raise InstrumentError("internal error: instrumented IR does not verify: test")

    monkeypatch.setattr(tracer, "_verify_ir", broken)
    monkeypatch.delenv("CGP_DEBUG", raising=False)
    result = invoke("trace", GEMM, *SMALL, "-o", tmp_path / "i.cgptrace")
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert "internal error" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- bad input, one line


@pytest.mark.parametrize("args, fragments", [
    (["trace", GEMM, "-D", "1X=3"], ["-D", "want NAME=VALUE"]),
    (["trace"], ["Missing argument 'SOURCE'"]),
    (["trace", GEMM, "--timeout", "nan"], ["--timeout", "finite positive"]),
    (["trace", GEMM, "--timeout", "inf"], ["--timeout", "finite positive"]),
    (["trace", GEMM, "--timeout", "0"], ["--timeout", "finite positive"]),
    (["trace", GEMM, "--timeout", "-1"], ["--timeout", "finite positive"]),
    (["trace", GEMM, "--timeout", "soon"], ["--timeout", "positive number of seconds"]),
    (["trace", GEMM, "--max-events", "0"], ["--max-events", "0"]),
    (["trace", GEMM, "--max-events", "-1"], ["--max-events"]),
    (["trace", GEMM, "--max-launches", "-1"], ["--max-launches"]),
    (["trace-info"], ["Missing argument"]),
    (["nosuchcommand"], ["No such command"]),
])
def test_usage_errors_are_one_line(args, fragments):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("cgpredict: error: ")
    assert "Usage:" not in result.stderr
    for f in fragments:
        assert f in result.stderr, (f, result.stderr)


def test_help_and_version_still_work():
    assert invoke("--version").exit_code == 0
    result = invoke("trace", "--help")
    assert result.exit_code == 0 and "Usage:" in result.stdout
    assert "--max-launches" in result.stdout


def test_non_utf8_source(tmp_path):
    src = tmp_path / "binary.c"
    src.write_bytes(bytes(range(256)) * 8)
    result = invoke("trace", src, "-o", tmp_path / "b.cgptrace")
    assert_one_line_error(result, 2, f"{src}: not a UTF-8 text file")


@pytest.mark.parametrize("where, reason", [
    ("missing/dir/x.cgptrace", "does not exist"),
    ("afile/x.cgptrace", "afile is not a folder"),
    ("adir", "is a directory"),
    ("/proc/x.cgptrace", "not writable"),
])
def test_unwritable_output(tmp_path, monkeypatch, where, reason):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("precious")
    (tmp_path / "adir").mkdir()
    result = invoke("trace", GEMM, *SMALL, "-o", where)
    assert_one_line_error(result, 2, where, reason)
    assert not (tmp_path / "missing").exists()  # never created silently
    assert (tmp_path / "afile").read_text() == "precious"


def test_default_output_is_a_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gemm.cgptrace").mkdir()
    result = invoke("trace", GEMM, *SMALL)
    assert_one_line_error(result, 2, "cannot write trace gemm.cgptrace", "directory")


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "f.cgptrace"
    os.mkfifo(fifo)
    result = invoke("trace", GEMM, *SMALL, "-o", fifo)
    assert_one_line_error(result, 2, "cannot write trace", "not a regular file")
    result = invoke("trace-info", fifo)
    assert_one_line_error(result, 4, "not a regular file")


def test_event_limit_hint_names_only_the_file_macros(tmp_path):
    src = tmp_path / "spin.c"
    src.write_text("int A[4];\nint main(void) {\n#pragma cgp kernel k\n"
                   "  for (unsigned i = 0; ; i++) A[i % 4] += 1;\n  return 0;\n}\n")
    result = invoke("trace", src, "-D", "FOO=8", "--max-events", "1000",
                    "-o", tmp_path / "s.cgptrace")
    assert_one_line_error(result, 3, "--max-events=1000", "may loop endlessly")
    assert "-D" not in result.stderr.split("events;")[1] and "N=64" not in result.stderr
    result = invoke("trace", GEMM, "-D", "NI=64", "-D", "NJ=64", "-D", "NK=64", "-D", "FOO=3",
                    "--max-events", "100", "-o", tmp_path / "g.cgptrace")
    assert_one_line_error(result, 3, "-D NI=32 -D NJ=32 -D NK=32")
    assert "FOO" not in result.stderr


def test_syntax_error_in_the_marked_loop_shows_the_compiler(tmp_path):
    src = tmp_path / "syntax.c"
    src.write_text("int A[8];\nint main(void) {\n#pragma cgp kernel k\n"
                   "  for (int i = 0; i < 8; i++ {\n    A[i] = i\n  }\n  return 0;\n}\n")
    result = invoke("trace", src, "-o", tmp_path / "s.cgptrace")
    assert_one_line_error(result, 2, "compiling", f"{src}:4:")
