"""Tests of cgpredict.report: text and JSON rendering of a prediction.

Golden files (tests/golden/) hold the text and the JSON of a small deterministic prediction:
GEMM NI = NJ = NK = 64 traced at 32 on tk1. Refresh them only on purpose, after checking the
difference:  CGP_UPDATE_GOLDEN=1 pytest tests/test_report.py
The JSON golden leaves out "seconds" (wall-clock times of the run, not a result)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from cgpredict.jsondata import jsonable
from cgpredict.pipeline import predict_source
from cgpredict.prediction import SCHEMA_VERSION, Report, RunOptions
from cgpredict.report import to_json, to_text

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("CGP_UPDATE_GOLDEN") == "1"
GEMM_N = ("NI", "NJ", "NK")


@pytest.fixture(scope="module")
def report(compiler):
    opts = RunOptions(device="tk1", work_sizes={k: 64 for k in GEMM_N},
                      trace_sizes={k: 32 for k in GEMM_N})
    return predict_source(POLYBENCH / "gemm.c", opts)


def normalised_json(rep: Report) -> str:
    d = json.loads(to_json(rep))
    d.pop("seconds", None)
    return json.dumps(d, indent=2, sort_keys=True) + "\n"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} missing: run CGP_UPDATE_GOLDEN=1 pytest {__file__}"
    assert text == path.read_text(), f"{name} differs from the golden file (see module doc)"


def _no_machine_details(text: str, compiler) -> None:
    for needle in ("zig", "clang", "/tmp", "cgp-run-", str(POLYBENCH), compiler.describe()):
        assert needle not in text, needle


def test_text_golden(report, compiler):
    text = to_text(report) + "\n"
    _no_machine_details(text, compiler)
    check_golden("gemm_64_trace32_tk1.txt", text)


def test_json_golden(report, compiler):
    text = normalised_json(report)
    _no_machine_details(text, compiler)
    check_golden("gemm_64_trace32_tk1.json", text)


def test_json_content(report):
    d = json.loads(to_json(report))
    assert d["schema_version"] == SCHEMA_VERSION == 11  # 11: dirty_writeback_ms (E5)
    assert d["source"] == "gemm.c" and d["device"] == "tk1" and d["model"] == "cgpredict"
    assert d["work_sizes"] == {"NI": 64, "NJ": 64, "NK": 64}
    assert d["trace_sizes"] == {"NI": 32, "NJ": 32, "NK": 32}
    assert len(d["kernels"]) == 1
    k = d["kernels"][0]
    assert k["name"] == "gemm" and k["grid_dims"] == 2 and k["block"] == "32x32"
    assert k["time_ms"] == pytest.approx(report.kernels[0].time_ms, abs=1e-6)
    assert d["total_ms"] == pytest.approx(sum(x["time_ms"] for x in d["kernels"]), abs=2e-6)
    assert {m["text"] for m in k["mem"]} == {"A[i][k]", "B[k][j]", "C[i][j]"}
    assert k["profile"]["const"]["insts"] == pytest.approx(64)
    assert set(d["seconds"]) >= {"trace", "analysis", "total"}


def test_json_deterministic(report):
    a = to_json(report)
    assert a == to_json(report)
    assert list(json.loads(a)) == sorted(json.loads(a))  # sorted keys


def test_text_content(report):
    text = to_text(report)
    lines = text.split("\n")
    assert lines[0] == "gemm.c on tk1 (cgpredict model, plain port, --sync each)"
    assert lines[1] == "work size: NI=64 NJ=64 NK=64; traced at: NI=32 NJ=32 NK=32"
    assert lines[-1].startswith("total predicted time: ") or any(
        line.startswith("total predicted time: ") for line in lines)
    total = next(line for line in lines if line.startswith("total predicted time: "))
    assert total == f"total predicted time: {report.total_ms:.4f} ms"
    assert "per thread: " in text and "194.0 memory" in text  # 3 per k + C's load and store
    assert "stored on every iteration" in text
    assert "\x1b[" not in text  # no colour codes


def _empty(**kw) -> Report:
    base = dict(source="x.c", device="tk1", model="cgpredict", work_sizes={}, trace_sizes={},
                kernels=(), warnings=("loops [3] are odd",), seconds={"total": 0.5})
    return Report(**{**base, **kw})


def test_render_empty_report():
    text = to_text(_empty())
    assert text.split("\n") == ["x.c on tk1 (cgpredict model, plain port, --sync each)",
                                "work size: (as traced); traced at: (file defaults)", "",
                                "total predicted time: 0.0000 ms",
                                "warning: loops [3] are odd"]
    d = json.loads(to_json(_empty()))
    assert d["kernels"] == [] and d["total_ms"] == 0 and d["schema_version"] == 11


def test_jsonable_values():
    @dataclasses.dataclass(frozen=True)
    class X:
        a: float
        b: tuple
        c: dict

    got = jsonable(X(math.inf, (np.float64(1.23456789), np.int64(3), math.nan),
                      {2: "b", 1: np.float32(0.5)}))
    assert got == {"a": None, "b": [1.234568, 3, None], "c": {"1": 0.5, "2": "b"}}
    json.dumps(got)  # plain JSON types only


def test_text_shows_shared_memory_cost(compiler):
    """gemm_tiled at NK = 64: 64 / 32 = 2 kk phases, each one staging load of the A tile and
    one of the B tile (32x32 block) and two barriers; A[i][k] and B[k][j] are read from the
    tiles once per k (64 each): A[i][k] is one word per warp (broadcast) and B[k][j] a tile
    row, both conflict-free; two 32x32 float tiles = 8192 B. Shared rows have no L2 figures."""
    sizes = {k: 64 for k in GEMM_N}
    rep = predict_source(POLYBENCH / "gemm_tiled.c",
                         RunOptions(device="tk1", work_sizes=sizes, trace_sizes=sizes))
    text = to_text(rep)
    # per thread 64 elements of each tile: A's row, one element on each k, in 16 LDS.128
    # broadcasts of 2 wavefronts; B's 64 in 64 LDS of 1: 80 loads, 96 wavefronts
    assert ("  shared: 4.0 staging loads and 4 barriers per thread, 80.0 shared loads per "
            "thread (96.0 wavefronts; bank conflict mean 1.00-way, worst 1-way), 8192 B per "
            "block") in text
    rows = [ln.split() for ln in text.split("\n")
            if " shared " in ln and "load" in ln and not ln.strip().startswith("shared:")]
    assert sorted(r[0] for r in rows) == ["A[i][k]", "B[k][j]"]
    assert all(r[4:6] == ["-", "-"] for r in rows)


def test_hit_column_names_l1_hits_and_stores():
    """A load the L1 serves has no L2 transaction to hit or miss, and a store writes into the
    L2: neither shows an L2 hit rate."""
    from cgpredict.prediction import MemInstrReport

    def mem(kind, trans, rate, pattern="coalesced"):
        return MemInstrReport(0, "p[i].y", "f.c:3", kind, pattern, (1.0, 0.0, 0.0), trans, rate,
                              1.0)

    assert mem("load", 0.0, 0.0).hit_text() == "L1"
    assert mem("store", 4.0, 1.0).hit_text() == "-"
    assert mem("load", 0.0, 0.0, "shared").hit_text() == "-"
    assert mem("load", 4.0, 0.875).hit_text() == "87.5%"
