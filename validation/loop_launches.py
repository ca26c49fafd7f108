#!/usr/bin/env python3
"""Host loops of short launches under cudaEvent timing (issue t5): the evidence for
``loop_launch_us`` (models/event_timing.py, eqs. (E3)-(E4)).

For every kernel a port launches more than once in a run, from the measured JSON files
(validation/measure.py's output): the launches, the mean event pair a launch (``run_ms`` /
count), the median and least single pair, and the spread of the per-repetition times (the
least and largest ``all_ms`` a launch); beside it ncu's ``gpu__time_duration`` of the same
kernel's profiled launches where a CSV of the same lease holds them. A loop the GPU sets has
steady repetitions and pairs near ncu's time + the queued start; a loop the host sets pairs
at the host's period, spread as the host's period is. Run from the repository root:
``python validation/loop_launches.py``.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from ncu_csv import read_ncu

MEASURED = Path("validation/measured")
#: (measured JSON, folder of its ncu CSVs or None), one lease each
SOURCES = (
    ("nvidia-h100-80gb-hbm3.json", "h100-session-2026-11-26/measured-ncu"),
    ("nvidia-h100-80gb-hbm3-restrict.json", None),
    ("nvidia-h100-80gb-hbm3-user.json", "h100-session-2026-11-27b/counters/user-ncu"),
    ("h100-session-2026-11-27b/counters/plain.json", "h100-session-2026-11-27b/counters/plain-ncu"),
    ("h100-blind-2026-11-27/plain.json", "h100-blind-2026-11-27/plain-ncu"),
    ("h100-blind-2026-11-27/restrict.json", None),
    ("h100-blind-2026-11-27/opcodes.json", "h100-blind-2026-11-27/opcodes-ncu"),
    ("h100-blind-2026-11-27/blocks.json", None),
    ("h100-blind-2026-11-27/blocks/corpus-blocks.json", None),
)


@dataclass(frozen=True)
class LoopRow:
    """One kernel of a host loop in one measured entry; times in microseconds."""

    source: str
    program: str
    block: str
    kernel: str
    launches: int
    pair_us: float  # run_ms / launches
    median_us: float
    min_us: float
    rep_lo_us: float
    rep_hi_us: float
    ncu_us: float | None


def ncu_rows(path: Path) -> list[dict]:
    """Each profiled launch of an ncu CSV (``--csv --page raw``) as {column: value}: numbers
    with their thousands separators dropped, text where a cell is not a number."""
    if not path.exists():
        return []
    return [{**launch.cells, **launch.metrics} for launch in read_ncu(path)]


def ncu_durations(path: Path) -> dict[str, list[float]]:
    """Kernel name -> gpu__time_duration (us) of each profiled launch in an ncu CSV."""
    if not path.exists():
        return {}
    out: dict[str, list[float]] = {}
    for launch in read_ncu(path):
        ns = launch.metrics.get("gpu__time_duration.sum")
        if ns is not None:
            out.setdefault(launch.kernel, []).append(ns / 1e3)
    return out


def loop_rows(source: str, ncu_dir: str | None) -> list[LoopRow]:
    """The host-loop kernels of one measured file."""
    data = json.loads((MEASURED / source).read_text())
    rows = []
    for entry in data["results"]:
        res = entry.get("result") or {}
        ncu = {}
        if ncu_dir:
            ncu = ncu_durations(MEASURED / ncu_dir / f"{entry['kernel']}-{entry['config']}.csv")
        for ln in res.get("launches", []):
            n = ln["count"]
            if n <= 1:
                continue
            reps = [a / n * 1e3 for a in ln["all_ms"]]
            got = ncu.get(ln["name"])
            rows.append(LoopRow(source, entry["kernel"], entry["config"], ln["name"], n,
                                ln["run_ms"] / n * 1e3, ln["median_ms"] * 1e3,
                                ln["min_ms"] * 1e3, min(reps), max(reps),
                                statistics.median(got) if got else None))
    return rows


def main() -> None:
    print("| source | program | block | kernel | launches | pair/launch us | median | least "
          "| repetitions us | ncu us |")
    print("|---|---|---|---|---:|---:|---:|---:|---|---:|")
    for source, ncu_dir in SOURCES:
        for r in loop_rows(source, ncu_dir):
            ncu = f"{r.ncu_us:.2f}" if r.ncu_us is not None else "-"
            print(f"| {r.source} | {r.program} | {r.block} | {r.kernel} | {r.launches} | "
                  f"{r.pair_us:.2f} | {r.median_us:.2f} | {r.min_us:.2f} | "
                  f"{r.rep_lo_us:.2f}-{r.rep_hi_us:.2f} | {ncu} |")


if __name__ == "__main__":
    main()
