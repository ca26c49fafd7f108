"""One kernel at every 1-D block shape: which part of the model carries the event pair's rest
(seventeenth round, t3).

The 128x1 and 256x1 rows of the streams are predicted 8-12 % fast where the same kernels at
32x1 and 1024x1 are within 4 %. ``block_split.py`` splits each row's miss into the kernel's
part (the model's kernel against Nsight Compute's ``gpu__time_duration``) and the rest that
the event pair holds beyond both; this script lays one kernel's rows side by side, block by
block, with every committed lease's event time of the same port, block and size:

    in-kernel (block)  = model kernel - ncu kernel          (block_split.split)
    outside (block)    = (predicted - measured) - in-kernel
    lease spread       = the least and largest event time of the port at that block over
                         the committed lease folders (the plain port, the row's sizes)

A row whose in-kernel part is positive by about the outside part's size looks right because
the two cancel: the 32x1 rows (eq. (BD)'s 1.24 cycles a block against ncu's 1.20) and the
1024x1 rows (eq. (16)/(17) with (R1w) at W = 32); a row whose in-kernel part is near zero
shows the outside whole (128x1, 256x1).

    python validation/block_across.py [--busy 75] [--kernel NAME ...]

Needs no GPU and no cgpredict run; prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from block_split import split
from event_vs_ncu import MEASURED


def block_key(block: str) -> tuple[int, str]:
    """Sort key of a block shape "XxY": its threads, then the text."""
    try:
        x, y = (int(v) for v in block.split("x"))
    except ValueError:
        return (0, block)
    return (x * y, block)


def run_us(result: dict) -> float | None:
    """A committed run's event time in us: the median over its repetitions of the sum of
    their launches' event pairs (``all_total_ms``); None without it."""
    tot = result.get("all_total_ms") or []
    return statistics.median(tot) * 1e3 if tot else None


def lease_times(root: Path = MEASURED) -> dict[tuple[str, str, str], list[tuple[str, float]]]:
    """Per (kernel, block, sizes as JSON), every lease folder's event time of the plain port:
    (folder, us) pairs. The sets' own files at ``root`` (copies of the leases') are left out."""
    out: dict[tuple[str, str, str], list[tuple[str, float]]] = {}
    for jf in sorted(root.rglob("*.json")):
        if jf.parent == root:
            continue
        try:
            data = json.loads(jf.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("port", "plain") != "plain":
            continue
        for e in data.get("results", []):
            us = run_us(e.get("result") or {})
            if us is None or "kernel" not in e:
                continue
            key = (e["kernel"], e.get("config", "?"),
                   json.dumps(e.get("work_sizes", {}), sort_keys=True))
            where = str(jf.parent.relative_to(root))
            out.setdefault(key, []).append((where, us))
    return out


def across(busy: float, kernels: set[str]) -> list[dict]:
    """The split rows of 1-D blocks (one per table row, its first lease profile), each with
    the spread of its port's event time over the leases and the error that spread gives."""
    spread = lease_times()
    seen: set[tuple[str, str, str]] = set()
    out = []
    for r in split(busy, set(), kernels):
        if not r["block"].endswith("x1") or r["scaled"] not in ("", "d", "*"):
            continue
        key = (r["set"], r["kernel"], r["block"])
        if key in seen:
            continue
        seen.add(key)
        times = [t for _, t in spread.get(
            (r["kernel"], r["block"], json.dumps(r["work"], sort_keys=True)), [])]
        lo, hi = (min(times), max(times)) if times else (r["meas_us"], r["meas_us"])
        out.append(dict(r, lease_lo=lo, lease_hi=hi, leases=len(times),
                        err_lo=100 * (r["pred_us"] - hi) / hi,
                        err_hi=100 * (r["pred_us"] - lo) / lo))
    out.sort(key=lambda r: (r["kernel"], r["set"], block_key(r["block"])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", type=float, default=75.0,
                    help="dram or lts throughput (%%) above which ncu's time is clock-free")
    ap.add_argument("--kernel", action="append", default=[], help="only this kernel (file stem)")
    args = ap.parse_args()
    print("| kernel | set | block | error % | model kernel us | ncu us | in-kernel us |"
          " outside us | event us over leases (n) | error % over leases |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for r in across(args.busy, set(args.kernel)):
        err = 100 * r["miss"] / r["meas_us"]
        print(f"| {r['kernel']} | {r['set']} | {r['block']} | {err:+.1f} | {r['model_k']:.1f} |"
              f" {r['ncu']:.1f}{r['scaled']} | {r['inside']:+.1f} | {r['outside']:+.1f} |"
              f" {r['lease_lo']:.1f}-{r['lease_hi']:.1f} ({r['leases']}) |"
              f" {r['err_lo']:+.1f}..{r['err_hi']:+.1f} |")


if __name__ == "__main__":
    main()
