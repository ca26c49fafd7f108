"""``cgpredict cache`` and ``cgpredict sweep``: thin click commands over ``diskcache`` and
``cgpredict.sweep`` (registered on the main group by ``cli.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group("cache")
def cache_group() -> None:
    """The on-disk cache of traces (content-addressed; CGPREDICT_CACHE_DIR)."""


@cache_group.command("info")
def cache_info() -> None:
    """Where the cache is, how many entries and bytes it holds."""
    from .diskcache import DiskCache

    for line in DiskCache().info().lines():
        click.echo(line)


@cache_group.command("clear")
def cache_clear() -> None:
    """Remove every entry of the cache, and the temp folders of killed cgpredict runs."""
    from .diskcache import DiskCache
    from .tempdirs import sweep_stale

    c = DiskCache()
    freed = c.clear()
    stale = sweep_stale(everything=True)
    click.echo(f"cleared {c.root}: {freed} bytes freed; {stale} stale temp folder(s) removed")


def _lists(values: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Repeated and comma-separated option values, in order, each once."""
    from .sweep.plan import split_list

    out: list[str] = []
    for v in values:
        out += split_list(v, what)
    return tuple(dict.fromkeys(out))


@click.command("sweep")
@click.argument(
    "sources", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option("--block", "blocks", multiple=True, metavar="XxY,...",
              help="Block shapes, comma-separated or repeated [default: 32x8].")
@click.option("--device", "devices", multiple=True, metavar="D,...",
              help="GPU devices (bundled names or .toml files) [default: tk1].")
@click.option("-D", "defines", multiple=True, metavar="NAME=V,...",
              help="Work sizes; N=... sets every size macro of a file that has no N "
              "(each -D is an axis of the cross product) [default: the files' sizes].")
@click.option("--trace-size", "trace_defs", multiple=True, metavar="NAME=V",
              help="Size traced [default: each file's '#pragma cgp trace'].")
@click.option("--port", "ports", multiple=True, metavar="P,...",
              help="CUDA ports: plain, restrict [default: plain].")
@click.option("--model", "models", multiple=True, metavar="M,...",
              help="Models: cgpredict, hongkim, gpuperf [default: cgpredict].")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("sweep-results"), show_default=True,
              help="Folder for sweep.csv, sweep.parquet and the plots.")
@click.option("--jobs", type=click.IntRange(1, 256), help="Local worker processes "
              "[default: the CPU count, at most 8].")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run on a Dask distributed cluster (tcp://host:8786; the dask extra).")
@click.option("--no-plots", is_flag=True, help="Write the tables only.")
@click.option("--quiet", is_flag=True, help="No progress bar and no per-configuration lines.")
def sweep(sources, blocks, devices, defines, trace_defs, ports, models, out_dir, jobs,
          scheduler, no_plots, quiet):
    """Predict every combination of files x blocks x devices x ports x models x sizes,
    tracing each file once per trace size."""
    from .sweep import Axes, run_sweep
    from .sweep.execute import ProgressBar
    from .sweep.plan import SweepError, parse_size_axis

    trace = {}
    for t in trace_defs:
        name, _, value = t.partition("=")
        if not name.isidentifier() or not value.isdigit() or int(value) <= 0:
            raise SweepError(f"--trace-size {t!r}: want NAME=N with N a positive integer")
        trace[name] = int(value)
    axes = Axes(
        files=tuple(sources),
        blocks=_lists(blocks, "--block") or ("32x8",),
        devices=_lists(devices, "--device") or ("tk1",),
        ports=_lists(ports, "--port") or ("plain",),
        models=_lists(models, "--model") or ("cgpredict",),
        sizes=tuple(parse_size_axis(d) for d in defines),
        trace_sizes=trace,
    )
    bar = None if quiet else ProgressBar(sys.stderr)
    res = run_sweep(axes, out_dir, jobs, scheduler, bar, plots=not no_plots)
    if not quiet:
        for c in res.configs:
            sizes = " ".join(f"{n}={v}" for n, v in c.size_label)
            ms = next(r["report.total_ms"] for r in res.rows if _same(r, c))
            click.echo(f"{Path(c.file).name:<16} {c.block:>6} {c.device:<8} {c.port:<8} "
                       f"{c.model:<9} {sizes:<14} {ms:12.4f} ms")
    for label, k in res.exponents:
        click.echo(f"fitted exponent {label}: {k:.3f}" if k is not None else
                   f"fitted exponent {label}: (one size)")
    written = [p for p in (res.csv, res.parquet) if p] + list(res.plots)
    click.echo(f"{len(res.configs)} configurations, {len(res.rows)} rows in "
               f"{res.seconds:.1f} s; wrote " + ", ".join(str(p) for p in written))
    for note in res.notes:
        click.echo(note, err=True)


def _same(row: dict, c) -> bool:
    return (row["cfg.file"], row["cfg.block"], row["cfg.device"], row["cfg.port"],
            row["cfg.model"]) == (c.file, c.block, c.device, c.port, c.model) and all(
        row.get(f"cfg.size.{n}") == v for n, v in c.size_label)


def register(main: click.Group) -> None:
    """Add ``cache`` and ``sweep`` to the main group."""
    from .cli_common import no_cache_option, no_sandbox_option

    main.add_command(cache_group)
    main.add_command(no_sandbox_option(no_cache_option(sweep)))
