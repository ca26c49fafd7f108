"""The library API as a notebook calls it: cgpredict.predict / advise / compare, typed reports
with to_dict()/to_json() equal to what the CLI prints, and a lazy `import cgpredict`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import cgpredict
from cgpredict import api
from cgpredict.cli import main
from cgpredict.prediction import Report

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GEMM = POLYBENCH / "gemm.c"
WORK = {"NI": 64, "NJ": 64, "NK": 64}
TRACE = {"NI": 32, "NJ": 32, "NK": 32}
SMALL_GEMM = ["-D", "NI=64", "-D", "NJ=64", "-D", "NK=64",
              "--trace-size", "NI=32", "--trace-size", "NJ=32", "--trace-size", "NK=32"]


def test_import_is_lazy():
    code = (
        "import sys, cgpredict; "
        "print(sorted(m for m in sys.modules if m.startswith('cgpredict.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)
    assert "cgpredict.pipeline" not in loaded and "cgpredict.api" not in loaded, loaded


def test_unknown_attribute():
    with pytest.raises(AttributeError):
        cgpredict.no_such_function  # noqa: B018


@pytest.mark.usefixtures("compiler")
def test_predict_equals_cli_run():
    rep = cgpredict.predict(GEMM, block="32x8", device="tk1", sizes=WORK, trace_sizes=TRACE)
    assert isinstance(rep, Report)
    assert [k.name for k in rep.kernels] == ["gemm"] and rep.kernels[0].block == "32x8"
    d = rep.to_dict()
    assert json.loads(rep.to_json()) == json.loads(json.dumps(d))
    r = CliRunner().invoke(main, ["run", str(GEMM), *SMALL_GEMM, "--block", "32x8", "--json"])
    assert r.exit_code == 0, r.stderr
    cli = json.loads(r.stdout)
    for x in (cli, d):
        x.pop("seconds")
    assert cli == json.loads(json.dumps(d))


@pytest.mark.usefixtures("compiler")
def test_compare_function_and_module():
    import cgpredict.gpu_vs_fpga  # noqa: F401  (its name does not shadow the function)

    assert cgpredict.compare is api.compare
    c = cgpredict.compare(GEMM, sizes=WORK, trace_sizes=TRACE)
    assert [k.name for k in c.kernels] == ["gemm"]
    d = c.to_dict()
    assert d["recommendation"] in ("GPU", "FPGA") and json.loads(c.to_json()) == d


@pytest.mark.usefixtures("compiler")
def test_advise_to_json():
    a = cgpredict.advise(GEMM, sizes=WORK, trace_sizes=TRACE)
    d = json.loads(a.to_json())
    assert d["schema_version"] == 2 and "baseline" not in d  # 2: roofline and floors
    assert d["fixes"] and d["fixes"][0]["speedup"] >= d["fixes"][-1]["speedup"]


def test_bad_block_is_one_line_error():
    from cgpredict.errors import CGPredictError

    with pytest.raises(CGPredictError, match="block shape"):
        cgpredict.predict(GEMM, block="32by8")
