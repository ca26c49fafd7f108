"""What an event-timed first launch counts beyond Nsight Compute's kernel duration (round 17, t1).

A committed lease folder pairs, for the same kernel and block, the ports' event times (a
cudaEvent pair around each launch, ``results[].result.launches[].median_ms``) with Nsight
Compute's ``gpu__time_duration`` of the same launch (``results[].counters.csv``, profiled with
``--cache-control all``: the caches flushed and invalidated before the kernel). The model
predicts the GPU's work and adds the launch costs an event pair counts on an idle GPU
(``launch_gap_us`` + ``launch_call_us``, models/event_timing.py eq. (E1)-(E3); a repetition's
first launch is on an idle GPU after the reset's ``cudaDeviceSynchronize``). So for a kernel
launched once a run

    extra = event median - (launch_gap_us + launch_call_us) - ncu duration          (per row)

is what the event pair holds that neither the kernel as ncu times it nor the model's launch
costs explain (less ``upload_launch_us`` when the reset ends with a large pageable upload).
ncu locks the SM clock (``sm__cycles_elapsed.avg / gpu__time_duration``, about 1.59 GHz) where
the events ran at 1.98 GHz, so ``extra`` is read only on launches whose time does not follow
the SM clock: the DRAM- or L2-bound ones (``dram__throughput`` or ``lts__throughput`` of at
least ``--busy`` percent); ``--sm-bound`` lists the others with ncu's time scaled to the
events' clock (``extra`` as if the launch's time followed the SM clock: right for
compute-bound launches, too low for latency-bound ones). The port's reset (its last call) is
read as port_resets.py does.

    python validation/event_vs_ncu.py [--busy 75] [--sm-bound] [FOLDER ...]

Needs no GPU; prints one Markdown table, then the median extra by the reset's last call.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from ncu_csv import read_ncu
from port_resets import reset_state

ROOT = Path(__file__).resolve().parent
MEASURED = ROOT / "measured"
H100 = ROOT.parent / "cgpredict" / "devices" / "h100.toml"
CLOCK_GHZ = 1.98  # the SM clock of the event-timed runs (gpu.csv of each lease)
SRC = [ROOT / "cuda", ROOT / "cuda" / "blind", ROOT / "cuda" / "user"]
METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg",
           "dram__throughput.avg.pct_of_peak_sustained_elapsed",
           "lts__throughput.avg.pct_of_peak_sustained_elapsed",
           "dram__bytes_read.sum", "dram__bytes_write.sum")


LAUNCH_FIELDS = ("launch_gap_us", "launch_call_us", "upload_launch_us", "upload_launch_min_bytes")


def device_launch() -> dict[str, float]:
    """The H100 device file's LAUNCH_FIELDS (its first, numeric, assignment of each)."""
    vals: dict[str, float] = {}
    for line in H100.read_text().splitlines():
        key, _, rest = line.partition("=")
        key = key.strip()
        if key in LAUNCH_FIELDS and key not in vals:
            vals[key] = float(rest.split("#")[0])
    return vals


def ncu_launches(path: Path) -> dict[str, list[dict[str, float]]]:
    """Per kernel name, each profiled launch's METRICS (base units) from a raw ncu CSV."""
    out: dict[str, list[dict[str, float]]] = {}
    for launch in read_ncu(path):
        grid = launch.cells.get("Grid Size")
        vals = {"blocks": grid_blocks(grid) if grid is not None else 0.0}
        vals.update((m, launch.metrics[m]) for m in METRICS if m in launch.metrics)
        out.setdefault(launch.kernel, []).append(vals)
    return out


def grid_blocks(text: str) -> float:
    """The blocks of a launch from ncu's "Grid Size" cell, "(131072, 1, 1)"; 0 if unreadable."""
    n = 1.0
    for part in text.strip("() ").split(","):
        try:
            n *= float(part)
        except ValueError:
            return 0.0
    return n


def port_source(kernel: str) -> str | None:
    """The port's .cu text, searched in the ports' folders."""
    for d in SRC:
        f = d / f"{kernel}.cu"
        if f.exists():
            return f.read_text()
    return None


def rows_of(folder: Path, busy: float, every: bool = False) -> list[dict]:
    """One row per file entry of ``folder`` whose run's first launch (a kernel launched once
    a run) has an ncu profile there; with ``every``, one per launch of the run that has one
    (``index`` > 0: a later launch, queued behind the one before it, whose event pair the
    model charges ``launch_gap_us`` alone, eq. (E2))."""
    dev = device_launch()
    gap, call = dev["launch_gap_us"], dev["launch_call_us"]
    out = []
    for jf in sorted(folder.glob("*.json")):
        try:
            data = json.loads(jf.read_text())
        except (OSError, ValueError):
            continue
        for e in data.get("results", []) if isinstance(data, dict) else []:
            res, cnt = e.get("result") or {}, e.get("counters") or {}
            if not cnt.get("csv") or not (folder / cnt["csv"]).exists():
                continue
            prof = ncu_launches(folder / cnt["csv"])
            src = port_source(e.get("kernel", ""))
            reset, nbytes = reset_state(src, e.get("work_sizes", {})) if src else ("?", None)
            launches = res.get("launches", [])
            for index, k in enumerate(launches if every else launches[:1]):
                # the run's first launch: an idle GPU; a later one is queued (gap alone)
                if k.get("count") != 1 or k["name"] not in prof:
                    continue
                p = prof[k["name"]][0]
                t_ns = p.get("gpu__time_duration.sum")
                if not t_ns:
                    continue
                dram = p.get(METRICS[2], 0.0)
                lts = p.get(METRICS[3], 0.0)
                large = nbytes is None or nbytes >= dev["upload_launch_min_bytes"]
                late = dev["upload_launch_us"] if reset == "upload" and large else 0.0
                late, first_call = (late, call) if index == 0 else (0.0, 0.0)
                extra = k["median_ms"] * 1e3 - gap - first_call - late - t_ns * 1e-3
                ghz = p.get(METRICS[1], 0.0) / t_ns
                scaled = extra + t_ns * 1e-3 * (1 - ghz / CLOCK_GHZ) if ghz else extra
                out.append(dict(where=f"{folder.name}/{jf.stem}", kernel=e["kernel"],
                                name=k["name"], block=e.get("config", "?"),
                                event_us=k["median_ms"] * 1e3, ncu_us=t_ns * 1e-3,
                                ghz=ghz, dram=dram, lts=lts, scaled=scaled,
                                wr_mb=p.get(METRICS[5], 0.0) / 1e6, reset=reset,
                                late=late, extra=extra, bound=max(dram, lts) >= busy,
                                blocks=p.get("blocks", 0.0), work=e.get("work_sizes", {}),
                                port=data.get("port", "plain"), index=index,
                                costs=gap + first_call + late,
                                single=len(launches) == 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--busy", type=float, default=75.0,
                    help="dram or lts throughput (%%) above which a launch is clock-free")
    ap.add_argument("--sm-bound", action="store_true",
                    help="list the other launches, with ncu's time scaled to 1.98 GHz")
    args = ap.parse_args()
    folders = args.folders or sorted({j.parent for j in MEASURED.rglob("*.json")})
    rows = [r for f in folders for r in rows_of(f, args.busy)]
    print("| lease/file | kernel | block | event us | ncu us | ncu GHz | dram % | lts % |"
          " reset | late us | extra us |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        if r["bound"] == args.sm_bound:
            continue
        if args.sm_bound:
            r = dict(r, extra=r["scaled"])
        print(f"| {r['where']} | {r['name']} | {r['block']} | {r['event_us']:.1f} |"
              f" {r['ncu_us']:.1f} | {r['ghz']:.2f} | {r['dram']:.1f} | {r['lts']:.1f} |"
              f" {r['reset']} | {r['late']:.1f} | {r['extra']:+.1f} |")
    by: dict[str, list[float]] = {}
    for r in rows:
        if r["bound"] != args.sm_bound:
            by.setdefault(r["reset"], []).append(r["scaled"] if args.sm_bound else r["extra"])
    for reset, xs in sorted(by.items()):
        print(f"\n{reset}: {len(xs)} launches, extra median {statistics.median(xs):+.1f} us,"
              f" range {min(xs):+.1f} .. {max(xs):+.1f}")


if __name__ == "__main__":
    main()
