"""One kernel's measured times by lease and block shape, beside Nsight Compute's kernel time
(round 13, t6).

The own-blocks set (`nvidia-h100-80gb-hbm3-blocks.json`, lease of 2026-11-27 09:47) times
each corpus kernel at two block shapes that the reference lease (2026-11-26) did not; its
misses against the model are read as a block-shape mechanism only if the same lease, or one
of the same day, times the reference shape alike. This script sets every committed time of a
kernel side by side: for each (kernel, port, sizes) one row per lease file (its date), one
column per block shape (``result.total_ms``, the port's own timer). Then, where Nsight
Compute profiled the kernel (``*-ncu/<kernel>-<block>.csv``), the median
``gpu__time_duration`` by block: the GPU's own time, without the host.

    python validation/lease_drift.py [KERNEL ...]

(default: 2dconv 3dconv fdtd2d jacobi2d mm syrk_transposed)

Needs no GPU; prints Markdown.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from ncu_csv import read_ncu

MEASURED = Path(__file__).resolve().parent / "measured"
DEFAULT = ("2dconv", "3dconv", "fdtd2d", "jacobi2d", "mm", "syrk_transposed")
DURATION = "gpu__time_duration.sum"


def lease_times(root: Path, kernels: tuple[str, ...]) -> dict[tuple, dict[str, dict]]:
    """{(kernel, port, sizes): {date: {block: total_ms}}} over every dated lease file under
    ``root`` (a file's copy under another name, same date, merges into one row)."""
    table: dict[tuple, dict[str, dict]] = defaultdict(lambda: defaultdict(dict))
    for path in sorted(root.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            continue
        date = str(data.get("date") or "")[:16]
        if not date:
            continue  # an imported file without its lease's date (h100.json, tk1.json)
        for row in data["results"]:
            res = row.get("result") if isinstance(row, dict) else None
            if row.get("kernel") not in kernels or not isinstance(res, dict):
                continue
            if res.get("total_ms") is None:
                continue
            sizes = " ".join(f"{k}={v}" for k, v in sorted((res.get("sizes") or {}).items()))
            key = (row["kernel"], data.get("port", "plain"), sizes)
            table[key][date][row.get("config", "?")] = float(res["total_ms"])
    return table


def ncu_durations(path: Path) -> list[float]:
    """Every launch's ``gpu__time_duration`` (ns) in one Nsight Compute CSV."""
    return [launch.metrics[DURATION] for launch in read_ncu(path) if DURATION in launch.metrics]


def ncu_by_block(root: Path, kernel: str) -> dict[str, list[tuple[str, float]]]:
    """{block: [(folder, median duration us)]} of ``<kernel>-<block>.csv`` under ``root``."""
    out: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for path in sorted(root.rglob(f"{kernel}-*.csv")):
        block = path.stem[len(kernel) + 1:]
        if "x" not in block or not block.replace("x", "").isdigit():
            continue
        times = ncu_durations(path)
        if times:
            folder = str(path.parent.relative_to(root))
            out[block].append((folder, statistics.median(times) / 1000.0))
    return out


def main(kernels: tuple[str, ...]) -> None:
    """Print the two tables for ``kernels``."""
    table = lease_times(MEASURED, kernels)
    for (kernel, port, sizes), dates in sorted(table.items()):
        blocks = sorted({b for row in dates.values() for b in row},
                        key=lambda b: [int(x) for x in b.split("x")] if "x" in b else [0])
        print(f"\n**{kernel}** ({port}, {sizes}), total ms by lease\n")
        print("| lease | " + " | ".join(blocks) + " |")
        print("|---|" + "---:|" * len(blocks))
        for date, row in sorted(dates.items()):
            cells = [f"{row[b]:.4g}" if b in row else "" for b in blocks]
            print(f"| {date} | " + " | ".join(cells) + " |")
    for kernel in kernels:
        by_block = ncu_by_block(MEASURED, kernel)
        if not by_block:
            continue
        print(f"\n**{kernel}**, Nsight Compute gpu__time_duration (median us) by block\n")
        print("| block | folder | us |\n|---|---|---:|")
        for block, rows in sorted(by_block.items()):
            for folder, us in rows:
                print(f"| {block} | {folder} | {us:.4g} |")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or DEFAULT)
