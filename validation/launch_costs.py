#!/usr/bin/env python3
"""The H100's launch costs from two timers of the same kernels (issue 24): the shared
measurements time PolyBench/GPU with a host clock around the launches and the final
synchronisation (validation/measured/h100.json, ``timer`` host), this project's own ports
with a cudaEvent pair around each launch (nvidia-h100-80gb-hbm3.json and -sizes.json). Same
kernels, sizes and blocks on two H100 SXM5 boards at 1980 MHz; their difference is what the
host timer adds (docs/models.md, the launch stream):

    host - events = L x (launch_sync_us - launch_gap_us) + first_launch_us   (sync each)
    host - events = (launch_sync_us - launch_gap_us) + first_launch_us       (sync end)

(events already see each launch's work and the GPU's start of it, launch_gap_us). FDTD-2D
(300 launches) fixes the per-launch part; the one- and two-launch programs then give the
module load, their median. Programs whose kernels take 10 ms or more are left out: a 0.5 %
difference between two boards is as large as the launch costs there.

Usage: python validation/launch_costs.py [--gap-us 3.07]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent / "measured"
OWN = ("nvidia-h100-80gb-hbm3.json", "nvidia-h100-80gb-hbm3-sizes.json")
MAX_EVENTS_MS = 10.0
MANY_LAUNCHES = 100


def _key(row: dict) -> tuple:
    return row["kernel"], row["config"], json.dumps(row["work_sizes"], sort_keys=True)


def pairs() -> list[tuple[str, str, str, int, float]]:
    """(kernel, block, sizes, launches it pays a round trip for, host - events in us)."""
    own = {}
    for name in OWN:
        for r in json.loads((HERE / name).read_text())["results"]:
            if "result" in r:
                own[_key(r)] = r["result"]
    out = []
    for r in json.loads((HERE / "h100.json").read_text())["results"]:
        e = own.get(_key(r))
        if r.get("timer", "host") != "host" or e is None or e["total_ms"] >= MAX_EVENTS_MS:
            continue
        launches = sum(x["count"] for x in e["launches"])
        trips = launches if r.get("sync", "each") == "each" else 1
        out.append((*_key(r), trips, (r["result"]["total_ms"] - e["total_ms"]) * 1e3))
    return out


def launch_costs(rows, gap_us: float) -> tuple[float, float]:
    """(launch_sync_us, first_launch_us): the per-launch part from the many-launch programs
    (their difference less the few-launch programs' median, per launch), then the module
    load as the median over the few-launch programs of difference less their round trips."""
    few = [d for *_, n, d in rows if n < MANY_LAUNCHES]
    many = [(n, d) for *_, n, d in rows if n >= MANY_LAUNCHES]
    first = statistics.median(few)
    for _ in range(20):  # the two parts, each given the other
        per = statistics.median((d - first) / n for n, d in many)
        first = statistics.median(d - n * per for *_, n, d in rows if n < MANY_LAUNCHES)
    return per + gap_us, first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gap-us", type=float, default=3.07, help="launch_gap_us of the device file")
    args = ap.parse_args()
    rows = pairs()
    for k, b, s, n, d in rows:
        print(f"{k:8s} {b:6s} {s:40s} round trips {n:4d}  host - events {d:8.1f} us")
    sync, first = launch_costs(rows, args.gap_us)
    print(f"launch_sync_us = {sync:.2f}  first_launch_us = {first:.1f}  ({len(rows)} pairs)")


if __name__ == "__main__":
    main()
