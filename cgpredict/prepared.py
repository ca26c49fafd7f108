"""A traced program ready to be analysed any number of times (``Prepared``).

``plan_trace`` checks the source and resolves its sizes (``trace_sizes``) and its key in the
on-disk cache, tracing nothing; ``prepare`` traces it at the trace size (or reads it from the
cache, ``trace_store``) and fits its trip counts for the work size on count-only probe runs
that go on beside the analysis (``PendingSizes``, ``scaling.SizeModel``). The advisor's sweeps
and the FPGA estimator analyse one ``Prepared`` many times (``Prepared.analyze``).
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import numba_cache, warmup
from .block import check_block_size
from .devices import GPUDevice, load_device
from .diskcache import default_cache
from .errors import CGPredictError, RegionError, TraceFormatError
from .frontend.compiler import find_compiler
from .frontend.regions import read_source, tile_problem
from .frontend.tracefile import Trace, read_trace
from .frontend.tracer import TraceOptions, marked_source, trace_program
from .prediction import PredictionError, Report, RunOptions
from .scaling import (
    PROBES,
    SizeModel,
    launch_counts,
    loop_keys,
    mean_trips,
    near_probe_sizes,
    probe_sizes,
)
from .tempdirs import make_tempdir
from .trace_sizes import check_counters, min_threads, resolve_sizes, typed_sizes
from .trace_store import (
    dependencies,
    load_dependences,
    load_prepared,
    prepared_key,
    store_dependences,
    store_prepared,
)

if TYPE_CHECKING:
    from .analysis_memo import AnalysisMemo

__all__ = ["PendingSizes", "Prepared", "TracePlan", "plan_trace", "prepare", "same_loops",
           "step"]

def _import_analysis() -> None:
    """The analysis (numba and its kernels' modules: ~0.6 s of a cold run's CPU), imported
    on the warm-up thread while the main one waits for the C compiler (the trace's compile,
    link and run): nothing the tracer imports needs numba."""
    import cgpredict.trace_analysis  # noqa: F401


def start_imports() -> None:
    """Begin importing the analysis and setting numba up beside the compiler, once per
    process (``warmup``); this thread imports none of it before ``warmup.join()``."""
    warmup.start(_import_analysis)


def _new_memo() -> AnalysisMemo:
    """An empty AnalysisMemo (imported here: its module imports the pseudo-warps, numba)."""
    warmup.join()
    from .analysis_memo import AnalysisMemo

    return AnalysisMemo()


def _recorded(trace: Trace, region: int) -> list[int]:
    """The launches of ``region`` whose memory events were recorded."""
    rows = (trace.launches["region"] == region) & (trace.launches["recorded"] == 1)
    return [int(x) for x in np.flatnonzero(rows)]


@dataclass
class Prepared:
    """A traced program ready to be analysed any number of times (advisor sweeps): the trace,
    its trip-count models and sizes. Owns the temporary trace files; use as a context manager."""

    trace: Trace
    sizes: SizeModel  # or a PendingSizes, fitted while the analysis starts
    trace_sizes: dict[str, int]
    work_sizes: dict[str, int]
    seconds: dict[str, float]
    _tmp: tempfile.TemporaryDirectory
    memo: AnalysisMemo = dataclasses.field(default_factory=_new_memo)  # see analysis_memo
    cached: bool = False  # read from the on-disk cache, not traced now
    key: str | None = None  # its key in the on-disk cache (None: the cache is off)
    # the count-only probe runs, (sizes, file, trace) each, waited for when still going;
    # None when the trace is at the work size (no probes)
    probe_runs: Callable[[], list[tuple[dict, Path, Trace]]] | None = None

    def load_dependences(self) -> None:
        """Fill the memo with the trace's inter-thread dependences found by earlier runs
        (trace_store), for the launches this analysis will form warps of."""
        store = default_cache()
        if store is None or self.key is None:
            return
        items = [("dependence", r.index, launch, g) for r in self.trace.header.regions
                 for launch in _recorded(self.trace, r.index)[:1] for g in (1, 2)]
        got = load_dependences(store, self.key, items)
        self.memo.launch_parts.update(got)
        self.memo.stored |= set(got)

    def store_dependences(self) -> None:
        """Store the dependences this Prepared found (after an analysis) for later runs."""
        store = default_cache()
        if store is not None and self.key is not None:
            found = self.memo.dependences()
            store_dependences(store, self.key, found, self.memo.stored)
            self.memo.stored |= set(found)

    def close(self) -> None:
        if isinstance(self.sizes, PendingSizes):
            self.sizes.wait()
        self._tmp.cleanup()

    def __enter__(self) -> Prepared:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def analyze(self, opts: RunOptions, device: GPUDevice | None = None) -> Report:
        warmup.join()  # its imports done: this thread may import the analysis
        from .trace_analysis import analyze_trace

        t0 = time.perf_counter()
        dev = device or load_device(opts.device)
        rep = analyze_trace(
            self.trace, dev, opts, self.sizes, self.trace_sizes, self.work_sizes, self.memo
        )
        self.store_dependences()
        secs = {**self.seconds, "analysis": time.perf_counter() - t0}
        # the probes run beside the analysis: the wall time is the trace and the analysis
        secs["total"] = secs["trace"] + secs["analysis"]
        return dataclasses.replace(rep, seconds=secs)


@dataclass(frozen=True)
class TracePlan:
    """What ``prepare`` will trace: the sizes resolved, and the cache key of the result."""

    text: str
    work: dict[str, int]
    trace_sizes: dict[str, int]
    auto: bool
    wanted: int
    key: str | None  # None when the cache is off


def plan_trace(source: Path, opts: RunOptions) -> TracePlan:
    """Check the source, resolve its sizes and key the trace, tracing nothing."""
    text = read_source(source)  # one-line errors for unreadable or badly marked sources,
    marked = marked_source(
        source, text, {k: str(v) for k, v in opts.work_sizes.items()}, opts.port,
        tuple(opts.functions),
    )
    store = default_cache()
    if store is None:
        # no keys to compute and no cached report to answer: the warm-up can start now,
        # beside the macro probe's clang (the compiler found first: it imports llvmlite,
        # which numba imports on the warm-up thread)
        try:
            find_compiler()
        except CGPredictError:
            pass  # said where the compiler is first needed, as before
        start_imports()
    deps = None
    if store is not None:  # every file the preprocessor opens is part of the keys
        deps = dependencies(store, Path(source), text,
                            {k: str(v) for k, v in opts.work_sizes.items()})
    work, tsizes, auto = resolve_sizes(
        text, opts.work_sizes, opts.trace_sizes, Path(source).resolve().parent, store,
        declared=marked.trace_sizes, deps=deps, source_name=str(source),
    )
    check_counters(source, text, {**tsizes, **work})
    device = load_device(opts.device)
    if opts.block is not None:  # an impossible block is refused before anything is traced
        check_block_size(opts.block, device.max_threads_per_block, device.name)
    problem = tile_problem(text, marked, device.shared_mem_per_block_max_bytes, device.name)
    if problem:
        raise RegionError(f"{source}: {problem}")
    wanted = 2 * device.max_threads_per_sm  # SPEC §2.1
    key = None
    if store is not None:
        key = prepared_key(
            Path(source), text, opts, tsizes, work != tsizes, (work, wanted) if auto else None,
            deps,
        )
    return TracePlan(text, work, tsizes, auto, wanted, key)


_numba_checked = False


def _say_if_numba_compiles(progress) -> None:
    """On the progress line (a terminal), once per process: numba has no compiled kernels
    of cgpredict for this numba and this source, so this run compiles them (numba_warm)."""
    global _numba_checked
    if progress is None or _numba_checked:
        return
    _numba_checked = True
    warmup.join()
    if numba_cache.cold():
        progress(f"compiling numba's kernels for this machine, once (about 15 s; cached in "
                 f"{numba_cache.cache_dir()})")


def prepare(
    source: Path,
    opts: RunOptions,
    progress=None,
    plan: TracePlan | None = None,
    probes_of: Prepared | None = None,
) -> Prepared:
    """Trace ``source`` at the trace size and fit its trip counts for the work size; from
    the on-disk cache (``diskcache``, ``trace_store``) when the same program was traced
    before. ``probes_of``: the same source prepared in another port at the same sizes (the
    advisor's plain port, for its restrict port): its probe runs stand in for this one's
    when the two traces have the same loops, trip counts and launches (``same_loops``: a
    port changes what the compiler keeps in registers, not how often a loop runs), and the
    probes' compiles are saved."""
    t0 = time.perf_counter()
    plan = plan or plan_trace(source, opts)
    work, tsizes, auto, wanted, key = (
        plan.work, dict(plan.trace_sizes), plan.auto, plan.wanted, plan.key
    )
    store = default_cache()
    # the analysis imported and numba set up beside the compiler's work (or the cache read);
    # started after the keys: computing them imports importlib.metadata, as numba does
    # (with the cache off, plan_trace started it before the macro probe: a no-op here)
    start_imports()
    cached = _cached(store, key, work, t0, progress)
    if cached is not None:
        _say_if_numba_compiles(progress)
        return cached
    tmpdir = make_tempdir("cgp-run-", store.tmp_dir() if store else None)
    tmp = tmpdir.name
    try:
        run = functools.partial(_trace, Path(source), opts, Path(tmp))
        early = None
        if not auto and work != tsizes and tsizes and probes_of is None:
            # the sizes are declared: the count-only probes need nothing from the trace and
            # run beside it (child processes, mostly), so they are done when the analysis
            # needs the trip counts
            early = _Probes(run, tsizes)
        step(progress, "tracing")
        try:
            trace = run(tsizes, "trace.cgptrace")
        except BaseException:
            if early is not None:
                early.cancel_probes()
            raise
        while auto and min_threads(trace) < wanted and tsizes != work:
            tsizes = {n: min(v * 2, work[n]) for n, v in tsizes.items()}
            step(progress, f"tracing at {tsizes}")
            trace = run(tsizes, "trace.cgptrace")
        trace, first = _with_full_warp(trace, source, opts, Path(tmp), tsizes, progress)  # (RL)
        t1 = time.perf_counter()
        secs = {"trace": t1 - t0, "probes": 0.0}
        probe_runs = None
        if work != tsizes and tsizes:
            borrowed = _borrowed_probes(probes_of, trace, tsizes)
            if borrowed is not None:
                probes, probe_runs = None, borrowed
            else:
                step(progress, "probing loop bounds (beside the analysis)")
                probes = early or _Probes(run, tsizes)
                probe_runs = probes.result
            near = functools.partial(
                _probe_runs, run, tsizes, sizes_of=near_probe_sizes, prefix="near"
            )
            sizes_model = PendingSizes(
                lambda: _fit_probes(
                    trace, first, probe_runs, probes, store, key, secs, t1, near
                )
            )
        else:
            sizes_model = SizeModel.constant(trace)
            if store is not None and key is not None:
                store_prepared(store, key, tsizes, [first])  # linked in
    except BaseException:
        tmpdir.cleanup()
        raise
    _say_if_numba_compiles(progress)  # after the trace: asking imports the analysis
    return Prepared(
        trace, sizes_model, tsizes, work, secs, tmpdir, key=key, probe_runs=probe_runs
    )


def _cached(store, key: str | None, work: dict[str, int], t0: float, progress):
    """The Prepared of the on-disk cache's entry ``key``, or None (no cache, no entry, or a
    planted or damaged trace: removed, traced again)."""
    if store is None or key is None:
        return None
    entry = store.get("prepared", key)
    if entry is None:
        return None
    step(progress, "trace from the cache")
    try:
        return _from_entry(entry, work, t0, key)
    except TraceFormatError:
        store.remove(entry)
        return None


def _trace(source: Path, opts: RunOptions, tmp: Path, sizes: dict[str, int], name: str,
           count_only: bool = False) -> Trace:
    """Trace ``source`` at ``sizes`` into ``tmp / name`` (count-only: a probe run)."""
    o = TraceOptions(
        {k: str(v) for k, v in sizes.items()},
        opts.functions,
        opts.timeout_s,
        opts.max_events,
        opts.max_launches,
        count_only=count_only,
        port=opts.port,
        size_flag="--trace-size",
        limit_flag=None,
        typed=typed_sizes(opts),
    )
    return trace_program(source, tmp / name, o)


def _with_full_warp(trace: Trace, source: Path, opts: RunOptions, tmp: Path,
                    tsizes: dict[str, int], progress) -> tuple[Trace, tuple[dict, Path]]:
    """``trace`` and (``tsizes``, its file); or, where a host loop's first recorded launches
    are all narrower than a warp and a later one is not, the program traced again recording
    more launches a region, so that eq. (RL) has a launch whose pseudo-warps show the lanes'
    pattern (kernel/standing.py: wavefront's first anti-diagonals are 1 and 2 threads)."""
    from .kernel.standing import launches_to_record

    more = launches_to_record(trace, opts.max_launches, opts.max_events)
    if not more:
        return trace, (tsizes, tmp / "trace.cgptrace")
    step(progress, f"tracing again, {more} launches a kernel recorded (a full warp)")
    wider = dataclasses.replace(opts, max_launches=more)
    return (_trace(source, wider, tmp, tsizes, "trace-wide.cgptrace"),
            (tsizes, tmp / "trace-wide.cgptrace"))


def _borrowed_probes(other: Prepared | None, trace: Trace, tsizes: dict[str, int]):
    """``other``'s probe runs when they can stand in for ``trace``'s (see prepare)."""
    if other is None or other.probe_runs is None or other.trace_sizes != tsizes:
        return None
    return other.probe_runs if same_loops(trace, other.trace) else None


def same_loops(a: Trace, b: Trace) -> bool:
    """True when two traces of one program have the same loops (region, source line and
    order on the line), each with the same mean trip count, and the same launches of every
    region: the trip counts at other sizes are then the same functions of the sizes."""
    if launch_counts(a) != launch_counts(b):
        return False
    ka, kb = loop_keys(a), loop_keys(b)
    if sorted(ka.values()) != sorted(kb.values()):
        return False
    ta, tb = mean_trips(a), mean_trips(b)
    by_key = {kb[i]: tb[i] for i in kb}
    return all(by_key[ka[i]] == ta[i] for i in ka)


class _Probes:
    """The count-only probe runs in a background thread; ``cancel_probes`` stops them
    before the next run starts (the traced program failed: its probes would too)."""

    def __init__(self, run, tsizes: dict[str, int]) -> None:
        self.cancelled = threading.Event()
        self.done_at = 0.0  # perf_counter when the last probe run ended
        pool = ThreadPoolExecutor(1, thread_name_prefix="cgp-probes")
        self.future = pool.submit(self._run, run, tsizes)
        pool.shutdown(wait=False)

    def _run(self, run, tsizes):
        out = _probe_runs(run, tsizes, self.cancelled)
        self.done_at = time.perf_counter()
        return out

    def cancel_probes(self) -> None:
        self.cancelled.set()

    def result(self):
        return self.future.result()


def _probe_runs(
    run, tsizes, cancelled=None, sizes_of=probe_sizes, prefix: str = "probe"
) -> list[tuple[dict, Path, Trace]]:
    """(sizes, file, trace) of the count-only probe runs at sizes around the trace size
    (``sizes_of``: probe_sizes, or near_probe_sizes for the fallback), used to fit the trip
    counts (scaling.SizeModel)."""
    out = []
    for k in range(PROBES):
        if cancelled is not None and cancelled.is_set():
            raise PredictionError("the probe runs were cancelled: the traced program failed")
        probe = {**tsizes, **sizes_of(tsizes, k)}
        try:
            trace = run(probe, f"{prefix}{k}.cgptrace", True)
        except CGPredictError as exc:
            sizes_text = " ".join(f"{n}={v}" for n, v in sorted(probe.items()))
            raise PredictionError(
                f"a count-only probe run at {sizes_text} (used to scale the trace to "
                f"the work size) failed: {str(exc).splitlines()[0]}; if the program "
                f"needs particular sizes, trace at the work size (--trace-size equal "
                f"to -D)"
            ) from None
        out.append((probe, trace.path, trace))
    return out


def _fit_probes(trace, first, probe_runs, probes: _Probes | None, store, key, secs, t1,
                near=None):
    """The trip counts fitted on the trace and its probes (``probe_runs()``: this trace's
    own, ``probes``, or another port's), and the whole (trace and probes) stored in the
    cache. A loop the probes do not confirm (folded away at their small sizes, or off
    pattern there) is fitted again on probes near the trace size (``near()``)."""
    runs = probe_runs()
    model = SizeModel.from_runs([(first[0], trace)] + [(sz, tr) for sz, _, tr in runs])
    if model.inexact() and near is not None:
        runs = list(runs) + near()
        model = SizeModel.from_runs([(first[0], trace)] + [(sz, tr) for sz, _, tr in runs])
    if store is not None and key is not None:
        store_prepared(store, key, first[0], [first] + [(sz, path) for sz, path, _ in runs])
    if probes is not None:  # how long the probes outlasted the trace
        secs["probes"] = max(probes.done_at - t1, 0.0)
    return model


class PendingSizes:
    """A SizeModel whose probe runs are still going (compile, link and run, mostly in child
    processes, beside the analysis, which needs the trip counts only after it has formed the
    pseudo-warps). The first attribute read waits for the probes and fits the model, once,
    in the reading thread; a failed probe raises its error there."""

    def __init__(self, fit) -> None:
        self._fit = fit
        self._lock = threading.Lock()
        self._model: SizeModel | None = None
        self._error: BaseException | None = None

    def _get(self) -> SizeModel:
        with self._lock:  # the kernels of a file are analysed on several threads
            if self._model is None and self._error is None:
                try:
                    self._model = self._fit()
                except Exception as exc:  # noqa: BLE001 - raised to every reader
                    self._error = exc
        if self._error is not None:
            raise self._error
        return self._model

    def wait(self) -> None:
        """Let the probes finish (their files live in the Prepared's directory)."""
        try:
            self._get()
        except Exception:  # reported where the sizes are used
            pass

    def __getattr__(self, name: str):
        return getattr(self._get(), name)


def _from_entry(entry, work: dict[str, int], t0: float, key: str) -> Prepared:
    """A Prepared from a cache entry: its traces read back, the trip counts refitted (a
    fraction of a second; the probe runs are what cost)."""
    stored = load_prepared(entry)
    runs = [(sizes, read_trace(path)) for sizes, path in stored.runs]
    trace = runs[0][1]
    model = SizeModel.from_runs(runs) if len(runs) > 1 else SizeModel.constant(trace)
    secs = {"trace": time.perf_counter() - t0, "probes": 0.0}
    probes = [(sizes, path, tr) for (sizes, path), (_, tr) in zip(stored.runs[1:], runs[1:])]
    prep = Prepared(
        trace, model, stored.trace_sizes, work, secs, tempfile.TemporaryDirectory(),
        cached=True, key=key, probe_runs=(lambda: probes) if probes else None,
    )
    prep.load_dependences()
    return prep


def step(progress, what: str) -> None:
    """Say ``what`` is being done on the progress line, when there is one."""
    if progress is not None:
        progress(what)
