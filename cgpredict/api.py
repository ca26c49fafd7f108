"""The library a notebook calls: ``predict``, ``advise``, ``compare`` and ``report_page``.

Each takes a C source file and plain Python values (sizes as a dict, the block as ``"32x8"``
or a ``Block``) and returns the typed report the CLI prints (``.to_dict()``, ``.to_json()``)::

    import cgpredict
    rep = cgpredict.predict("polybench_c/gemm.c", device="h100", sizes={"NI": 512})
    rep.kernels[0].time_ms, rep.kernels[0].result.binding

The CLI commands ``run``, ``advise``, ``compare`` and ``report`` call these functions.
Errors are ``cgpredict.errors.CGPredictError`` subclasses with a one-line message.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .block import Block
from .prediction import Report, RunOptions

if TYPE_CHECKING:  # imported where used: `import cgpredict.api` loads no advisor, no FPGA
    from .advisor.advice import Advice
    from .gpu_vs_fpga import Comparison

__all__ = ["ReportPage", "advise", "compare", "options", "predict", "report_page"]

Progress = Callable[[str], None] | None


def _block(block: str | Block | None) -> Block | None:
    """A Block from ``"32x8"``; a bad shape is a one-line PredictionError."""
    from .block import MappingError
    from .prediction import PredictionError

    try:
        return Block.parse(block) if isinstance(block, str) else block
    except MappingError as exc:
        raise PredictionError(str(exc)) from None


def options(
    block: str | Block | None = None,
    device: str = "tk1",
    sizes: Mapping[str, int] | None = None,
    port: str = "plain",
    *,
    trace_sizes: Mapping[str, int] | None = None,
    model: str = "cgpredict",
    grid: int | None = None,
    functions: tuple[str, ...] = (),
    timeout_s: float = 120.0,
    **more,
) -> RunOptions:
    """The RunOptions of a prediction from plain values (``more``: any other RunOptions
    field, such as ``registers_per_thread`` or ``batch_mode``)."""
    return RunOptions(
        block=_block(block),
        grid=grid,
        device=str(device),
        model=model,
        work_sizes=dict(sizes or {}),
        trace_sizes=dict(trace_sizes or {}),
        functions=tuple(functions),
        timeout_s=timeout_s,
        port=port,
        **more,
    )


def predict(
    source: str | os.PathLike[str],
    block: str | Block | None = None,
    device: str = "tk1",
    sizes: Mapping[str, int] | None = None,
    port: str = "plain",
    *,
    progress: Progress = None,
    **kw,
) -> Report:
    """Trace ``source`` and predict its marked kernels on the GPU ``device`` (``cgpredict
    run``). ``sizes``: the work size (-D); keywords as ``options``."""
    from .pipeline import predict_source

    return predict_source(Path(source), options(block, device, sizes, port, **kw), progress)


def advise(
    source: str | os.PathLike[str],
    block: str | Block | None = None,
    device: str = "tk1",
    sizes: Mapping[str, int] | None = None,
    port: str = "plain",
    *,
    tiled: str | os.PathLike[str] | None = None,
    progress: Progress = None,
    **kw,
):
    """Candidate fixes ranked by predicted speedup (``cgpredict advise``): an
    ``advisor.Advice``."""
    from .advisor import advise as run_advise

    opts = options(block, device, sizes, port, **kw)
    return run_advise(Path(source), opts, Path(tiled) if tiled else None, progress)


def compare(
    source: str | os.PathLike[str],
    block: str | Block | None = None,
    device: str = "tk1",
    sizes: Mapping[str, int] | None = None,
    *,
    fpga: str = "zc702",
    trace_sizes: Mapping[str, int] | None = None,
    functions: tuple[str, ...] = (),
    timeout_s: float = 120.0,
):
    """GPU vs FPGA per kernel with a recommendation (``cgpredict compare``): a
    ``compare.Comparison``."""
    from .gpu_vs_fpga import compare_source

    return compare_source(
        Path(source),
        str(device),
        fpga,
        _block(block),
        dict(sizes or {}),
        dict(trace_sizes or {}),
        tuple(functions),
        timeout_s,
    )


@dataclass(frozen=True)
class ReportPage:
    """Everything ``cgpredict report`` shows, from one trace: the prediction, its source text,
    the advice and the GPU vs FPGA comparison (None when skipped or impossible), the device
    file and the options."""

    report: Report
    source_path: str
    source_text: str
    device_file: str
    options: RunOptions
    advice: Advice | None = None
    comparison: Comparison | None = None
    fpga_device: str = "zc702"
    notes: tuple[str, ...] = ()  # parts left out, and why


def report_page(
    source: str | os.PathLike[str],
    block: str | Block | None = None,
    device: str = "tk1",
    sizes: Mapping[str, int] | None = None,
    port: str = "plain",
    *,
    advice: str = "quick",
    fpga: str | None = "zc702",
    progress: Progress = None,
    **kw,
) -> ReportPage:
    """Trace ``source`` once and gather the page of ``cgpredict report``: the prediction,
    then the advisor and the FPGA estimate re-using the same trace (only the advisor's
    register fix traces the restrict port again). ``advice``: "full" (as ``advise``), "quick"
    (no block-shape sweep, no restrict-port trace) or "none"; ``fpga=None`` skips the FPGA."""
    from .advisor import advise_prepared
    from .devices import device_path, load_device
    from .errors import CGPredictError
    from .frontend.regions import read_source
    from .prepared import prepare

    path = Path(source)
    opts = options(block, device, sizes, port, **kw)
    text = read_source(path)
    dev = load_device(opts.device)
    notes: list[str] = []
    adv = comp = None
    with prepare(path, opts, progress) as prep:
        if progress is not None:
            progress("analysing")
        rep = prep.analyze(opts, dev)
        if fpga:
            from .gpu_vs_fpga import compare_prepared

            if progress is not None:
                progress("FPGA estimate")
            try:
                comp = compare_prepared(prep, rep, dev, fpga)
            except CGPredictError as exc:
                notes.append(f"no GPU vs FPGA comparison: {str(exc).splitlines()[0]}")
        else:
            notes.append("GPU vs FPGA comparison skipped (--no-fpga)")
        if advice not in ("full", "quick", "none"):
            raise ValueError(f"advice={advice!r}: want 'full', 'quick' or 'none'")
        if advice != "none":
            if progress is not None:
                progress("advising")
            try:
                adv = advise_prepared(prep, path, opts, None, progress, rep, advice == "quick")
            except CGPredictError as exc:
                notes.append(f"no advice: {str(exc).splitlines()[0]}")
        else:
            notes.append("advice skipped (--advice none)")
    name = str(opts.device)
    dfile = name if name.endswith(".toml") or os.sep in name else str(device_path(name))
    return ReportPage(
        rep, str(path), text, dfile, opts, adv, comp, fpga or "", tuple(notes)
    )

