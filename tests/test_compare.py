"""Tests of cgpredict.gpu_vs_fpga: GPU vs FPGA per kernel, the recommendation and its reasons,
and the text / JSON renderings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cgpredict.fpga.report import fpga_to_json, fpga_to_text
from cgpredict.gpu_vs_fpga import compare_source, compare_to_json, compare_to_text

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


@pytest.fixture(scope="module")
def mvt(compiler):
    return compare_source(POLYBENCH / "mvt.c", work={"N": 256}, trace_sizes={"N": 64})


def test_both_estimates_per_kernel(mvt):
    assert [k.name for k in mvt.kernels] == ["mvt_k1", "mvt_k2"]
    for k in mvt.kernels:
        assert k.gpu_ms > 0 and k.fpga_ms > 0
        assert k.winner == ("GPU" if k.gpu_ms <= k.fpga_ms else "FPGA")
        assert k.ratio == pytest.approx(max(k.gpu_ms, k.fpga_ms) / min(k.gpu_ms, k.fpga_ms))
        assert any(r.startswith("GPU:") for r in k.reasons)
        assert any(r.startswith("FPGA:") for r in k.reasons)
    assert mvt.gpu_total_ms == pytest.approx(sum(k.gpu_ms for k in mvt.kernels))
    assert mvt.fpga_total_ms == pytest.approx(sum(k.fpga_ms for k in mvt.kernels))
    assert mvt.recommendation == ("GPU" if mvt.gpu_total_ms <= mvt.fpga_total_ms else "FPGA")
    assert mvt.work_sizes == {"N": 256} and mvt.trace_sizes == {"N": 64}


def test_reasons_name_coalescing_clock_and_bandwidth(mvt):
    k1 = mvt.kernels[0]
    assert any("uncoalesced" in r and "A[i][j]" in r for r in k1.reasons)
    assert any("coalesced" in r for r in mvt.kernels[1].reasons)
    text = " ".join(mvt.reasons)
    assert "852 MHz GPU vs 100 MHz FPGA" in text and "17 GB/s GPU vs 4 GB/s FPGA" in text


def test_text_and_json(mvt):
    text = compare_to_text(mvt)
    assert f"recommendation: {mvt.recommendation}" in text
    assert "mvt_k1" in text and "total" in text
    d = json.loads(compare_to_json(mvt))
    assert d["recommendation"] == mvt.recommendation
    assert [k["name"] for k in d["kernels"]] == ["mvt_k1", "mvt_k2"]
    assert d["fpga"]["device"] == "zc702" and d["schema_version"] == 1
    assert compare_to_json(mvt) == compare_to_json(mvt)  # deterministic
    ft = fpga_to_text(mvt.fpga)
    assert "#pragma HLS pipeline" in ft and "total estimated time" in ft
    assert json.loads(fpga_to_json(mvt.fpga))["total_ms"] == pytest.approx(
        mvt.fpga_total_ms, rel=1e-6)


def test_a_design_that_does_not_fit_never_wins(tmp_path, compiler):
    """With 1 LUT no FPGA design fits: the infeasible design's (short) time must not make
    the FPGA the recommendation."""
    src = (Path(__file__).resolve().parents[1] / "cgpredict" / "fpga" / "devices" / "zc702.toml")
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(src.read_text().replace("lut = 53200", "lut = 1"))
    c = compare_source(POLYBENCH / "mvt.c", fpga=str(tiny), work={"N": 256},
                       trace_sizes={"N": 64})
    assert c.recommendation == "GPU"
    assert c.reasons[0].startswith("GPU: the FPGA cannot hold the program (no explored design")
    for k in c.kernels:
        assert k.winner == "GPU" and k.reasons[0].startswith("GPU: no explored FPGA design")
    assert "(n/a)" in compare_to_text(c)
    json.loads(compare_to_json(c))  # an infinite ratio is still valid JSON
