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
    python validation/lease_drift.py --lease FOLDER [KERNEL ...]

(default: 2dconv 3dconv fdtd2d jacobi2d mm syrk_transposed). With ``--lease`` (round 14, t3)
it reads one lease folder whose entries carry their Nsight Compute CSV (``counters.csv``,
e.g. ``h100-lease-2026-11-28/shapes``) and sets, per launch and block, the event pair's
median beside ncu's median ``gpu__time_duration`` of the same lease, each as a ratio to the
folder's 32x8 row, with the counters that tell the shapes apart (L1 wavefronts, L2 read and
write requests, ``lts__throughput``): what a shape changes inside the kernel (ncu, caches
flushed, clock locked) and what it changes only in the timed sequence (the event pair).

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


LAUNCH_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg",
                  "l1tex__data_pipe_lsu_wavefronts.sum",
                  "lts__t_requests_srcunit_tex_op_read.sum",
                  "lts__t_requests_srcunit_tex_op_write.sum",
                  "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                  "dram__throughput.avg.pct_of_peak_sustained_elapsed")


def ncu_medians(path: Path) -> dict[str, dict[str, float]]:
    """Per kernel name (before its argument list): the median of each LAUNCH_METRICS."""
    got: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for launch in read_ncu(path):
        for m in LAUNCH_METRICS:
            if launch.metrics.get(m) is not None:
                got[launch.kernel.strip()][m].append(launch.metrics[m])
    return {n: {m: statistics.median(v) for m, v in ms.items()} for n, ms in got.items()}


def launch_rows(folder: Path, kernels: tuple[str, ...]) -> list[dict]:
    """One row per (entry, launch name) of ``folder`` with an ncu profile of that launch:
    the event pair's median (us) beside ncu's medians; ``ref``: the 32x8 row's figures."""
    out = []
    for jf in sorted(folder.glob("*.json")):
        try:
            data = json.loads(jf.read_text())
        except (OSError, ValueError):
            continue
        for e in data.get("results", []) if isinstance(data, dict) else []:
            cnt, res = e.get("counters") or {}, e.get("result") or {}
            if e.get("kernel") not in kernels or not cnt.get("csv"):
                continue
            csv_path = folder / cnt["csv"]
            prof = ncu_medians(csv_path) if csv_path.exists() else {}
            for launch in res.get("launches", []):
                name = launch.get("name", "")
                p = prof.get(name) or prof.get(f"{name}_kernel")  # the port's __global__ name
                if not p or "gpu__time_duration.sum" not in p:
                    continue
                out.append(dict(kernel=e["kernel"], launch=name, block=e.get("config", "?"),
                                event_us=launch["median_ms"] * 1e3,
                                ncu_us=p["gpu__time_duration.sum"] / 1e3, counters=p))
    refs = {(r["kernel"], r["launch"]): r for r in out if r["block"] == "32x8"}
    for r in out:
        ref = refs.get((r["kernel"], r["launch"]))
        r["event_ratio"] = r["event_us"] / ref["event_us"] if ref else None
        r["ncu_ratio"] = r["ncu_us"] / ref["ncu_us"] if ref else None
    return out


def print_launches(folder: Path, kernels: tuple[str, ...]) -> None:
    """Print launch_rows as one Markdown table."""
    print(f"\n**{folder.name}**: event pair and ncu by launch and block (ratios to 32x8)\n")
    print("| kernel | launch | block | event us | ncu us | event - ncu us | event / 32x8 "
          "| ncu / 32x8 | L1 wavefronts M | L2 read req M | L2 write req M | lts % | dram % |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in launch_rows(folder, kernels):
        c = r["counters"]

        def ratio(x: float | None) -> str:
            return "" if x is None else f"{x:.3f}"

        print(f"| {r['kernel']} | {r['launch']} | {r['block']} | {r['event_us']:.1f} | "
              f"{r['ncu_us']:.1f} | {r['event_us'] - r['ncu_us']:+.1f} | "
              f"{ratio(r['event_ratio'])} | {ratio(r['ncu_ratio'])} | "
              f"{c.get(LAUNCH_METRICS[2], 0) / 1e6:.2f} | "
              f"{c.get(LAUNCH_METRICS[3], 0) / 1e6:.3f} | "
              f"{c.get(LAUNCH_METRICS[4], 0) / 1e6:.3f} | {c.get(LAUNCH_METRICS[5], 0):.1f} | "
              f"{c.get(LAUNCH_METRICS[6], 0):.1f} |")


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
    args = sys.argv[1:]
    if args[:1] == ["--lease"]:
        if len(args) < 2 or not Path(args[1]).is_dir():
            sys.exit("usage: lease_drift.py --lease FOLDER [KERNEL ...] (FOLDER: a lease folder)")
        print_launches(Path(args[1]), tuple(args[2:]) or DEFAULT)
    else:
        main(tuple(args) or DEFAULT)
