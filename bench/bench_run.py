"""Benchmark: end-to-end `cgpredict run` time of every corpus kernel at its reference trace size.

Target (issue 4): every kernel under 10 s wall on a 2-core machine. Prints one line per file;
asserts nothing. Usage: python bench/bench_run.py [--device tk1] [names ...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="tk1")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    files = sorted((ROOT / "polybench_c").glob("*.c"))
    if args.names:
        files = [f for f in files if f.stem in args.names]
    predict_source(ROOT / "polybench_c" / "atax.c", RunOptions(device=args.device))  # warm-up
    worst = 0.0
    print(f"{'kernel':<20} {'wall s':>7} {'trace':>6} {'probes':>6} {'analysis':>8}  predicted ms")
    for f in files:
        t0 = time.perf_counter()
        rep = predict_source(f, RunOptions(device=args.device))
        wall = time.perf_counter() - t0
        worst = max(worst, wall)
        s = rep.seconds
        print(
            f"{f.stem:<20} {wall:7.2f} {s['trace']:6.2f} {s['probes']:6.2f} "
            f"{s['analysis']:8.2f}  {rep.total_ms:.4g}"
        )
    print(f"slowest: {worst:.2f} s (target < 10 s)")


if __name__ == "__main__":
    main()
