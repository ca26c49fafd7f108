"""The sizes of a prediction: the work size asked for and the (smaller) size traced.

``resolve_sizes`` takes the file's defaults (its ``#define``s as the compiler evaluates them,
with the -D options) and its ``#pragma cgp trace`` sizes, overridden by the options; without a
declared or given trace size the trace size is chosen automatically, grown from
``AUTO_TRACE_START`` until the smallest launch has enough pseudo-threads (``min_threads``,
SPEC §2.1). The checks here turn a size that cannot work into one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import warmup
from .diskcache import DiskCache
from .errors import RegionError
from .frontend.macros import evaluate_macros
from .frontend.regions import counter_problem, mark_regions
from .frontend.tracefile import Trace
from .prediction import PredictionError, RunOptions
from .scaling import overridable_sizes
from .trace_store import cached_macros

__all__ = ["AUTO_TRACE_START", "check_counters", "min_threads", "resolve_sizes", "typed_sizes"]

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


def typed_sizes(opts: RunOptions) -> dict[str, str]:
    """Each size the user gave, as they typed it (-D, or --trace-size when both)."""
    out = {n: f"-D {n}={v}" for n, v in opts.work_sizes.items()}
    out.update({n: f"--trace-size {n}={v}" for n, v in opts.trace_sizes.items()})
    return out


def check_counters(source: Path, text: str, sizes: dict[str, int]) -> None:
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
    """Pseudo-threads of the smallest kernel launch in a trace: each region's first recorded
    launch's, counted as eq. (RL) counts them (kernel.standing.launch_threads: the depth-2
    loop's iterations for a kernel that can be a 2-D grid, else the depth-1 loop's)."""
    warmup.join()  # numba and the pseudo-warps are imported on the warm-up thread
    from .kernel.standing import launch_threads

    out = []
    for r in trace.header.regions:
        rows, threads = launch_threads(trace, r.index)
        rec = trace.launches["recorded"][rows] == 1
        if rec.any():
            out.append(int(threads[rec][0]))
    return min(out, default=0)
