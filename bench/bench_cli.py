"""Whole-process wall time of `cgpredict run` per corpus file, cold and cached (issue #15),
and of a 3 x 3 x 3 GEMM sweep against one cold run.

For each file, median of --repeat runs of each:
  cold     the cgpredict cache emptied before every run (numba's own on-disk cache of
           compiled functions stays: it is part of the installed tool, not of the file)
  cached   the same command again: trace and report read back from the cache
  new-cfg  the file traced before, a configuration not asked before (another block and
           device): trace read back, analysis done
Each run is `python -m cgpredict run FILE` in a fresh process, as a user runs it. The
figures depend on the machine and its load: the README gives those measured on a 2-core
machine.

    python bench/bench_cli.py                  # every polybench_c/*.c
    python bench/bench_cli.py gemm syrk --repeat 3
    python bench/bench_cli.py --sweep-only
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "polybench_c"
COLD_TARGET, CACHED_TARGET, SWEEP_TARGET = 3.0, 1.5, 4.0


def wall(args: list[str], cache: Path, installed: Path | None = None) -> float:
    """Seconds of one `python -m cgpredict ARGS` with the cache at ``cache``; with
    ``installed``, of that `cgpredict` command (an installed wheel: its `.pyc` files and
    numba kernels built at install) started outside the checkout, as a user runs it."""
    env = {**os.environ, "CGPREDICT_CACHE_DIR": str(cache)}
    env.pop("CGPREDICT_NO_CACHE", None)
    command = [str(installed)] if installed else [sys.executable, "-m", "cgpredict"]
    t0 = time.perf_counter()
    r = subprocess.run([*command, *args], env=env, cwd="/" if installed else ROOT,
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"cgpredict {' '.join(args)} failed: {r.stderr.strip()}")
    return dt


def bench_file(path: Path, repeat: int, stat=statistics.median) -> tuple[float, float, float]:
    """Cold, cached and new-configuration seconds of `run` on ``path`` (``stat`` of the
    repeats: the median, or the minimum on a shared machine)."""
    cold, cached, fresh = [], [], []
    base = ["run", str(path.relative_to(ROOT))]
    for k in range(repeat):
        with tempfile.TemporaryDirectory(prefix="cgp-bench-") as tmp:
            cache = Path(tmp)
            cold.append(wall(base, cache))
            cached.append(wall(base, cache))
            fresh.append(wall([*base, "--block", ["16x16", "32x32", "64x4"][k % 3],
                               "--device", "h100"], cache))
    return stat(cold), stat(cached), stat(fresh)


def bench_sweep(repeat: int) -> tuple[float, float]:
    """Median seconds of one cold `run` of GEMM and of a cold 3 x 3 x 3 sweep of it."""
    runs, sweeps = [], []
    gemm = "polybench_c/gemm.c"
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="cgp-bench-") as tmp:
            runs.append(wall(["run", gemm], Path(tmp) / "c1"))
            sweeps.append(wall(["sweep", gemm, "--block", "16x16,32x8,32x32", "--device",
                                "tk1,h100,gtx980", "-D", "N=512,1024,2048", "--quiet",
                                "-o", str(Path(tmp) / "out")], Path(tmp) / "c2"))
    return statistics.median(runs), statistics.median(sweeps)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="corpus file stems [default: all]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sweep-only", action="store_true")
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--min", action="store_true",
                    help="the minimum of the repeats, not the median (a shared machine)")
    a = ap.parse_args(argv)
    stat, what = (min, "minimum") if a.min else (statistics.median, "median")
    files = [CORPUS / f"{s}.c" for s in a.files] if a.files else sorted(CORPUS.glob("*.c"))
    print(f"cgpredict run, whole process, {what} of {a.repeat}; {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.2f}")
    met_cold = met_cached = 0
    if not a.sweep_only:
        print(f"{'file':<22} {'cold s':>8} {'cached s':>9} {'new-cfg s':>10}")
        for f in files:
            cold, cached, fresh = bench_file(f, a.repeat, stat)
            met_cold += cold <= COLD_TARGET
            met_cached += cached <= CACHED_TARGET
            print(f"{f.name:<22} {cold:8.2f} {cached:9.2f} {fresh:10.2f}", flush=True)
        print(f"cold <= {COLD_TARGET} s: {met_cold}/{len(files)} files; "
              f"cached <= {CACHED_TARGET} s: {met_cached}/{len(files)} files")
    if not a.no_sweep:
        run, sweep = bench_sweep(a.repeat)
        print(f"GEMM 3x3x3 sweep (blocks x devices x sizes): {sweep:.2f} s, one cold run "
              f"{run:.2f} s: {sweep / run:.2f}x (target <= {SWEEP_TARGET}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
