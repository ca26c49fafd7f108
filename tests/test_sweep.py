"""``cgpredict sweep`` (cgpredict/sweep/): every row is what ``run --json`` gives for its
configuration, each file is traced once per trace size, bad axis values are one line before
any work, tables and plots are written, and the Dask path runs on a LocalCluster."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict import api
from cgpredict.cli import main
from cgpredict.sweep import Axes, SweepError, plan, run_sweep
from cgpredict.sweep.execute import chunks
from cgpredict.sweep.plots import fit_exponent
from cgpredict.sweep.table import flatten, read_csv

pytestmark = pytest.mark.usefixtures("compiler")

POLY = Path(__file__).resolve().parents[1] / "polybench_c"
GEMM, SYRK = POLY / "gemm.c", POLY / "syrk.c"
TRACE = {"NI": 32, "NJ": 32, "NK": 32}


def _axes(**kw) -> Axes:
    base = dict(files=(GEMM,), blocks=("16x16", "32x8"), devices=("tk1", "h100"),
                sizes=(("N", (64, 128)),), trace_sizes=TRACE)
    return Axes(**{**base, **kw})


def _run_rows(cfg) -> list[dict]:
    """The rows ``run --json`` gives for one configuration, flattened as the sweep does."""
    rep = api.predict(cfg.file, cfg.block, cfg.device, dict(cfg.given), cfg.port,
                      trace_sizes=dict(cfg.given_trace), model=cfg.model)
    d = json.loads(rep.to_json())
    d.pop("seconds")
    kernels = d.pop("kernels")
    return [{**flatten(d, "report."), **flatten(k, "kernel.")} for k in kernels]


def _without_cfg(row: dict) -> dict:
    return {k: v for k, v in row.items() if not k.startswith("cfg.")}


def test_plan_cross_product_and_groups():
    configs = plan(_axes(models=("cgpredict", "hongkim")))
    assert len(configs) == 2 * 2 * 2 * 2  # blocks x devices x sizes x models
    assert {c.work_sizes for c in configs} == {
        (("NI", 64), ("NJ", 64), ("NK", 64)), (("NI", 128), ("NJ", 128), ("NK", 128))}
    assert {c.group() for c in configs} == {configs[0].group()}  # one trace for all
    parts = chunks(configs, jobs=4, by_block=True)
    assert sorted(i for p in parts for i in p.index) == list(range(len(configs)))
    assert all(len({c.block for c in p.configs}) == 1 for p in parts)


@pytest.mark.parametrize("jobs", [1, 2])
def test_rows_equal_run_json(tmp_path, jobs):
    res = run_sweep(_axes(), tmp_path / "out", jobs=jobs, plots=False)
    assert len(res.configs) == 8 and len(res.rows) == 8  # GEMM has one kernel
    for cfg in res.configs:
        mine = [r for r in res.rows if (r["cfg.block"], r["cfg.device"], r["cfg.size.N"])
                == (cfg.block, cfg.device, dict(cfg.size_label)["N"])]
        assert [_without_cfg(r) for r in mine] == _run_rows(cfg)
    back = read_csv(res.csv)
    assert len(back) == 8
    assert [r["kernel.time_ms"] for r in back] == pytest.approx(
        [r["kernel.time_ms"] for r in res.rows], rel=1e-12)
    assert set(back[0]) == set(res.rows[0])


def test_each_file_traced_once_per_trace_size(tmp_path, monkeypatch):
    """The tracer runs once per (file, trace size): the first two runs of each prepared
    program are a trace and its probes, and no configuration traces again."""
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(tmp_path / "cache"))
    import cgpredict.pipeline as pipeline

    calls = []
    real = pipeline.trace_program

    def counting(source, output, options, force=False):
        calls.append((Path(source).name, tuple(sorted(options.macros.items())),
                      options.count_only))
        return real(source, output, options, force)

    monkeypatch.setattr(pipeline, "trace_program", counting)
    res = run_sweep(_axes(files=(GEMM, SYRK), devices=("tk1",)), None, jobs=1)
    assert len(res.configs) == 2 * 2 * 2
    full = [c for c in calls if not c[2]]
    assert sorted(n for n, _, _ in full) == ["gemm.c", "syrk.c"]


def test_kernels_of_several_files(tmp_path):
    res = run_sweep(_axes(files=(GEMM, SYRK), blocks=("32x8",), devices=("h100",),
                          sizes=(("N", (64,)),), trace_sizes={}), None, jobs=1)
    assert [r["kernel.name"] for r in res.rows] == ["gemm", "syrk"]
    syrk = next(c for c in res.configs if c.file.endswith("syrk.c"))
    assert dict(syrk.given) == {"NI": 64, "NJ": 64}  # N= sets each size macro of the file
    assert dict(syrk.trace_sizes) == {"NI": 64, "NJ": 64}  # the declared 128, clamped


@pytest.mark.parametrize(
    "args,message",
    [
        (["--block", "0x8"], "--block 0x8"),
        (["--device", "tk1,nosuchgpu"], "--device nosuchgpu"),
        (["--block", "64x32", "--device", "h100"], "--block 64x32"),
        (["-D", "N=64,0"], "-D N=0"),
        (["-D", "NOPE=64"], "-D NOPE"),
        (["--model", "magic"], "--model magic"),
        (["--port", "fancy"], "--port fancy"),
    ],
)
def test_bad_axis_value_is_one_line_before_work(tmp_path, args, message):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["sweep", str(GEMM), "-o", str(out), *args],
                           catch_exceptions=False)
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in r.stderr
    assert not out.exists()


def test_unreachable_scheduler_writes_nothing(tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["sweep", str(GEMM), "-o", str(out), "--scheduler",
                                  "tcp://127.0.0.1:9"], catch_exceptions=False)
    assert r.exit_code != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--scheduler" in lines[0]
    assert not out.exists()


def test_cli_writes_table_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, [
        "sweep", str(GEMM), "--block", "16x16,32x8", "--device", "tk1,h100",
        "-D", "N=64,128", "--trace-size", "NI=32", "--trace-size", "NJ=32",
        "--trace-size", "NK=32", "-o", str(out), "--jobs", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    for name in ("sweep.csv", "time_vs_size.png", "blocks_tk1.png", "blocks_h100.png",
                 "devices.png"):
        assert (out / name).stat().st_size > 0, name
    assert "fitted exponent gemm h100 32x8:" in r.stdout
    assert "8 configurations, 8 rows" in r.stdout
    assert "configurations" in r.stderr  # the progress bar
    with open(out / "sweep.csv") as f:
        assert len(list(csv.DictReader(f))) == 8


def test_parquet_when_available(tmp_path):
    pa = pytest.importorskip("pyarrow.parquet")
    res = run_sweep(_axes(devices=("h100",), blocks=("32x8",)), tmp_path, jobs=1, plots=False)
    table = pa.read_table(res.parquet)
    assert table.num_rows == 2
    assert table.column("kernel.time_ms").to_pylist() == [r["kernel.time_ms"] for r in res.rows]


def test_fit_exponent():
    assert fit_exponent([1, 2, 4], [3.0, 24.0, 192.0]) == pytest.approx(3.0)
    assert fit_exponent([8], [1.0]) is None


def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        res = run_sweep(_axes(), tmp_path / "out", scheduler=cluster.scheduler_address,
                        plots=False)
    local = run_sweep(_axes(), None, jobs=1)
    assert [_without_cfg(r) for r in res.rows] == [_without_cfg(r) for r in local.rows]
    assert res.csv.exists()


def test_output_path_that_is_a_file(tmp_path):
    f = tmp_path / "taken"
    f.write_text("mine")
    r = CliRunner().invoke(main, ["sweep", str(GEMM), "-o", str(f)], catch_exceptions=False)
    assert r.exit_code == 2 and "is a file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and f.read_text() == "mine"
    with pytest.raises(SweepError, match="exists and is not a folder"):
        run_sweep(_axes(), f)


def test_bad_axes_raise_before_planning():
    with pytest.raises(SweepError, match="no such file"):
        plan(_axes(files=(Path("/nonexistent.c"),)))
