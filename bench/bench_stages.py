"""Where a cold `cgpredict run FILE --no-cache --json` spends its wall time, per stage.

Each run is a fresh process (``--inner``) that times the command line's own path with
wrappers around its stages: the imports before the trace starts; the main trace's compile
(clang), instrumentation (llvmlite), link, traced program run and trace file write (the
trace header's own laps) and its read back (load, with any wait for the warm-up thread); the
count-only probe runs (on a thread beside the analysis: how long the analysis waited for
them); numba (the analysis imported and its CPU target set up on the warm-up thread beside
clang, and the compiled kernels read from its on-disk cache); the analysis; the report's
text. "rest" is the process's wall time less these (interpreter start and exit, option
parsing, sizes).
Per file, the stages of the run with the least wall time of --repeat. Prints a Markdown
table; asserts nothing (the figures depend on the machine and its load).

    python bench/bench_stages.py                     # every polybench_c/*.c, 3 runs each
    python bench/bench_stages.py gemm 2dconv --repeat 1
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "polybench_c"
STAGES = ("import", "compile", "instrument", "link", "run", "write", "load", "probe wait",
          "numba setup", "numba load", "analysis", "report", "rest")


class _Clock:
    """Seconds per stage, added up by the wrappers (thread-safe)."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {k: 0.0 for k in STAGES}
        self.lock = threading.Lock()

    def add(self, name: str, dt: float) -> None:
        with self.lock:
            self.s[name] += dt


def _timed(clock: _Clock, name: str, fn, main_only: bool = False):
    """``fn`` with its wall time added to ``name`` (on the main thread only, if asked)."""
    def wrapper(*a, **k):
        if main_only and threading.current_thread() is not threading.main_thread():
            return fn(*a, **k)
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            clock.add(name, time.perf_counter() - t0)
    return wrapper


def _wrap(clock: _Clock) -> None:
    """Put the stage timers around the modules' functions (imported by the caller)."""
    from numba.core import caching

    from cgpredict import prepared, report, warmup
    from cgpredict.frontend import tracer

    def traced(fn):
        def wrapper(*a, **kw):  # _trace(source, opts, tmp, sizes, name, count_only)
            tr = fn(*a, **kw)
            probe = a[5] if len(a) > 5 else kw.get("count_only", False)
            if not probe and threading.current_thread() is threading.main_thread():
                for k in ("compile", "instrument", "link", "run", "write"):
                    clock.add(k, tr.header.seconds.get(k, 0.0))
            return tr
        return wrapper

    prepared._trace = traced(prepared._trace)
    tracer.read_trace = _timed(clock, "load", tracer.read_trace, main_only=True)
    prepared.PendingSizes._get = _timed(clock, "probe wait", prepared.PendingSizes._get, True)
    warmup._refresh = _timed(clock, "numba setup", warmup._refresh)
    if hasattr(prepared, "_import_analysis"):  # the analysis imported on the warm-up thread
        prepared._import_analysis = _timed(clock, "numba setup", prepared._import_analysis)
    caching.Cache.load_overload = _timed(clock, "numba load", caching.Cache.load_overload)
    report.to_json = _timed(clock, "report", report.to_json)


def inner(path: str) -> dict[str, float]:
    """Stage seconds of one `run PATH --no-cache --json` in this process."""
    t0 = time.perf_counter()
    clock = _Clock()
    import cgpredict.api  # noqa: F401 - what `run` imports, timed as "import"
    import cgpredict.pipeline  # noqa: F401
    import cgpredict.report  # noqa: F401
    from cgpredict import prepared
    from cgpredict.cli import main
    clock.add("import", time.perf_counter() - t0)
    _wrap(clock)
    analyze = prepared.Prepared.analyze

    def timed_analyze(self, *a, **k):
        t = time.perf_counter()
        wait0, load0 = clock.s["probe wait"], clock.s["numba load"]
        try:
            return analyze(self, *a, **k)
        finally:  # the analysis less its waits for the probes and numba's cache
            waited = clock.s["probe wait"] - wait0 + clock.s["numba load"] - load0
            clock.add("analysis", time.perf_counter() - t - waited)
    prepared.Prepared.analyze = timed_analyze
    with contextlib.redirect_stdout(io.StringIO()):
        main(["run", path, "--no-cache", "--json"], standalone_mode=False)
    return clock.s


def outer(path: Path, repeat: int) -> dict[str, float]:
    """The stages of the quickest of ``repeat`` fresh processes, with "wall" and "rest"."""
    best: dict[str, float] | None = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, __file__, "--inner", str(path)], cwd=ROOT,
                           capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        s = json.loads(r.stdout.strip().splitlines()[-1])
        s["wall"] = wall
        s["rest"] = wall - sum(v for k, v in s.items() if k not in ("rest", "wall",
                                                                    "numba setup"))
        if best is None or wall < best["wall"]:
            best = s
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="corpus file stems [default: all]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.inner:
        print(json.dumps(inner(a.inner)))
        return 0
    files = [CORPUS / f"{s}.c" for s in a.files] if a.files else sorted(CORPUS.glob("*.c"))
    print(f"cold `run --no-cache --json`, stage seconds of the quickest of {a.repeat} "
          f"fresh processes; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    print("numba setup (the analysis' imports and numba's target) runs on a thread beside "
          "clang (not in the sum); rest = wall less the other stages\n")
    cols = ("wall",) + STAGES
    print("| file | " + " | ".join(cols) + " | load |")
    print("|---" * (len(cols) + 2) + "|")
    for f in files:
        load = os.getloadavg()[0]
        s = outer(f, a.repeat)
        print(f"| {f.stem} | " + " | ".join(f"{s[c]:.2f}" for c in cols) + f" | {load:.1f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
