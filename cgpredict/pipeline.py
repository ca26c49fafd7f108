"""The whole prediction: trace -> warps -> memory + computation analysis -> model -> report.

``predict_source`` is what ``cgpredict run`` calls; ``prepare`` traces once for repeated
analyses (the advisor's sweeps); ``analyze_trace`` predicts from a saved trace
(``cgpredict run --from-trace``), so the model can be re-run without a compiler.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import warmup
from .devices import GPUDevice, load_device
from .diskcache import DiskCache, default_cache
from .errors import CGPredictError, RegionError, TraceFormatError
from .kernel_analysis import analyze_region
from .macros import evaluate_macros
from .memory import PATTERN_NAMES
from .models import program_sync_ms
from .prediction import (
    DEFAULT_BLOCKS,
    SCHEMA_VERSION,
    KernelReport,
    MemInstrReport,
    PredictionError,
    Report,
    RunOptions,
)
from .regions import counter_problem, mark_regions, read_source, tile_problem
from .scaling import (
    PROBES,
    SizeModel,
    launch_counts,
    loop_keys,
    mean_trips,
    near_probe_sizes,
    overridable_sizes,
    probe_sizes,
)
from .shared import array_name
from .tempdirs import make_tempdir
from .trace_store import (
    cached_macros,
    dependencies,
    load_dependences,
    load_prepared,
    load_report,
    prepared_key,
    report_key,
    store_dependences,
    store_prepared,
    store_report,
)
from .tracefile import Trace, read_trace
from .tracer import TraceOptions, marked_source, trace_program
from .warps import mapped_loops, perfectly_nested

AUTO_TRACE_START = 32


def resolve_sizes(
    source_text: str,
    work: dict[str, int],
    trace: dict[str, int],
    include_dir: Path | None = None,
    store: DiskCache | None = None,
    declared: dict[str, int] | None = None,
    deps: dict[str, str] | None = None,
    source_name: str | None = None,
):
    """(work sizes, trace sizes, automatic?): the file's defaults (its #defines as the compiler
    evaluates them, with the -D options) and declared trace size, overridden by the options.
    Without a declared or given trace size, the trace size is chosen automatically
    (``prepare`` grows it from AUTO_TRACE_START). ``declared``: the file's ``#pragma cgp
    trace`` sizes when the caller has already marked it."""
    if declared is None:
        declared = mark_regions(source_text).trace_sizes
    _check_size_names(source_text, work, trace)
    names = set(declared) | set(work) | set(trace) | set(overridable_sizes(source_text))
    unknown = sorted(names - set(work))
    guessed = set(overridable_sizes(source_text)) - set(declared) - set(trace)
    defaults = (
        cached_macros(
            store,
            source_text,
            include_dir,
            unknown,
            work,
            guessed,
            lambda: evaluate_macros(
                source_text, unknown, work, include_dir, guessed, display_name=source_name
            ),
            deps,
        )
        if unknown
        else {}
    )
    work_sizes = {**defaults, **work}
    trace_sizes = {**{n: v for n, v in work_sizes.items()}, **declared, **trace}
    # never trace more than the work: a declared trace size above a small -D is clamped
    trace_sizes = {n: min(v, work_sizes.get(n, v)) for n, v in trace_sizes.items()}
    auto = not declared and not trace and bool(work_sizes)
    if auto:
        trace_sizes = {n: min(v, AUTO_TRACE_START) for n, v in work_sizes.items()}
    for n, v in trace_sizes.items():
        if v < 2 <= work_sizes.get(n, v):
            raise PredictionError(
                f"trace size {n}={v}: trace at least 2 (the compiler folds a loop of one "
                f"iteration away, and the loops mapped to threads with it)"
            )
    return work_sizes, trace_sizes, auto


def _typed_sizes(opts: RunOptions) -> dict[str, str]:
    """Each size the user gave, as they typed it (-D, or --trace-size when both)."""
    out = {n: f"-D {n}={v}" for n, v in opts.work_sizes.items()}
    out.update({n: f"--trace-size {n}={v}" for n, v in opts.trace_sizes.items()})
    return out


def _check_counters(source: Path, text: str, sizes: dict[str, int]) -> None:
    """A loop counter whose C type cannot count to its size is refused in one line."""
    problem = counter_problem(text, sizes)
    if problem:
        line, _, what = problem.partition(": ")
        raise RegionError(f"{source}:{line.removeprefix('line ')}: {what}")


def _check_size_names(source_text: str, work: dict[str, int], trace: dict[str, int]) -> None:
    """A -D or --trace-size name the source never mentions is a typo, not a size."""
    for flag, given in (("-D", work), ("--trace-size", trace)):
        for n in given:
            if not re.search(rf"\b{re.escape(n)}\b", source_text):
                known = " ".join(sorted(overridable_sizes(source_text))) or "none"
                raise PredictionError(
                    f"{flag} {n}: the source never mentions {n} (its size macros: {known})"
                )


def min_threads(trace: Trace) -> int:
    """Pseudo-threads of the smallest kernel launch in a trace: the iterations of the depth-2
    loop for a kernel that can be a 2-D grid (grid hint, or perfectly nested), else of the
    depth-1 loop."""
    is_store = np.array([m.kind == "store" for m in trace.header.mem] or [False])
    out = []
    for r in trace.header.regions:
        rows = np.flatnonzero(
            (trace.launches["region"] == r.index) & (trace.launches["recorded"] == 1)
        )
        d1, d2 = mapped_loops(trace, r.index)
        if not len(rows) or not d1:
            continue
        two_d = r.grid == 2 or (
            r.grid == 0 and perfectly_nested(trace, r.index, int(rows[0]), is_store)
        )
        out.append(int(trace.loop_iters[rows[0], d2 if two_d and d2 else d1].sum()))
    return min(out, default=0)


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
    warps: dict = dataclasses.field(default_factory=dict)  # pseudo-warps per block, reused
    cached: bool = False  # read from the on-disk cache, not traced now
    key: str | None = None  # its key in the on-disk cache (None: the cache is off)
    _stored: set = dataclasses.field(default_factory=set)  # dependences already on disk
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
        self.warps.update(got)
        self._stored |= set(got)

    def store_dependences(self) -> None:
        """Store the dependences this Prepared found (after an analysis) for later runs."""
        store = default_cache()
        if store is not None and self.key is not None:
            store_dependences(store, self.key, self.warps, self._stored)
            self._stored |= {k for k in self.warps if isinstance(k, tuple) and k[0] == "dependence"}

    def close(self) -> None:
        if isinstance(self.sizes, PendingSizes):
            self.sizes.wait()
        self._tmp.cleanup()

    def __enter__(self) -> Prepared:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def analyze(self, opts: RunOptions, device: GPUDevice | None = None) -> Report:
        t0 = time.perf_counter()
        dev = device or load_device(opts.device)
        rep = analyze_trace(
            self.trace, dev, opts, self.sizes, self.trace_sizes, self.work_sizes, self.warps
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
    deps = None
    if store is not None:  # every file the preprocessor opens is part of the keys
        deps = dependencies(store, Path(source), text,
                            {k: str(v) for k, v in opts.work_sizes.items()})
    work, tsizes, auto = resolve_sizes(
        text, opts.work_sizes, opts.trace_sizes, Path(source).resolve().parent, store,
        declared=marked.trace_sizes, deps=deps, source_name=str(source),
    )
    _check_counters(source, text, {**tsizes, **work})
    device = load_device(opts.device)
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
    from . import numba_warm

    if numba_warm.cold():
        progress(f"compiling numba's kernels for this machine, once (about 15 s; cached in "
                 f"{numba_warm.cache_dir()})")


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
    warmup.start()  # numba's start-up beside the compiler's work (or reading the cache)
    _say_if_numba_compiles(progress)
    plan = plan or plan_trace(source, opts)
    work, tsizes, auto, wanted, key = (
        plan.work, dict(plan.trace_sizes), plan.auto, plan.wanted, plan.key
    )
    store = default_cache()
    if store is not None and key is not None:
        entry = store.get("prepared", key)
        if entry is not None:
            _step(progress, "trace from the cache")
            try:
                return _from_entry(entry, work, t0, key)
            except TraceFormatError:  # a planted or damaged trace: traced again
                store.remove(entry)
    tmpdir = make_tempdir("cgp-run-", store.tmp_dir() if store else None)
    tmp = tmpdir.name
    try:

        def run(sizes, name, count_only=False):
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
                typed=_typed_sizes(opts),
            )
            return trace_program(Path(source), Path(tmp) / name, o)

        early = None
        if not auto and work != tsizes and tsizes and probes_of is None:
            # the sizes are declared: the count-only probes need nothing from the trace and
            # run beside it (child processes, mostly), so they are done when the analysis
            # needs the trip counts
            early = _Probes(run, tsizes)
        _step(progress, "tracing")
        try:
            trace = run(tsizes, "trace.cgptrace")
        except BaseException:
            if early is not None:
                early.cancel_probes()
            raise
        while auto and min_threads(trace) < wanted and tsizes != work:
            tsizes = {n: min(v * 2, work[n]) for n, v in tsizes.items()}
            _step(progress, f"tracing at {tsizes}")
            trace = run(tsizes, "trace.cgptrace")
        t1 = time.perf_counter()
        first = (tsizes, Path(tmp) / "trace.cgptrace")
        secs = {"trace": t1 - t0, "probes": 0.0}
        probe_runs = None
        if work != tsizes and tsizes:
            borrowed = _borrowed_probes(probes_of, trace, tsizes)
            if borrowed is not None:
                probes, probe_runs = None, borrowed
            else:
                _step(progress, "probing loop bounds (beside the analysis)")
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
    return Prepared(
        trace, sizes_model, tsizes, work, secs, tmpdir, key=key, probe_runs=probe_runs
    )


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
        import threading
        from concurrent.futures import ThreadPoolExecutor

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
        import threading

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


def predict_source(source: Path, opts: RunOptions, progress=None) -> Report:
    """Trace ``source`` at the trace size and predict it at the work size. The report is
    kept in the on-disk cache too, keyed by the trace's key, every option and the device
    file's content: asking the same again reads it back (its ``seconds`` say so: all of the
    time is ``trace``, none ``analysis``)."""
    t0 = time.perf_counter()
    plan = plan_trace(source, opts)
    store = default_cache()
    rkey = report_key(plan.key, opts, load_device(opts.device)) if plan.key else None
    if store is not None and rkey is not None:
        rep = load_report(store, rkey)
        if rep is not None:
            _step(progress, "report from the cache")
            secs = {"trace": time.perf_counter() - t0, "probes": 0.0, "analysis": 0.0}
            return dataclasses.replace(rep, seconds={**secs, "total": sum(secs.values())})
    with prepare(source, opts, progress, plan) as prep:
        _step(progress, "analysing")
        rep = prep.analyze(opts)
    if store is not None and rkey is not None:
        store_report(store, rkey, rep)
    return rep


def _step(progress, what: str) -> None:
    if progress is not None:
        progress(what)


def usable_cores() -> int:
    """Cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


_worker = threading.local()


def analysis_worker() -> None:
    """Mark the calling thread as one of a pool of analyses (the advisor's fixes, a block
    sweep): it analyses a file's kernels in turn, the pool already keeping every core busy."""
    _worker.serial = True


def _map_regions(analyze, regions) -> list:
    """``analyze`` of every region, in order, on a thread per core: the analysis spends its
    time in numba kernels and numpy calls that release the GIL, and the kernels of one
    program share nothing but the read-only trace. In an ``analysis_worker`` thread, in
    turn: threads within threads would only contend for the cores and their caches."""
    regions = list(regions)
    workers = 1 if getattr(_worker, "serial", False) else min(len(regions), usable_cores())
    if workers <= 1:
        return [analyze(r) for r in regions]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers, thread_name_prefix="cgp-kernel") as pool:
        futures = [pool.submit(analyze, r) for r in regions]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:  # a kernel failed: the result is an error, its
                f.cancel()  # siblings not yet started need not run
            raise


def _kernel(trace, region, device, opts, sizes, tsz, wsz, warps_cache):
    """``analyze_region``, once per set of options that matter to the region: a
    transposition of an array it never touches, or a tile staged in another kernel, leaves
    its analysis as it was (the advisor re-analyses a program of several kernels with
    each fix), so the memo (``warps_cache``) answers."""
    if warps_cache is None:
        return analyze_region(trace, region.index, device, opts, sizes, tsz, wsz, None)
    h = trace.header
    mine = {array_name(m.base) for m in h.mem if m.region in (region.index, -1)}
    own = dataclasses.replace(
        opts,
        transpose=tuple(a for a in opts.transpose if a in mine),
        soa=tuple(a for a in opts.soa if a in mine),
        tile_exchange=tuple(a for a in opts.tile_exchange if a in mine),
        row_exchange=tuple(a for a in opts.row_exchange if a in mine),
        stage=tuple(s for s in opts.stage if len(s) != 4 or s[0] == region.name),
    )
    key = ("kernel", region.index, device, repr(own))
    if key not in warps_cache:
        warps_cache[key] = analyze_region(
            trace, region.index, device, own, sizes, tsz, wsz, warps_cache
        )
    return warps_cache[key]


def analyze_trace(
    trace: Trace,
    device: GPUDevice,
    opts: RunOptions,
    sizes: SizeModel | None = None,
    trace_sizes: dict[str, int] | None = None,
    work_sizes: dict[str, int] | None = None,
    warps_cache: dict | None = None,
) -> Report:
    """Predict every region of a trace (work size = trace size unless a SizeModel says)."""
    sizes = sizes or SizeModel.constant(trace)
    tsz = trace_sizes or {}
    wsz = work_sizes or tsz
    # kernels first: they need the trip counts (which may still be being fitted, see
    # PendingSizes) only after forming their pseudo-warps
    kernels = _map_regions(
        lambda r: _kernel(trace, r, device, opts, sizes, tsz, wsz, warps_cache),
        trace.header.regions,
    )
    warnings = []
    if sizes.inexact():
        lines = sorted({lp.line for lp in trace.header.loops if lp.id in sizes.inexact()})
        warnings.append(
            f"loops at lines {lines} have trip counts that the probe runs do not confirm "
            f"(not affine in one size macro or a ratio of two, or folded away at the probe "
            f"sizes); their work-size counts are approximate: trace at the work size "
            f"(--trace-size equal to -D) for exact ones"
        )
    if opts.port != trace.header.port:
        warnings.append(
            f"the {opts.port} port was asked for, but the trace is of the "
            f"{trace.header.port} port (its arrays could not be reached through pointers); "
            f"predicted as the {trace.header.port} port"
        )
    if sizes.folded:
        lines = sorted({line for _, line, _ in sizes.folded})
        warnings.append(
            f"loops at lines {lines} run at other sizes but were folded away by "
            f"the compiler at the trace size (a single iteration): counts inside "
            f"them are underestimated; trace a size where every loop iterates "
            f"at least twice"
        )
    launched = sum(k.launches for k in kernels)
    return Report(
        source=trace.header.source_name,
        device=device.name,
        model=opts.model,
        work_sizes=wsz,
        trace_sizes=tsz,
        kernels=tuple(kernels),
        warnings=tuple(warnings),
        seconds={},
        port=trace.header.port,
        sync=opts.sync,
        sync_ms=program_sync_ms(device, opts.sync, launched),
    )


__all__ = [
    "DEFAULT_BLOCKS",
    "PATTERN_NAMES",
    "SCHEMA_VERSION",
    "KernelReport",
    "MemInstrReport",
    "PredictionError",
    "Prepared",
    "Report",
    "RunOptions",
    "analyze_trace",
    "predict_source",
    "prepare",
]
