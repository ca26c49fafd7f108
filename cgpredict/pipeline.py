"""The whole prediction: trace -> warps -> memory + computation analysis -> model -> report.

``predict_source`` is what ``cgpredict run`` calls. Its stages are modules of their own:
``trace_sizes`` (the work and trace sizes), ``prepared`` (``prepare``: a program traced once
for any number of analyses, the advisor's sweeps; its trip counts fitted on probe runs),
``trace_analysis`` (``analyze_trace``: every kernel of a trace analysed and modelled, also
what ``cgpredict run --from-trace`` calls, so the model can be re-run without a compiler) and
``kernel.analysis`` (one kernel).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from .devices import load_device
from .diskcache import default_cache
from .prediction import Report, RunOptions
from .prepared import plan_trace, prepare, step
from .trace_store import load_report, report_key, store_report

__all__ = ["predict_source"]


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
            step(progress, "report from the cache")
            secs = {"trace": time.perf_counter() - t0, "probes": 0.0, "analysis": 0.0}
            return dataclasses.replace(rep, seconds={**secs, "total": sum(secs.values())})
    with prepare(source, opts, progress, plan) as prep:
        step(progress, "analysing")
        rep = prep.analyze(opts)
    if store is not None and rkey is not None:
        store_report(store, rkey, rep)
    return rep
