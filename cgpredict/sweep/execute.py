"""Running a sweep's configurations: a local process pool, or a Dask distributed cluster.

Two phases when the on-disk cache is on: first every distinct trace (``Config.group``) is
made once, in parallel, into the cache; then the configurations are analysed in chunks that
share a block shape (the pseudo-warps depend on the trace and the block only, so a chunk
forms them once for all its devices, sizes and models), each chunk reading its trace back
from the cache. Without the cache each group is one task that traces and analyses all its
configurations. A chunk's rows are the rows ``run --json`` gives for each configuration.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .plan import Config, SweepError
from .table import report_rows

Progress = Callable[[int, int, str], None] | None


def _options(cfg: Config):
    from ..api import options

    return options(
        cfg.block, cfg.device, dict(cfg.given), cfg.port,
        trace_sizes=dict(cfg.given_trace), model=cfg.model,
    )


def trace_group(cfg: Config) -> str:
    """Phase 1: make the trace of ``cfg``'s group (into the on-disk cache)."""
    from ..prepared import prepare

    with prepare(Path(cfg.file), _options(cfg)) as prep:
        return "cache" if prep.cached else "traced"


def analyse_chunk(configs: list[Config]) -> list[tuple[int, list[dict]]]:
    """Trace (or read back) the group of ``configs`` once and predict each of them; returns
    (position in ``configs``, its rows). All of ``configs`` share one group."""
    from ..devices import load_device
    from ..prepared import prepare
    from ..trace_analysis import analyze_trace

    out = []
    devices: dict = {}
    with prepare(Path(configs[0].file), _options(configs[0])) as prep:
        for i, cfg in enumerate(configs):
            opts = _options(cfg)
            dev = devices.get(cfg.device) or devices.setdefault(cfg.device, load_device(cfg.device))
            rep = analyze_trace(
                prep.trace, dev, opts, prep.sizes, prep.trace_sizes,
                dict(cfg.work_sizes), prep.memo,
            )
            out.append((i, report_rows(rep, cfg)))
        prep.store_dependences()  # for the other chunks of this trace still to run
    return out


@dataclass(frozen=True)
class Chunk:
    """Configurations analysed by one task, and their positions in the sweep."""

    index: tuple[int, ...]
    configs: tuple[Config, ...]


def chunks(configs: list[Config], jobs: int, by_block: bool) -> list[Chunk]:
    """Group by trace, then (``by_block``) by block shape. A chunk larger than its share of
    the work is split, and while the chunks do not divide evenly among ``jobs`` workers the
    largest is halved (each extra chunk forms its pseudo-warps once more, but no worker waits
    for another's last whole block); largest first, so a pool hands them out longest-first."""
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(c.group() + ((c.block,) if by_block else ()), []).append(i)
    jobs = max(jobs, 1)
    share = max(1, -(-len(configs) // jobs))
    parts: list[list[int]] = []
    for idx in groups.values():
        step = share if by_block else len(idx)
        parts += [idx[k : k + step] for k in range(0, len(idx), step)]
    while by_block and jobs > 1 and len(parts) % jobs and len(parts) < 4 * jobs:
        big = max(parts, key=len)
        if len(big) < 2:
            break
        parts.remove(big)
        parts += [big[: len(big) // 2 + len(big) % 2], big[len(big) // 2 + len(big) % 2 :]]
    parts.sort(key=len, reverse=True)
    return [Chunk(tuple(p), tuple(configs[i] for i in p)) for p in parts]


class Runner:
    """Submits a function over arguments and yields results as they finish."""

    def map_unordered(self, fn, args: list) -> Iterable:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass


class LocalRunner(Runner):
    """A local process pool of ``jobs`` workers (in this process when ``jobs`` is 1)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.pool = None
        if self.jobs > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork: the workers start with cgpredict, numpy and numba already imported
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            self.pool = ProcessPoolExecutor(self.jobs, mp_context=ctx)

    def map_unordered(self, fn, args: list) -> Iterable:
        if self.pool is None or len(args) == 1:
            for a in args:
                yield fn(a)
            return
        from concurrent.futures import as_completed

        futures = [self.pool.submit(fn, a) for a in args]
        for f in as_completed(futures):
            yield f.result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


class DaskRunner(Runner):
    """Tasks on a Dask distributed cluster at ``address`` (the ``dask`` extra). The client
    connects at once: an unreachable address is a SweepError before any work starts."""

    def __init__(self, address: str, timeout_s: float = 5.0) -> None:
        try:
            from dask.distributed import Client
        except ImportError:
            raise SweepError(
                "--scheduler needs dask.distributed: pip install 'cgpredict[dask]'"
            ) from None
        try:
            self.client = Client(address, timeout=f"{timeout_s}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SweepError(f"--scheduler {address}: cannot connect ({first})") from None

    def map_unordered(self, fn, args: list) -> Iterable:
        futures = [self.client.submit(fn, a, pure=False) for a in args]
        for f in futures:  # in order of submission (this client is not the default one)
            yield f.result()

    def close(self) -> None:
        self.client.close()


def run_configs(configs: list[Config], runner: Runner, jobs: int, progress: Progress = None):
    """Every configuration's rows, in the order of ``configs``."""
    from ..diskcache import enabled

    rows: list[list[dict] | None] = [None] * len(configs)
    done = 0
    cached = enabled()
    if cached:
        firsts = list({c.group(): c for c in configs}.values())
        for k, _ in enumerate(runner.map_unordered(trace_group, firsts), 1):
            _note(progress, 0, len(configs), f"traced {k}/{len(firsts)}")
    parts = chunks(configs, jobs, by_block=cached)
    results = runner.map_unordered(_analyse_indexed, [(p.index, list(p.configs)) for p in parts])
    for index, got in results:
        for i, r in got:
            rows[index[i]] = r
            done += 1
        _note(progress, done, len(configs), "")
    return [r for r in rows if r is not None]


def _analyse_indexed(arg: tuple[tuple[int, ...], list[Config]]):
    index, configs = arg
    return index, analyse_chunk(configs)


def _note(progress: Progress, done: int, total: int, what: str) -> None:
    if progress is not None:
        progress(done, total, what)


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


class ProgressBar:
    """A progress line with ETA on a stream (stderr): redrawn in place on a terminal, one
    line per update elsewhere."""

    def __init__(self, stream, width: int = 30) -> None:
        self.stream, self.width = stream, width
        self.start = time.perf_counter()
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def __call__(self, done: int, total: int, what: str) -> None:
        elapsed = time.perf_counter() - self.start
        fill = int(self.width * done / max(total, 1))
        eta = f"ETA {elapsed / done * (total - done):.0f} s" if done else "ETA --"
        line = (
            f"[{'#' * fill}{'.' * (self.width - fill)}] {done}/{total} configurations, "
            f"{elapsed:.0f} s, {eta}" + (f" ({what})" if what else "")
        )
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
