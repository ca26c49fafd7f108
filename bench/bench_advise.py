"""Whole-process wall time of `cgpredict advise` against `cgpredict run` per corpus file
(issue #12: advise within 2x of run).

For each file, median of --repeat runs of each, both cold (the cgpredict cache emptied before
every run) and side by side in one loop, so that the ratio compares like with like on a
machine whose speed drifts. Each is `python -m cgpredict CMD FILE` in a fresh process. Beside
the wall time, the CPU time (user + system of the process and the compiler and traced
programs it waits for): on a machine shared with other work the wall ratio follows the load,
the CPU ratio much less; the load average is printed per file.

    python bench/bench_advise.py                 # every polybench_c/*.c
    python bench/bench_advise.py syr2k 3mm --repeat 3
    python bench/bench_advise.py --cgpredict VENV/bin/cgpredict --min --repeat 2
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import CORPUS, ROOT, wall  # noqa: E402

RATIO_TARGET = 2.0


def _children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(args: list[str], cache: Path, installed: Path | None = None
          ) -> tuple[float, float]:
    """(wall, CPU) seconds of one `python -m cgpredict ARGS` (or ``installed`` ARGS) with
    the cache at ``cache``."""
    c0 = _children_cpu()
    return wall(args, cache, installed), _children_cpu() - c0


def bench_file(path: Path, repeat: int, stat=statistics.median, installed: Path | None = None
               ) -> tuple[float, float, float, float]:
    """Cold wall seconds of `run` and of `advise` on ``path``, then their CPU seconds
    (``stat`` of the repeats: the median, or the minimum on a shared machine)."""
    runs, advs = [], []
    rel = str(path if installed else path.relative_to(ROOT))
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="cgp-bench-") as tmp:
            runs.append(timed(["run", rel], Path(tmp) / "run", installed))
            advs.append(timed(["advise", rel], Path(tmp) / "advise", installed))
    med = [stat(x[i] for x in col) for i in (0, 1) for col in (runs, advs)]
    return med[0], med[1], med[2], med[3]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="corpus file stems [default: all]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min", action="store_true",
                    help="the minimum of the repeats, not the median (a shared machine)")
    ap.add_argument("--cgpredict", type=Path, metavar="EXE",
                    help="time this installed `cgpredict` command, not this checkout's")
    a = ap.parse_args(argv)
    stat, what = (min, "minimum") if a.min else (statistics.median, "median")
    files = [CORPUS / f"{s}.c" for s in a.files] if a.files else sorted(CORPUS.glob("*.c"))
    print(f"cgpredict advise vs run, whole process, cold, {what} of {a.repeat}; "
          f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    print(f"{'file':<22} {'run s':>7} {'advise s':>9} {'ratio':>6}   {'CPU run s':>9} "
          f"{'CPU advise s':>12} {'ratio':>6}  load")
    met, worst = 0, (0.0, "")
    for f in files:
        load = os.getloadavg()[0]
        run, adv, run_cpu, adv_cpu = bench_file(f, a.repeat, stat, a.cgpredict)
        ratio = adv / run
        met += ratio <= RATIO_TARGET
        worst = max(worst, (ratio, f.name))
        print(f"{f.name:<22} {run:7.2f} {adv:9.2f} {ratio:6.2f}   {run_cpu:9.2f} "
              f"{adv_cpu:12.2f} {adv_cpu / run_cpu:6.2f}  {load:.1f}", flush=True)
    print(f"advise <= {RATIO_TARGET}x run: {met}/{len(files)} files; worst {worst[1]} "
          f"{worst[0]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
