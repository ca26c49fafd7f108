"""Measured-file readers of cgpredict.stats: the shared jsonl, measure.py JSON, the TK1 table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cgpredict.stats.measured import (
    MeasuredError,
    bench_stem,
    check_enough,
    infer_device,
    read_measured,
)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "polybench_c"
DATA = Path(__file__).resolve().parent / "data"


def _line(bench="GEMM", size=1024, bx=32, by=8, ms=1.5, **extra):
    return json.dumps({"bench": bench, "size": size, "block_x": bx, "block_y": by,
                       "variant": "default", "kernel_ms_median": ms, **extra})


def test_bench_names_map_to_corpus_stems():
    assert bench_stem("FDTD-2D") == "fdtd2d"
    assert bench_stem("2DCONV") == "2dconv"
    assert bench_stem("GEMM") == "gemm"


def test_shared_jsonl(tmp_path):
    f = tmp_path / "h100-runs.jsonl"
    f.write_text(_line() + "\n" + _line("FDTD-2D", 2048, ms=8.0) + "\n")
    m = read_measured(f, CORPUS)
    assert m.fmt == "jsonl"
    gemm, fdtd = m.rows
    assert (gemm.kernel, gemm.block, gemm.measured_ms) == ("gemm", "32x8", 1.5)
    assert gemm.work_sizes == {"NI": 1024, "NJ": 1024, "NK": 1024}
    # the measurements' README: FDTD-2D at NX = NY = size, TMAX = 100
    assert fdtd.work_sizes == {"NX": 2048, "NY": 2048, "TMAX": 100}
    assert infer_device(m) == "h100"  # from the file name
    assert gemm.key == "gemm 1024 32x8"
    assert gemm.port == "plain"  # the shared measurements: PolyBench/GPU without __restrict__


def test_the_real_subset_reads():
    m = read_measured(DATA / "h100-gemm-syrk.jsonl", CORPUS)
    assert len(m.rows) == 6 and {r.kernel for r in m.rows} == {"gemm", "syrk"}
    assert infer_device(m) == "h100"


def test_unknown_kernel_and_device_are_named(tmp_path):
    f = tmp_path / "runs.jsonl"
    f.write_text(_line() + "\n" + _line("NOSUCH") + "\n" + _line("ALSOBAD") + "\n")
    with pytest.raises(MeasuredError, match="no corpus kernel .* for ALSOBAD, NOSUCH"):
        read_measured(f, CORPUS)
    f.write_text(_line(device="h100") + "\n" + _line(device="rtx9090") + "\n")
    with pytest.raises(MeasuredError, match="unknown device rtx9090"):
        read_measured(f, CORPUS)


@pytest.mark.parametrize(
    "line, what",
    [
        ('{"bench": "GEMM"}', "missing size, block_x"),
        ("[1, 2]", "want a JSON object"),
        ("not json", "not JSON"),
        (_line(ms=-1), "kernel_ms_median: want a positive number"),
        (_line(size=0), "size: want a positive integer"),
        (_line(bx=0), "bad block shape"),
        (_line(port="const"), "port: want plain or restrict"),
    ],
)
def test_bad_jsonl_lines(tmp_path, line, what):
    f = tmp_path / "runs.jsonl"
    f.write_text(_line() + "\n" + line + "\n")
    with pytest.raises(MeasuredError, match=what):
        read_measured(f, CORPUS)


def test_tk1_table(tmp_path):
    f = tmp_path / "tk1-table.json"
    f.write_text(json.dumps({"GEMM": {"work": 1024, "grid": 2, "measured_ms": 249.16},
                             "ATAX": {"work": 4096, "grid": 1, "measured_ms": 201.7}}))
    m = read_measured(f, CORPUS)
    assert m.fmt == "table" and infer_device(m) == "tk1"
    assert [(r.kernel, r.block) for r in m.rows] == [("gemm", "32x32"), ("atax", "256x1")]
    assert m.rows[1].work_sizes == {"NX": 4096, "NY": 4096}


def test_measure_py_json_with_counters(tmp_path):
    doc = {
        "gpu": {"name": "NVIDIA H100 80GB HBM3"},
        "results": [
            {"kernel": "gemm", "config": "32x8", "work_sizes": {"NI": 256, "NJ": 256, "NK": 256},
             "result": {"total_ms": 0.25},
             "counters": {"csv": "ncu/gemm-32x8.csv", "launches_per_run": 4,
                          "launches_profiled": 2}},
            {"kernel": "atax", "config": "256x1", "error": "build failed"},
        ],
    }
    f = tmp_path / "nvidia-h100-80gb-hbm3.json"
    f.write_text(json.dumps(doc))
    m = read_measured(f, CORPUS)
    assert m.fmt == "measure.py" and m.gpu == "NVIDIA H100 80GB HBM3"
    assert infer_device(m) == "h100"
    (row,) = m.rows  # the failed entry is skipped, as validate does
    assert row.work_sizes == {"NI": 256, "NJ": 256, "NK": 256} and row.measured_ms == 0.25
    assert row.counters_csv == str(tmp_path / "ncu" / "gemm-32x8.csv")
    assert row.counter_scale == 2.0
    assert row.port == "plain"  # measure.py builds the plain port unless told otherwise
    doc["port"] = "restrict"
    f.write_text(json.dumps(doc))
    assert read_measured(f, CORPUS).rows[0].port == "restrict"


def test_too_few_rows(tmp_path):
    f = tmp_path / "runs.jsonl"
    f.write_text("\n".join(_line(size=s) for s in (256, 512, 1024)) + "\n")
    with pytest.raises(MeasuredError, match="3 measured row\\(s\\); explain needs at least 5"):
        check_enough(read_measured(f, CORPUS))


def test_not_a_measured_file(tmp_path):
    f = tmp_path / "x.json"
    f.write_text("[]")
    with pytest.raises(MeasuredError, match="not a measured file"):
        read_measured(f, CORPUS)
