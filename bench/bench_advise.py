"""Whole-process wall time of `cgpredict advise` against `cgpredict run` per corpus file
(issue #12: advise within 2x of run).

For each file, median of --repeat runs of each, both cold (the cgpredict cache emptied before
every run) and side by side in one loop, so that the ratio compares like with like on a
machine whose speed drifts. Each is `python -m cgpredict CMD FILE` in a fresh process.

    python bench/bench_advise.py                 # every polybench_c/*.c
    python bench/bench_advise.py syr2k 3mm --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import CORPUS, ROOT, wall  # noqa: E402

RATIO_TARGET = 2.0


def bench_file(path: Path, repeat: int) -> tuple[float, float]:
    """Median cold seconds of `run` and of `advise` on ``path``."""
    runs, advs = [], []
    rel = str(path.relative_to(ROOT))
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="cgp-bench-") as tmp:
            runs.append(wall(["run", rel], Path(tmp) / "run"))
            advs.append(wall(["advise", rel], Path(tmp) / "advise"))
    return statistics.median(runs), statistics.median(advs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="corpus file stems [default: all]")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    files = [CORPUS / f"{s}.c" for s in a.files] if a.files else sorted(CORPUS.glob("*.c"))
    print(f"cgpredict advise vs run, whole process, cold, median of {a.repeat}; "
          f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    print(f"{'file':<22} {'run s':>7} {'advise s':>9} {'ratio':>6}")
    met, worst = 0, (0.0, "")
    for f in files:
        run, adv = bench_file(f, a.repeat)
        ratio = adv / run
        met += ratio <= RATIO_TARGET
        worst = max(worst, (ratio, f.name))
        print(f"{f.name:<22} {run:7.2f} {adv:9.2f} {ratio:6.2f}", flush=True)
    print(f"advise <= {RATIO_TARGET}x run: {met}/{len(files)} files; worst {worst[1]} "
          f"{worst[0]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
