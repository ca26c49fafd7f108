"""`cgpredict schema CMD`: the JSON Schema of each JSON output, and every command's real output
validated against it (a small validator for the subset the schemas use)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict.cli import main
from cgpredict.schema import SchemaError, validate_json

ROOT = Path(__file__).resolve().parents[1]
GEMM = str(ROOT / "polybench_c" / "gemm.c")
SMALL_GEMM = ["-D", "NI=64", "-D", "NJ=64", "-D", "NK=64",
              "--trace-size", "NI=32", "--trace-size", "NJ=32", "--trace-size", "NK=32"]


def invoke(args):
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert "Traceback" not in r.stdout + r.stderr
    assert r.exit_code == 0, r.stderr
    return r.stdout


def schema_of(command: str) -> dict:
    return json.loads(invoke(["schema", command]))


def test_validator_rejects():
    s = schema_of("validate")
    good = {"device": "tk1", "model": "cgpredict", "measured_file": None, "gpu_name": None,
            "rows": [], "mape": None, "schema_version": 1}
    validate_json(good, s)
    for bad, where in (({**good, "rows": [{"kernel": "k"}]}, "$.rows[0]: missing"),
                       ({**good, "extra": 1}, "unexpected 'extra'"),
                       ({**good, "schema_version": 2}, "$.schema_version"),
                       ({**good, "device": 3}, "$.device: expected string")):
        with pytest.raises(SchemaError, match=where.replace("[", r"\[").replace("$", r"\$")):
            validate_json(bad, s)


def test_unknown_command_is_usage_error():
    r = CliRunner().invoke(main, ["schema", "fpga"])
    assert r.exit_code == 2


@pytest.mark.usefixtures("compiler")
@pytest.mark.parametrize("command", ["run", "advise", "compare"])
def test_command_output_matches_schema(command):
    out = json.loads(invoke([command, GEMM, *SMALL_GEMM, "--json"]))
    s = schema_of(command)
    validate_json(out, s)
    assert set(out) == set(s["properties"])


@pytest.mark.usefixtures("compiler")
def test_validate_output_matches_schema(tmp_path):
    import re

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (ROOT / "polybench_c" / "gemm.c").read_text()
    (corpus / "gemm.c").write_text(re.sub(r"#pragma cgp trace .*",
                                          "#pragma cgp trace NI=32 NJ=32 NK=32", text))
    m = tmp_path / "m.json"
    m.write_text(json.dumps({"gpu": {"name": "Fake K1"}, "results": [
        {"kernel": "gemm", "config": "32x32", "work_sizes": {"NI": 64, "NJ": 64, "NK": 64},
         "result": {"total_ms": 0.07}}]}))
    out = tmp_path / "results"
    invoke(["validate", "--only", "gemm", "--corpus", str(corpus), "--out-dir", str(out),
            "--measured", str(m)])
    validate_json(json.loads((out / "tk1-cgpredict.json").read_text()), schema_of("validate"))


def test_an_old_run_file_is_refused_at_its_schema_version():
    """A ``run --json`` of schema 10 (before ``dirty_writeback_ms``, eq. (E5): the golden
    report made old) is refused at its version, not at the first field it lacks; the golden
    report itself (``seconds`` put back) matches."""
    d = json.loads((ROOT / "tests" / "golden" / "gemm_64_trace32_tk1.json").read_text())
    d["seconds"] = {}
    s = schema_of("run")
    validate_json(d, s)
    old = {f: v for f, v in d.items() if f != "dirty_writeback_ms"}
    old["schema_version"] = 10
    with pytest.raises(SchemaError, match=r"^\$\.schema_version: expected 11, got 10$"):
        validate_json(old, s)
