"""``cgpredict sweep``: a design space explored from one trace per file and trace size.

    from cgpredict.sweep import Axes, run_sweep
    res = run_sweep(Axes(files=(Path("polybench_c/gemm.c"),), blocks=("16x16", "32x8"),
                         devices=("tk1", "h100"), sizes=(("N", (512, 1024)),)),
                    out_dir=Path("sweep-out"))
    res.rows[0]["kernel.time_ms"], res.csv, res.exponents

Every axis value is checked before any work (``plan``); configurations sharing a trace are
traced once and re-analysed (``execute``); the rows are those of ``run --json`` (``table``);
the pictures are drawn when matplotlib is there (``plots``). The CLI command is a thin layer
over ``run_sweep``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .plan import ALL_SIZES, Axes, Config, SweepError, check_axes, parse_size_axis, plan

__all__ = [
    "ALL_SIZES",
    "Axes",
    "Config",
    "SweepError",
    "SweepResult",
    "check_axes",
    "parse_size_axis",
    "plan",
    "run_sweep",
]


@dataclass
class SweepResult:
    """What a sweep produced: its rows and the files written."""

    configs: list[Config]
    rows: list[dict]
    csv: Path | None = None
    parquet: Path | None = None
    plots: list[Path] = field(default_factory=list)
    exponents: list[tuple[str, float | None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was not written, and why
    seconds: float = 0.0


def run_sweep(
    axes: Axes,
    out_dir: Path | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress=None,
    plots: bool = True,
) -> SweepResult:
    """Plan, run and (``out_dir``) write a sweep. A bad axis value or an unreachable
    ``scheduler`` raises SweepError before anything is traced or written."""
    import time

    from .execute import DaskRunner, LocalRunner, default_jobs, run_configs

    t0 = time.perf_counter()
    if out_dir is not None and Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise SweepError(f"-o {out_dir}: exists and is not a folder")
    configs = plan(axes)
    n_jobs = jobs or default_jobs()
    runner = DaskRunner(scheduler) if scheduler else LocalRunner(n_jobs)
    try:
        if scheduler:
            n_jobs = max(n_jobs, _dask_workers(runner))
        per_config = run_configs(configs, runner, n_jobs, progress)
    finally:
        runner.close()
    rows = [r for rs in per_config for r in rs]
    res = SweepResult(configs, rows)
    if out_dir is not None:
        _write(res, axes, Path(out_dir), plots)
    res.seconds = time.perf_counter() - t0
    return res


def _dask_workers(runner) -> int:
    try:
        workers = runner.client.scheduler_info()["workers"].values()
        return max(1, sum(w["nthreads"] for w in workers))
    except Exception:  # pragma: no cover - an old scheduler without the field
        return 1


def _write(res: SweepResult, axes: Axes, out_dir: Path, plots: bool) -> None:
    from .table import write_csv, write_parquet

    out_dir.mkdir(parents=True, exist_ok=True)
    res.csv = write_csv(res.rows, out_dir / "sweep.csv")
    why = write_parquet(res.rows, out_dir / "sweep.parquet")
    if why:
        res.notes.append(f"sweep.parquet not written: {why}")
    else:
        res.parquet = out_dir / "sweep.parquet"
    if not plots:
        return
    size_name = axes.sizes[0][0] if axes.sizes else None
    try:
        from .plots import draw_all

        res.plots, res.exponents = draw_all(res.rows, size_name, out_dir)
    except ImportError:
        res.notes.append("plots not drawn: matplotlib is not installed (the plot extra)")
