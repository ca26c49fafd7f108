"""Tests of the CLI commands run, advise and validate (click's CliRunner): exit codes, one-line
errors, valid JSON, and never a Python traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict.cli import main

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GEMM = str(POLYBENCH / "gemm.c")
SMALL_GEMM = ["-D", "NI=64", "-D", "NJ=64", "-D", "NK=64",
              "--trace-size", "NI=32", "--trace-size", "NJ=32", "--trace-size", "NK=32"]


def invoke(args, **kw):
    r = CliRunner().invoke(main, args, catch_exceptions=False, **kw)
    for text in (r.stdout, r.stderr):
        assert "Traceback" not in text
    return r


def test_run_json():
    r = invoke(["run", GEMM, *SMALL_GEMM, "--json"])
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema_version"] == 11
    assert [k["name"] for k in d["kernels"]] == ["gemm"]
    assert d["kernels"][0]["registers_from"] == "estimated"
    assert d["work_sizes"] == {"NI": 64, "NJ": 64, "NK": 64}
    assert d["trace_sizes"] == {"NI": 32, "NJ": 32, "NK": 32}
    assert d["total_ms"] > 0 and d["kernels"][0]["profile"]["const"]["insts"] == 64
    assert r.stderr == ""  # no progress lines when not a terminal


def test_run_text_and_options():
    r = invoke(["run", GEMM, *SMALL_GEMM, "--block", "16x16", "--device", "tk1",
                "--batch-mode", "paper", "--registers", "40"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("gemm.c on tk1 (cgpredict model, plain port, --sync each)\n")
    assert "block 16x16" in r.stdout
    assert re.search(r"^total predicted time: \d+\.\d{4} ms$", r.stdout, re.M)


@pytest.mark.parametrize("model", ["hongkim", "gpuperf"])
def test_run_other_models(model):
    r = invoke(["run", GEMM, *SMALL_GEMM, "--model", model])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"gemm.c on tk1 ({model} model, plain port, --sync each)")


def test_run_block_too_large():
    r = invoke(["run", GEMM, *SMALL_GEMM, "--block", "2000x1"])
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.strip().split("\n")
    assert len(lines) == 1
    assert lines[0].startswith("cgpredict: error: ") and "2000 threads" in lines[0]


@pytest.mark.parametrize("args, message", [
    (["--registers", "300"], "registers per thread must be in 0..255 on tk1, got 300"),
    (["--registers", "64", "--block", "32x32"],
     "64 registers x 1024 threads > 32768 per block"),
])
def test_run_launch_the_gpu_would_refuse(args, message):
    r = invoke(["run", GEMM, *SMALL_GEMM, *args])
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith("cgpredict: error: kernel gemm: ")
    assert message in lines[0]


@pytest.mark.parametrize("args, hint", [
    (["--block", "0x1"], "--block"), (["--block", "32x8x2"], "--block"),
    (["-D", "NI"], "-D"), (["-D", "NI=abc"], "-D"), (["--trace-size", "1NI=3"], "--trace-size"),
    (["--grid", "3"], "--grid"), (["--model", "nope"], "--model")])
def test_run_bad_options(args, hint):
    r = invoke(["run", GEMM, *args])
    assert r.exit_code == 2
    assert hint in r.stderr


def test_run_missing_source(tmp_path):
    r = invoke(["run", str(tmp_path / "nope.c")])
    assert r.exit_code == 2 and "does not exist" in r.stderr


def test_run_does_not_compile(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int main(void) {\n#pragma cgp kernel k\n"
                   "  for (int i = 0; i < 4; i++) undeclared = 1;\n  return 0;\n}\n")
    r = invoke(["run", str(src)])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith("cgpredict: error: compiling ")
    assert f"{src} failed" in r.stderr.split("\n")[0]
    assert "undeclared" in r.stderr


def test_run_no_kernel(tmp_path):
    src = tmp_path / "plain.c"
    src.write_text("int main(void) { return 0; }\n")
    r = invoke(["run", str(src)])
    assert r.exit_code == 2
    assert r.stderr.startswith("cgpredict: error: ") and len(r.stderr.strip().split("\n")) == 1


# large enough on the H100 for the kernel, not the launch, to set the time
H100_SYRK = ["-D", "NI=512", "-D", "NJ=512", "--trace-size", "NI=64", "--trace-size", "NJ=64",
             "--device", "h100"]


@pytest.mark.slow
def test_advise_text():
    r = invoke(["advise", str(POLYBENCH / "syrk.c"), *H100_SYRK])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0].startswith("syrk.c on h100: ")
    first = next(line for line in lines if line.startswith("1 "))
    # the plain port's C[i][j] stored per k, kept in a register, and A transposed: one change
    # (on the H100 the stores bound the transposed kernel; on the TK1 its loads take as long)
    assert "[combined] keep accumulators in registers and store A transposed" in first
    assert any("[coalescing] store A transposed" in line for line in lines)
    assert any("[register-accumulation] keep C[i][j] in a register" in line for line in lines)


@pytest.mark.slow
def test_advise_json(tmp_path):
    r = invoke(["advise", str(POLYBENCH / "syrk.c"), *H100_SYRK, "--json", "--block", "32x8"])
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema_version"] == 2 and "baseline" not in d  # 2: roofline and floors
    assert [x["kernel"] for x in d["roofline"]] == ["syrk"] and d["roofline"][0]["dram_ms"] > 0
    kinds = {f["kind"]: f for f in d["fixes"]}
    assert d["fixes"][0]["kind"] == "combined"
    assert kinds["coalescing"]["speedup"] > 2
    assert kinds["coalescing"]["why"][0].startswith("syrk: ")
    assert "report" not in kinds["coalescing"]
    assert [b["kernel"] for b in d["benefits"]] == ["syrk"]


def test_advise_bad_block():
    r = invoke(["advise", str(POLYBENCH / "syrk.c"), "--block", "big"])
    assert r.exit_code == 2 and "--block" in r.stderr


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-corpus")
    text = POLYBENCH.joinpath("gemm.c").read_text()
    d.joinpath("gemm.c").write_text(re.sub(r"#pragma cgp trace .*",
                                           "#pragma cgp trace NI=32 NJ=32 NK=32", text))
    d.joinpath("atax.c").write_text(re.sub(r"#pragma cgp trace .*", "#pragma cgp trace NX=32 "
                                           "NY=32", POLYBENCH.joinpath("atax.c").read_text()))
    return d


def _measured(tmp_path, payload) -> Path:
    p = tmp_path / "m.json"
    p.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return p


def test_validate(corpus, tmp_path):
    m = _measured(tmp_path, {"gpu": {"name": "Fake K1"}, "results": [
        {"kernel": "gemm", "config": "32x32", "work_sizes": {"NI": 64, "NJ": 64, "NK": 64},
         "result": {"total_ms": 0.07}}]})
    out = tmp_path / "results"
    r = invoke(["validate", "--only", "gemm", "--corpus", str(corpus), "--out-dir", str(out),
                "--measured", str(m)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("# Accuracy on Fake K1 (cgpredict model, device file `tk1`)")
    assert "| gemm | NI=NJ=NK=64 | 32x32 |" in r.stdout and "atax" not in r.stdout
    assert "Mean absolute percentage error: " in r.stdout
    js, md = out / "tk1-cgpredict.json", out / "tk1-cgpredict.md"
    assert f"wrote {js}, {md}" in r.stdout
    d = json.loads(js.read_text())
    assert [row["kernel"] for row in d["rows"]] == ["gemm"]
    assert d["rows"][0]["measured_ms"] == 0.07 and d["mape"] is not None


def test_validate_unmeasured(corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no validation/measured/tk1.json here
    r = invoke(["validate", "--only", "atax", "--corpus", str(corpus), "--out-dir", "res"])
    assert r.exit_code == 0, r.stderr
    assert "not measured" in r.stdout and "No measurements given." in r.stdout
    assert (tmp_path / "res" / "tk1-cgpredict.md").exists()


def test_validate_corrupt_measurement(corpus, tmp_path):
    m = _measured(tmp_path, "{broken")
    r = invoke(["validate", "--corpus", str(corpus), "--out-dir", str(tmp_path / "o"),
                "--measured", str(m)])
    assert r.exit_code == 2
    assert r.stderr.startswith("cgpredict: error: ") and "not a measurement file" in r.stderr
    assert len(r.stderr.strip().split("\n")) == 1
    assert not (tmp_path / "o").exists()


def test_validate_list_shaped_measurement(corpus, tmp_path):
    m = _measured(tmp_path, "[]")
    r = invoke(["validate", "--corpus", str(corpus), "--out-dir", str(tmp_path / "o"),
                "--measured", str(m)])
    assert r.exit_code == 2 and "not a measurement file" in r.stderr


def test_validate_empty_corpus(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = invoke(["validate", "--corpus", str(empty), "--out-dir", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no corpus kernels" in r.stderr


# --------------------------------------------------------------------------- bad input, one line


def one_line_error(r, code=2):
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("cgpredict: error: "), r.stderr
    assert "Usage:" not in r.stderr
    return r.stderr


@pytest.mark.parametrize("args, flag", [
    (["-D", "NI=-5"], "-D"), (["-D", "NI=0"], "-D"), (["--trace-size", "NI=-5"], "--trace-size"),
    (["--trace-size", "NI=0"], "--trace-size"),
])
def test_sizes_must_be_positive_integers(args, flag):
    msg = one_line_error(invoke(["run", GEMM, *args]))
    assert flag in msg and "positive integer" in msg


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_run_timeout_must_be_finite_and_positive(value):
    msg = one_line_error(invoke(["run", GEMM, "--timeout", value]))
    assert "--timeout" in msg and "finite positive" in msg


def test_run_non_utf8_source(tmp_path):
    src = tmp_path / "binary.c"
    src.write_bytes(bytes(range(256)) * 8)
    for cmd in ("run", "fpga", "compare", "advise"):
        msg = one_line_error(invoke([cmd, str(src)]))
        assert f"{src}: not a UTF-8 text file" in msg, cmd


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("ft") / "small.cgptrace"
    r = invoke(["trace", GEMM, "-D", "NI=16", "-D", "NJ=16", "-D", "NK=16", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


def test_from_trace_prints_the_traced_macros(small_trace):
    r = invoke(["run", "--from-trace", str(small_trace)])
    assert r.exit_code == 0, r.stderr
    assert "traced at: NI=16 NJ=16 NK=16" in r.stdout.split("\n")[1]


@pytest.mark.parametrize("extra", [["--function", "foo"], ["--timeout", "5"], ["-D", "NI=4"]])
def test_from_trace_rejects_tracing_options(small_trace, extra):
    msg = one_line_error(invoke(["run", "--from-trace", str(small_trace), *extra]))
    assert "--from-trace takes no" in msg


def test_from_trace_corrupt_is_exit_4(small_trace, tmp_path):
    raw = bytearray(small_trace.read_bytes())
    hlen = int.from_bytes(raw[12:16], "little")
    sections = json.loads(raw[24:24 + hlen])["sections"]
    off = sections["events"]["offset"] + 8 * 2  # a memory event: tag 131 does not exist
    raw[off + 6:off + 8] = (131).to_bytes(2, "little")
    bad = tmp_path / "bad.cgptrace"
    bad.write_bytes(bytes(raw))
    msg = one_line_error(invoke(["run", "--from-trace", str(bad)]), code=4)
    assert "corrupt trace (section events: checksum mismatch)" in msg


@pytest.mark.parametrize("chart, fragment", [
    ("chart.txt", "want a .png/.svg/.pdf file"),
    ("nodir/c.png", "does not exist"),
    ("afile/c.png", "is not a folder"),
    ("/proc/c.png", "not writable"),
    ("exists.png", "exists"),
])
def test_advise_chart_checked_before_the_analysis(tmp_path, monkeypatch, chart, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "exists.png").write_text("x")
    r = invoke(["advise", str(tmp_path / "missing_is_not_reached.c"), "--chart", chart])
    assert r.exit_code == 2  # click's own check of SOURCE runs first; now a real source:
    r = invoke(["advise", str(POLYBENCH / "syrk.c"), "--chart", chart, "--timeout", "0.001"])
    msg = one_line_error(r)  # the timeout would fail the analysis: the chart check came first
    assert "--chart" in msg or "chart" in msg
    assert fragment in msg and r.stdout == ""


def test_advise_chart_needs_matplotlib(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    r = invoke(["advise", str(POLYBENCH / "syrk.c"), "--chart", str(tmp_path / "c.png"),
                "--timeout", "0.001"])
    assert "needs matplotlib" in one_line_error(r)


def test_devices_lists_good_files_and_marks_bad_ones(tmp_path, monkeypatch):
    from cgpredict.devices import bundled_dir

    (tmp_path / "good.toml").write_text((bundled_dir() / "tk1.toml").read_text())
    (tmp_path / "bad.toml").write_bytes(b"\xff\xfe")
    monkeypatch.setenv("CGPREDICT_DEVICE_PATH", str(tmp_path))
    r = invoke(["devices"])
    assert r.exit_code == 0
    lines = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert "UNUSABLE" in lines["bad"] and "not UTF-8" in lines["bad"]
    assert "UNUSABLE" not in lines["good"] and "tk1" in lines and "h100" in lines
    assert "1 device file(s) cannot be used" in r.stderr
