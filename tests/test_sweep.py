"""``cgpredict sweep`` (cgpredict/sweep/): every row is what ``run --json`` gives for its
configuration, each file is traced once per trace size, bad axis values are one line before
any work, tables and plots are written, and the Dask path runs on a LocalCluster."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import require

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


@pytest.mark.slow
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
    import cgpredict.prepared as prepared

    calls = []
    real = prepared.trace_program

    def counting(source, output, options, force=False):
        calls.append((Path(source).name, tuple(sorted(options.macros.items())),
                      options.count_only))
        return real(source, output, options, force)

    monkeypatch.setattr(prepared, "trace_program", counting)
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


def _arrow_type(values: list) -> str:
    """The Parquet column type a sweep column's Python values call for."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "null"  # a field no row has (as the energy of a device without a power model)
    if kinds == {bool}:
        return "bool"
    if kinds == {int}:
        return "int64"
    if kinds and kinds <= {int, float}:
        return "double"
    return "string"


def test_parquet_written_and_read_back(tmp_path):
    """sweep.parquet (pyarrow) holds the CSV's columns in its order, each with the type its
    values call for, and reads back to the same values."""
    pq = require("pyarrow.parquet")
    res = run_sweep(_axes(blocks=("32x8",)), tmp_path, jobs=1, plots=False)
    assert res.parquet == tmp_path / "sweep.parquet" and res.notes == []
    table = pq.read_table(res.parquet)
    with open(res.csv, newline="") as f:
        header = next(csv.reader(f))
    assert table.schema.names == header and table.num_rows == len(res.rows) == 4
    types = {f.name: str(f.type) for f in table.schema}
    assert types["kernel.time_ms"] == types["report.total_ms"] == "double"
    assert types["cfg.block"] == types["cfg.device"] == types["kernel.name"] == "string"
    assert types["cfg.size.N"] == "int64"
    for name in header:
        values = [r.get(name) for r in res.rows]
        assert types[name] == _arrow_type(values), name
        back = table.column(name).to_pylist()
        if types[name] == "string":
            assert back == [None if v is None else str(v) for v in values], name
        else:
            assert back == values, name
    assert pq.read_metadata(res.parquet).num_row_groups >= 1


def test_fit_exponent():
    assert fit_exponent([1, 2, 4], [3.0, 24.0, 192.0]) == pytest.approx(3.0)
    assert fit_exponent([8], [1.0]) is None


# 3 blocks x 3 devices x 2 sizes: 18 configurations, several tasks per phase
AXES_3x3x2 = dict(blocks=("16x16", "32x8", "32x4"), devices=("tk1", "h100", "gtx980"),
                  sizes=(("N", (64, 128)),))


@pytest.fixture(scope="module")
def local_3x3x2(tmp_path_factory):
    """The 3x3x2 sweep on the local process pool (2 processes): the reference table."""
    return run_sweep(_axes(**AXES_3x3x2), tmp_path_factory.mktemp("local"), jobs=2, plots=False)


@pytest.fixture
def cluster():
    """A real Dask cluster on this machine: a scheduler and 2 worker processes (each under a
    nanny that restarts it if it dies), one thread each."""
    distributed = require("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as c:
        c.finished = []  # (function name, worker address) of every task a worker finished
        c.scheduler.add_plugin(_finished_plugin(distributed, c.finished), name="cgp-finished")
        yield c


def _finished_plugin(distributed, into: list):
    """A scheduler plugin that records each task a worker finishes (its result in memory)."""
    import re

    class Finished(distributed.SchedulerPlugin):
        def transition(self, key, start, finish, *args, **kwargs) -> None:
            if start == "processing" and finish == "memory":
                into.append((re.match(r"\w+", str(key)).group(), kwargs.get("worker")))

    return Finished()


@pytest.mark.slow
def test_dask_cluster_table_equals_local_pool(tmp_path, cluster, local_3x3x2, monkeypatch):
    # the trace is a task of the cluster when the cache is on (an in-process --no-cache of
    # another test may have turned it off): on, in a folder of this test's own
    monkeypatch.delenv("CGPREDICT_NO_CACHE", raising=False)
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(tmp_path / "cache"))
    r = CliRunner().invoke(main, [
        "sweep", str(GEMM), "--block", "16x16,32x8,32x4", "--device", "tk1,h100,gtx980",
        "-D", "N=64,128", *[a for n, v in TRACE.items() for a in ("--trace-size", f"{n}={v}")],
        "-o", str(tmp_path / "dask"), "--scheduler", cluster.scheduler_address, "--no-plots",
        "--quiet"], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    assert "18 configurations, 18 rows" in r.stdout
    dask_rows = read_csv(tmp_path / "dask" / "sweep.csv")
    local_rows = read_csv(local_3x3x2.csv)
    assert len(dask_rows) == len(local_rows) == 18
    for mine, theirs in zip(dask_rows, local_rows, strict=True):
        assert mine == theirs  # row for row, every field
    # the work really ran on the cluster's workers: one trace, then the chunks
    names = [name for name, _ in cluster.finished]
    assert names.count("trace_group") == 1 and names.count("_analyse_indexed") >= 2
    assert {w for _, w in cluster.finished} <= set(cluster.scheduler.workers)


def _kill_a_busy_worker(cluster, client, killed: dict, stop) -> None:
    """Wait until a worker is analysing a chunk of the sweep, then SIGKILL that worker
    process; what was killed goes to ``killed``."""
    import os
    import signal
    import time

    pids = client.run(os.getpid)  # worker address -> process id
    while not stop.is_set():
        for key, ts in list(cluster.scheduler.tasks.items()):
            if "analyse_indexed" in str(key) and ts.state == "processing" and ts.processing_on:
                addr = ts.processing_on.address
                os.kill(pids[addr], signal.SIGKILL)
                killed.update(key=key, worker=addr, pid=pids[addr])
                return
        time.sleep(0.02)


@pytest.mark.slow
def test_dask_worker_killed_mid_sweep_is_retried(tmp_path, cluster, local_3x3x2):
    """A worker process killed while it analyses a chunk: the scheduler gives the chunk to
    another worker, the nanny starts a new one, and the table is still complete and right."""
    import os
    import threading

    from dask.distributed import Client

    killed: dict = {}
    stop = threading.Event()
    with Client(cluster, set_as_default=False) as client:
        killer = threading.Thread(target=_kill_a_busy_worker,
                                  args=(cluster, client, killed, stop), daemon=True)
        killer.start()
        try:
            res = run_sweep(_axes(**AXES_3x3x2), tmp_path / "out",
                            scheduler=cluster.scheduler_address, plots=False)
        finally:
            stop.set()
            killer.join(10)
    assert killed, "no worker was busy with a chunk: nothing was killed"
    with pytest.raises(ProcessLookupError):
        os.kill(killed["pid"], 0)  # that process is gone
    assert len(res.rows) == 18 and len(res.configs) == 18
    assert [_without_cfg(r) for r in res.rows] == [_without_cfg(r) for r in local_3x3x2.rows]
    assert read_csv(res.csv) == read_csv(local_3x3x2.csv)


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
