"""Each H100 row's miss split into the kernel's part and the event pair's part (round 18, t4).

For a kernel launched once a run, a committed prediction is the model's kernel time plus the
launch costs an event pair counts on an idle GPU (eqs. (E1)-(E3): ``launch_gap_us`` +
``launch_call_us``, and ``upload_launch_us`` after a large pageable upload), so

    model kernel  = predicted - launch costs                                   (per row)
    in-kernel     = model kernel - ncu kernel      (the model against Nsight Compute)
    outside       = (predicted - measured) - in-kernel   (what the event pair holds beyond both)

``ncu kernel`` is ``gpu__time_duration`` of the same kernel and block in a committed lease
(``validation/event_vs_ncu.py`` reads it), taken as is where DRAM or the L2 runs at
``--busy`` per cent of peak or more (the time does not follow ncu's locked SM clock) and
scaled to the events' 1.98 GHz otherwise (marked ``*``: right for a compute-bound launch,
too short for a latency- or dispatch-bound one). The predictions and measured times are the
committed validate tables (``validation/results/``, the lead's regeneration at main HEAD);
each row is paired with every lease that profiled its kernel and block, and the lease's own
event time is shown beside the set's, so lease-to-lease spread is visible. The last lines
fit the outside part against the launch's block count (ns a block): a cost per block that
ncu's window does not hold would show as a slope.

    python validation/block_split.py [--busy 75] [--blocks 128x1] [--kernel NAME ...]
    python validation/block_split.py --launches [--blocks 1024x1]   (runs of several launches)

Needs no GPU and no cgpredict run; prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from event_vs_ncu import CLOCK_GHZ, H100, MEASURED, device_launch, rows_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
DISPATCH_NEAR = 1.10  # ncu within this of (BD)'s time: a dispatch-bound launch
#: the plain-port tables of the H100 (restrict ports are other binaries: not paired)
TABLES = ("h100-own-user/h100-cgpredict.json", "h100-own-user-blocks/h100-cgpredict.json",
          "blind/now-plain/h100-cgpredict.json", "blind/now-blocks/h100-cgpredict.json",
          "h100-own-plain/h100-cgpredict.json", "h100-own-blocks/h100-cgpredict.json")


def table_rows() -> list[dict]:
    """Every row of TABLES with its set's name, predicted and measured us."""
    out = []
    for rel in TABLES:
        path = RESULTS / rel
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        for r in data.get("rows", []):
            if r.get("predicted_ms") is None or r.get("measured_ms") is None:
                continue
            out.append(dict(set=rel.split("/h100-")[0], kernel=r["kernel"], block=r["block"],
                            pred_us=r["predicted_ms"] * 1e3, meas_us=r["measured_ms"] * 1e3,
                            # the first call's late part, eq. (E6) (older tables: the flag)
                            late_us=r.get("late_us", 0.0) or 0.0,
                            after_upload=bool(r.get("after_upload")),
                            writeback_us=r.get("writeback_ms", 0.0) * 1e3,  # eq. (E5)
                            work=r.get("work_sizes", {})))
    return out


def ncu_rows(busy: float) -> dict[tuple[str, str], list[dict]]:
    """Per (kernel, block), every committed lease's first-launch ncu row (event_vs_ncu)."""
    folders = sorted({j.parent for j in MEASURED.rglob("*.json")})
    by: dict[tuple[str, str], list[dict]] = {}
    for f in folders:
        for r in rows_of(f, busy):
            by.setdefault((r["kernel"], r["block"]), []).append(r)
    return by


def dispatch_us(blocks: float) -> float:
    """Eq. (BD)'s time of ``blocks`` on the H100 (its block_dispatch_cycles at its clock)."""
    dev = tomllib.loads(H100.read_text())
    return blocks * dev["timing"]["block_dispatch_cycles"] / dev["sm"]["clock_mhz"]


def ncu_at_events(r: dict) -> tuple[float, str]:
    """ncu's kernel time at the events' clock and how it was read: "" as is (DRAM or L2
    busy: clock-free), "d" as is (within 10 % of (BD)'s dispatch time: the work
    distributor's rate does not follow ncu's locked SM clock), "*" scaled to the events'
    clock (SM-bound), "?" as is, no clock or throughput counter in the profile."""
    if not r["ghz"]:
        return r["ncu_us"], "?"
    if r["bound"]:
        return r["ncu_us"], ""
    if r["blocks"] and r["ncu_us"] <= DISPATCH_NEAR * dispatch_us(r["blocks"]):
        return r["ncu_us"], "d"
    return r["ncu_us"] * r["ghz"] / CLOCK_GHZ, "*"


def split(busy: float, blocks: set[str], kernels: set[str]) -> list[dict]:
    """One line per table row and lease profile of its kernel and block."""
    dev = device_launch()
    costs = dev["launch_gap_us"] + dev["launch_call_us"]
    prof = ncu_rows(busy)
    out = []
    for t in table_rows():
        if (blocks and t["block"] not in blocks) or (kernels and t["kernel"] not in kernels):
            continue
        late = t["late_us"] or (dev["upload_launch_us"] if t["after_upload"] else 0.0)
        model_k = t["pred_us"] - costs - t["writeback_us"] - late
        for p in prof.get((t["kernel"], t["block"]), []):
            if not p["single"] or p["port"] != "plain" or p["work"] != t["work"]:
                continue  # another program, port or size: not the row's kernel alone
            ncu, scaled = ncu_at_events(p)
            miss = t["pred_us"] - t["meas_us"]
            inside = model_k - ncu
            out.append(dict(t, lease=p["where"], ncu=ncu, scaled=scaled, model_k=model_k,
                            miss=miss, inside=inside, outside=miss - inside,
                            lease_outside=t["pred_us"] - p["event_us"] - inside,
                            lease_event=p["event_us"], blocks=p.get("blocks", 0.0)))
    return out


def launch_split(busy: float, blocks: set[str], kernels: set[str]) -> list[dict]:
    """One line per launch of each profiled run of several launches (particles: a step_soa
    then a step_aos): the launch's event median, ncu's time read as ``ncu_at_events`` does,
    what the event pair holds beyond it (``outside`` = event - ncu) and the part of that the
    model charges (``costs``: eqs. (E1)-(E3), the first launch's call and late upload, a
    later one's queued gap); the tables hold a program's total only, so the model's kernel
    time of one launch is not split here."""
    folders = sorted({j.parent for j in MEASURED.rglob("*.json")})
    out = []
    for f in folders:
        for r in rows_of(f, busy, every=True):
            if r["single"] or r["port"] != "plain":
                continue
            if (blocks and r["block"] not in blocks) or (kernels and r["kernel"] not in kernels):
                continue
            ncu, mark = ncu_at_events(r)
            outside = r["event_us"] - ncu
            out.append(dict(r, ncu=ncu, scaled=mark, outside=outside,
                            unexplained=outside - r["costs"]))
    return out


def print_launches(rows: list[dict]) -> None:
    """The launch_split table, Markdown."""
    print("| lease/file | kernel | launch | block | event us | ncu us | outside us |"
          " model's launch costs us | left us |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['where']} | {r['kernel']} | {r['index']}: {r['name']} | {r['block']} |"
              f" {r['event_us']:.1f} | {r['ncu']:.1f}{r['scaled']} | {r['outside']:+.1f} |"
              f" {r['costs']:.2f} | {r['unexplained']:+.1f} |")


def slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept of ys on xs (0, mean when xs do not vary)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, my
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", type=float, default=75.0,
                    help="dram or lts throughput (%%) above which ncu's time is clock-free")
    ap.add_argument("--blocks", action="append", default=[], help="only this block shape")
    ap.add_argument("--kernel", action="append", default=[], help="only this kernel (file stem)")
    ap.add_argument("--launches", action="store_true",
                    help="each launch of the profiled runs of several launches instead")
    args = ap.parse_args()
    if args.launches:
        print_launches(launch_split(args.busy, set(args.blocks), set(args.kernel)))
        return
    rows = split(args.busy, set(args.blocks), set(args.kernel))
    print("| set | kernel | block | measured us | predicted us | error % | model kernel us |"
          " ncu us | in-kernel us | outside us | lease | lease event us | lease outside us |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        err = 100 * r["miss"] / r["meas_us"]
        print(f"| {r['set']} | {r['kernel']} | {r['block']} | {r['meas_us']:.1f} |"
              f" {r['pred_us']:.1f} | {err:+.1f} | {r['model_k']:.1f} |"
              f" {r['ncu']:.1f}{r['scaled']} | {r['inside']:+.1f} | {r['outside']:+.1f} |"
              f" {r['lease']} | {r['lease_event']:.1f} | {r['lease_outside']:+.1f} |")
    clean = [r for r in rows if r["scaled"] in ("", "d")]
    if not clean:
        return
    print("\nClock-free rows (no mark or d), by block shape: median in-kernel / outside (set) /"
          " outside (lease) us")
    for b in sorted({r["block"] for r in clean},
                    key=lambda s: (int(s.split("x")[0]) * int(s.split("x")[1]), s)):
        sel = [r for r in clean if r["block"] == b]
        med = [statistics.median(r[k] for r in sel) for k in ("inside", "outside", "lease_outside")]
        print(f"- {b}: {len(sel)} rows, {med[0]:+.1f} / {med[1]:+.1f} / {med[2]:+.1f}")
    pts = [(r["blocks"], r["lease_outside"]) for r in clean if r["blocks"]]
    if len({x for x, _ in pts}) > 1:
        b, a = slope([x for x, _ in pts], [y for _, y in pts])
        print(f"\nlease outside us = {a:+.1f} {b * 1e3:+.4f} ns x blocks ({len(pts)} clock-free"
              " rows; a cost per block that ncu's window misses would be the slope)")


if __name__ == "__main__":
    main()
