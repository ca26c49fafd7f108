"""Feature extraction and ``cgpredict explain`` end to end (traces small corpus runs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cgpredict.block import Block
from cgpredict.cli import main
from cgpredict.devices import load_device
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.stats.features import FEATURES, build_table, write_csv
from cgpredict.stats.measured import MeasuredRow

pytestmark = pytest.mark.usefixtures("compiler")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "polybench_c"
DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "h100-gemm-syrk.jsonl"  # real H100 measurements (tests/data/README.md)
FIXTURE = DATA / "ncu_raw_format_fixture.csv"  # format fixture, invented values


def invoke(args):
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    for text in (r.stdout, r.stderr):
        assert "Traceback" not in text
    return r


def _row(n: int, block: str) -> MeasuredRow:
    # measured_ms is not used by the feature extraction; 1.0 only fills the field
    return MeasuredRow("gemm", "GEMM", {"NI": n, "NJ": n, "NK": n}, block, "default", 1.0, "t")


@pytest.mark.slow
def test_features_match_a_plain_prediction(tmp_path):
    """One trace per file and pseudo-warps shared across sizes change nothing: every row's
    features come from the same prediction ``cgpredict run`` makes."""
    dev = load_device("h100")
    rows = (_row(128, "32x8"), _row(256, "32x8"), _row(256, "16x16"))
    table, kept = build_table(rows, dev, "h100", CORPUS)
    assert len(table.data) == 3 and not table.dropped
    for rec, (row, _) in zip(table.data, kept):
        opts = RunOptions(block=Block.parse(row.block), device="h100", work_sizes=row.work_sizes)
        alone = predict_source(CORPUS / "gemm.c", opts)
        assert rec["predicted_ms"] == pytest.approx(alone.total_ms, rel=1e-9)
    r256 = table.data[1]
    assert r256["threads_total"] == 256 * 256
    assert r256["launches"] == 1 and r256["kernels"] == 1
    # GEMM, plain port (as measured): C stored once by `*= beta` and on each of the NK
    # iterations; NK loads of A and of B, and C's load
    assert r256["store_per_thread"] == pytest.approx(256 + 1)
    assert r256["load_per_thread"] == pytest.approx(2 * 256 + 1, rel=0.01)
    assert 0 <= r256["l2_hit_rate"] <= 1 and r256["dram_bytes"] > 0
    assert set(FEATURES) <= set(table.features)
    out = write_csv(table, tmp_path / "f.csv")
    header = out.read_text().splitlines()[0].split(",")
    assert header[:7] == ["key", "kernel", "block", "variant", "device", "port", "measured_ms"]
    assert len(out.read_text().splitlines()) == 4


@pytest.mark.slow
def test_rows_below_the_trace_size_are_traced_on_their_own():
    table, _ = build_table((_row(64, "32x8"), _row(256, "32x8")), load_device("h100"), "h100",
                           CORPUS)
    assert not table.dropped
    opts = RunOptions(block=Block(32, 8), device="h100", work_sizes={"NI": 64, "NJ": 64, "NK": 64})
    alone = predict_source(CORPUS / "gemm.c", opts)
    assert table.data[0]["predicted_ms"] == pytest.approx(alone.total_ms, rel=1e-9)


@pytest.mark.slow
def test_worker_processes_predict_the_same():
    dev = load_device("h100")
    syrk = MeasuredRow("syrk", "SYRK", {"NI": 128, "NJ": 128}, "32x8", "default", 1.0, "t")
    rows = (_row(128, "32x8"), syrk, _row(256, "32x8"))
    one, _ = build_table(rows, dev, "h100", CORPUS, jobs=1)
    two, _ = build_table(rows, dev, "h100", CORPUS, jobs=2)
    assert list(two.data["key"]) == ["gemm 128 32x8", "syrk 128 32x8", "gemm 256 32x8"]
    for name in two.features:
        assert np.array_equal(one.data[name], two.data[name]), name


@pytest.mark.slow
def test_unpredictable_rows_are_dropped_with_the_reason():
    table, _ = build_table((_row(128, "2000x1"), _row(256, "32x8")), load_device("h100"),
                           "h100", CORPUS)
    assert [k for k, _ in table.dropped] == ["gemm 128 2000x1"]
    assert len(table.data) == 1


@pytest.mark.slow
def test_explain_with_counters(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    r = invoke(["explain", "--measured", str(REAL), "--counters", str(FIXTURE), "--json",
                "--out", str(tmp_path)])
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["device"] == "h100" and len(d["rows"]) == 6
    for key in ("analytical", "forest", "corrected"):
        assert d[key]["mape_pct"] >= 0 and d[key]["gmean_factor"] >= 1
    assert d["importance"] and d["pca_explained"] and len(d["partial_dependence"]) == 3
    assert len(d["blind"]) == 5
    # every configuration has its launches in the fixture: counters beside the predictions,
    # and as forest features
    assert {c["key"] for c in d["counter_comparison"]} == {row["key"] for row in d["rows"]}
    assert any(n.startswith("ctr_") for n in d["features"])
    l2 = [c for c in d["counter_comparison"] if c["key"] == "gemm 1024 32x8"
          and c["quantity"] == "L2 hit rate"]
    assert l2[0]["measured"] == pytest.approx(0.90)
    assert sum(d["pca_explained"]) == pytest.approx(1.0)
    for name in ("features.csv", "importance.png", "pca_biplot.png", "partial_dependence.png"):
        assert (tmp_path / name).stat().st_size > 0


@pytest.mark.slow
def test_explain_text(tmp_path):
    pytest.importorskip("sklearn")
    r = invoke(["explain", "--measured", str(REAL)])
    assert r.exit_code == 0, r.stderr
    assert "forest of log time (LOKO)" in r.stdout and "analytical model" in r.stdout
    assert "Permutation importance" in r.stdout
    assert "Where the analytical model is blind" in r.stdout
    assert "Hardware counters" not in r.stdout


def _jsonl(tmp_path, lines):
    f = tmp_path / "h100-x.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(f)


def _entry(bench="GEMM", size=1024, **kw):
    return {"bench": bench, "size": size, "block_x": 32, "block_y": 8, "variant": "default",
            "kernel_ms_median": 1.0, **kw}


@pytest.mark.parametrize(
    "lines, message",
    [
        ([_entry(size=s) for s in (128, 256)], "2 measured row(s); explain needs at least 5"),
        ([_entry()] * 4 + [_entry("WHAT")], "no corpus kernel in"),
        ([_entry(device="nosuchgpu")] * 5, "unknown device nosuchgpu"),
        ([_entry(device="tk1")] * 5, "rows for device tk1, but explaining h100"),
    ],
)
def test_explain_bad_input(tmp_path, lines, message):
    pytest.importorskip("sklearn")
    args = ["explain", "--measured", _jsonl(tmp_path, lines)]
    if "explaining h100" in message:
        args += ["--device", "h100"]
    r = invoke(args)
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_explain_refuses_counters_of_another_gpu(tmp_path):
    pytest.importorskip("sklearn")
    other = tmp_path / "a100.csv"
    other.write_text(FIXTURE.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"))
    r = invoke(["explain", "--measured", str(REAL), "--counters", str(other)])
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert "NVIDIA A100-SXM4-80GB" in line and "h100" in line and len(line.splitlines()) == 1


def test_explain_needs_a_device(tmp_path):
    pytest.importorskip("sklearn")
    f = tmp_path / "runs.jsonl"
    f.write_text("".join(json.dumps(_entry(size=s)) + "\n" for s in (128, 256, 512, 1024, 2048)))
    r = invoke(["explain", "--measured", str(f)])
    assert r.exit_code == 2 and "give --device" in r.stderr


@pytest.mark.slow
def test_feature_table_is_typed():
    dev = load_device("h100")
    table, _ = build_table((_row(128, "32x8"),), dev, "h100", CORPUS)
    assert table.data.dtype["measured_ms"] == np.float64
    assert table.data.dtype["key"].kind == "U"
    assert table.matrix().shape == (1, len(table.features))


def test_tiled_features_count_the_staging_loads():
    """Issue 24: gemm_tiled at n = 128, 32x32 blocks on the H100 (32-byte sectors), 512 warps.
    DRAM: C's 64 KB read once, A's and B's 64 KB each staged from DRAM once (compulsory).
    L2: C loaded and stored, 4 sectors a warp each; the staging loads 4 phases x (A's and B's
    32 x 128-byte tile rows over 32 warps: 8 sectors) = 32 sectors a warp."""
    dev = load_device("h100")
    row = MeasuredRow("gemm_tiled", "GEMM_TILED", {"NI": 128, "NJ": 128, "NK": 128}, "32x32",
                      "default", 1.0, "t")
    table, _ = build_table((row,), dev, "h100", CORPUS)
    (rec,) = table.data
    assert rec["dram_bytes"] == pytest.approx(3 * 128 * 128 * 4)
    assert rec["l2_trans_total"] == pytest.approx(512 * (4 + 4 + 32))
