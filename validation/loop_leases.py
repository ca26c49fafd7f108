#!/usr/bin/env python3
"""Host loops on two leases (issue 24, fourteenth round, t2): the host's period that
loop_probe measured on each, and wavefront's large launches on the GPU.

1. ``probes``: loop_probe.cu ran on the lease of 2026-11-27 (session 45, beside the
   worst-rows lease's second pass) and on the lease of 2026-11-28 (session 48, beside its
   host-clocked loops). Per lease and kernel (heat1d's, wavefront's, an empty one; medians of
   7 repetitions, us a launch, ``ubench/loop_probe_read.py``): the event pairs of the ports'
   loop (``pair``, the floor D that ``loop_launch_us`` stands for, eq. (E4m)), the host clock
   around it (``period``) and the launch call without events (``call``).
2. ``diagonals``: Nsight Compute (``--cache-control none``, the loop's own state) of
   wavefront's launches 998-1000 and 2040-2042 at 128x1 and 1024x1 (lease of 2026-11-28):
   ``gpu__time_duration``, the busiest SM's active cycles and the profiled clock (elapsed
   cycles over the duration); the active cycles at 1980 MHz (the timed runs' clock) beside
   the model's kernel time of a launch of the same grid (``cgpredict`` on the blind source,
   the distinct launches of that block count; ``--no-model`` leaves it out).
3. ``distinct``: the model's event-timed loop of wavefront with each distinct launch's work
   (eqs. (E1)-(E3) over the launches in issue order, diagonals growing then shrinking)
   against the loop's mean work, which ``event_timed_ms`` takes.

4. ``--periods``: every host-loop row of heat1d, wavefront and 3DCONV that three leases
   measured (the committed sets, the lease of 2026-11-28's ``loops-measured/`` and the
   worst-rows pass), predicted at each host period P (the probes' D, 4.7 and between): the
   absolute errors summed per lease, a check that no one lease's host serves the others;
   and the rows within the range eq. (E4s) gives (``loop_launch_lo_us``-``_hi_us``).

``python validation/loop_leases.py [--no-model] [--periods]`` from the repository root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "ubench"))

from loop_launches import MEASURED, ncu_rows  # noqa: E402
from loop_probe_read import read  # noqa: E402

#: lease -> its loop_probe output, under validation/measured
PROBES = {
    "2026-11-27 (session 45)": "h100-worst-2026-11-27/ubench/loop_probe.json",
    "2026-11-28 (session 48)": "h100-lease-2026-11-28/loops/loop_probe.json",
}
LOOPS = MEASURED / "h100-lease-2026-11-28" / "loops"
CLOCK_MHZ = 1980.0  # the timed runs' SM clock (gpu.csv, clock_sm_max)
SOURCE = Path("examples/blind/wavefront.c")


@dataclass(frozen=True)
class Probe:
    """One lease's loop_probe figures for one kernel, us a launch."""

    lease: str
    kernel: str
    pair: float
    period: float
    call: float


@dataclass(frozen=True)
class Diagonal:
    """One profiled wavefront launch (Nsight Compute), with the model's kernel time."""

    block: str
    skip: int
    blocks: int
    duration_us: float
    active_cycles: float
    elapsed_cycles: float
    model_us: float | None = None

    @property
    def clock_mhz(self) -> float:
        """The profiled SM clock: elapsed cycles over the launch's duration."""
        return self.elapsed_cycles / self.duration_us

    @property
    def active_us(self) -> float:
        """The busiest SM's active cycles at the timed runs' clock, in us."""
        return self.active_cycles / CLOCK_MHZ


def probes() -> list[Probe]:
    """Each lease's loop_probe figures (heat, wavefront, empty)."""
    out = []
    for lease, path in PROBES.items():
        data = json.loads((MEASURED / path).read_text())
        for kernel in ("heat", "wavefront", "empty"):
            p = read(data, kernel)
            out.append(Probe(lease=lease, kernel=kernel, pair=p.pair, period=p.period,
                             call=p.call))
    return out


def diagonals() -> list[Diagonal]:
    """The profiled middle diagonals of wavefront (one Diagonal a launch)."""
    out = []
    for path in sorted(LOOPS.glob("wavefront-*-skip*.csv")):
        _, block, skip = path.stem.split("-")
        for r in ncu_rows(path):
            out.append(Diagonal(block=block, skip=int(skip.removeprefix("skip")),
                                blocks=int(r["launch__grid_size"]),
                                duration_us=r["gpu__time_duration.sum"] / 1e3,
                                active_cycles=r["sm__cycles_active.max"],
                                elapsed_cycles=r["sm__cycles_elapsed.max"]))
    return out


def model_launches(block: str) -> list[tuple[int, float, float]]:
    """(blocks, kernel us, work-size launches it stands for) of each distinct wavefront
    launch the model evaluates at ``block``."""
    from cgpredict.api import predict
    from cgpredict.devices import load_device
    from cgpredict.models import predict as model

    dev = load_device("h100")
    k = predict(SOURCE, block=block, device="h100").kernels[0]
    return [(p.blocks, model(p, dev, "cgpredict").time_ms * 1e3, w)
            for p, w in k.launch_profiles]


def with_model(diags: list[Diagonal], launches: dict[str, list]) -> list[Diagonal]:
    """The diagonals with the model's kernel time of a launch of the same grid (the median
    over the distinct launches of that block count)."""
    out = []
    for d in diags:
        same = [t for b, t, _ in launches.get(d.block, []) if b == d.blocks]
        m = statistics.median(same) if same else None
        out.append(Diagonal(**{**d.__dict__, "model_us": m}))
    return out


def issue_works(launches: list[tuple[int, float, float]], gap_us: float) -> list[float]:
    """Every launch's w (kernel + ``launch_gap_us``, us) in issue order: each distinct
    launch stands for its diagonals on both sides of the middle, so half of its launches
    come as the diagonals grow (ascending work), half as they shrink (descending)."""
    steps = sorted(launches, key=lambda x: (x[0], x[1]))
    half = [(t + gap_us, w / 2) for _, t, w in steps]
    up = [t for t, n in half for _ in range(round(n))]
    return up + up[::-1]


def distinct_pair_us(launches: list[tuple[int, float, float]]) -> tuple[float, float, int]:
    """(model pair a launch with each distinct launch's w, with the loop's mean w, launches
    whose own w exceeds the host's period ``loop_launch_us``): eqs. (E1)-(E3) in us."""
    from cgpredict.devices import load_device
    from cgpredict.models.event_timing import event_waits

    dev = load_device("h100")
    works = issue_works(launches, dev.launch_gap_us)
    n = len(works)
    each = (sum(works) * 1e-3 + event_waits([w * 1e-3 for w in works], dev).host_ms) / n
    mean = sum(works) / n
    flat = (mean * n * 1e-3 + event_waits([mean * 1e-3] * n, dev).host_ms) / n
    above = sum(1 for w in works if w > dev.loop_launch_us)
    return each * 1e3, flat * 1e3, above


#: the measured files of each lease's host-loop rows (under validation/measured)
ROW_FILES = {
    "committed sets": tuple(f"nvidia-h100-80gb-hbm3{s}.json" for s in (
        "-blind", "-blind-restrict", "-blind-blocks", "", "-restrict", "-blocks")),
    "2026-11-28": tuple(f"h100-lease-2026-11-28/loops-measured/{f}.json"
                        for f in ("blind", "blind-restrict", "corpus")),
    "worst-rows 2026-11-27": ("h100-worst2-2026-11-27/blind.json",),
}
SOURCES = {"heat1d": "examples/blind/heat1d.c", "wavefront": "examples/blind/wavefront.c",
           "3dconv": "polybench_c/3dconv.c"}
PERIODS = (4.34, 4.7, 5.0, 5.29, 6.24)


def loop_rows() -> tuple[list[tuple[str, tuple, float]], dict[tuple, list]]:
    """(lease, row key, measured ms) of every host-loop row of ``ROW_FILES``, and each row
    key's kernels as (kernel_ms, launches), predicted once a key."""
    from cgpredict.api import predict

    kernels: dict[tuple, list] = {}
    rows = []
    for lease, files in ROW_FILES.items():
        for f in files:
            data = json.loads((MEASURED / f).read_text())
            port = data.get("port", "plain")
            for e in data["results"]:
                if e["kernel"] not in SOURCES:
                    continue
                key = (e["kernel"], e["config"], port, tuple(sorted(e["work_sizes"].items())))
                if key not in kernels:
                    r = predict(SOURCES[e["kernel"]], block=e["config"], device="h100",
                                sizes=e["work_sizes"], port=port)
                    kernels[key] = [(k.kernel_ms, k.launches) for k in r.kernels]
                rows.append((lease, key, e["result"]["total_ms"]))
    return rows, kernels


def period_errors(rows: list, kernels: dict) -> dict[float, dict[str, tuple[int, float]]]:
    """P -> lease -> (rows, summed absolute error %) of the rows predicted with
    ``loop_launch_us`` = P (eqs. (E1)-(E3))."""
    import dataclasses

    from cgpredict.devices import load_device
    from cgpredict.models.event_timing import event_timed_ms

    dev = load_device("h100")
    out: dict[float, dict[str, tuple[int, float]]] = {}
    for p in PERIODS:
        at = dataclasses.replace(dev, loop_launch_us=p)
        for lease, key, ms in rows:
            err = abs(event_timed_ms(kernels[key], at)[0] / ms - 1) * 100
            n, total = out.setdefault(p, {}).get(lease, (0, 0.0))
            out[p][lease] = (n + 1, total + err)
    return out


def in_range(rows: list, kernels: dict) -> dict[str, tuple[int, int, list[str]]]:
    """lease -> (rows, rows within eq. (E4s)'s range, the others as 'kernel block: where')."""
    from cgpredict.devices import load_device
    from cgpredict.models.event_timing import host_paced_range

    dev = load_device("h100")
    out: dict[str, tuple[int, int, list[str]]] = {}
    for lease, key, ms in rows:
        lo, hi = host_paced_range(kernels[key], dev)
        n, inside, off = out.get(lease, (0, 0, []))
        ok = lo <= ms <= hi
        if not ok:
            off = off + [f"{key[0]} {key[1]} {key[2]}: {ms:.3f} ({lo:.3f}-{hi:.3f})"]
        out[lease] = (n + 1, inside + ok, off)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-model", action="store_true", help="measured figures only")
    ap.add_argument("--periods", action="store_true", help="the rows' errors at each P")
    args = ap.parse_args(argv)
    if args.periods:
        rows, kernels = loop_rows()
        for p, leases in period_errors(rows, kernels).items():
            cells = ", ".join(f"{k} {n} rows {t:.0f}" for k, (n, t) in leases.items())
            print(f"P = {p}: {cells}; all {sum(t for _, t in leases.values()):.0f} points")
        for lease, (n, inside, off) in in_range(rows, kernels).items():
            print(f"{lease}: {inside} of {n} rows within (E4s)'s range; outside: "
                  + ("; ".join(off) or "none"))
        return
    print("| lease | kernel | pair (D) | period | call |\n|---|---|---:|---:|---:|")
    for p in probes():
        print(f"| {p.lease} | {p.kernel} | {p.pair:.2f} | {p.period:.2f} | {p.call:.2f} |")
    launches = {} if args.no_model else {b: model_launches(b) for b in ("128x1", "1024x1")}
    print("\n| block | launch | blocks | ncu us | profiled MHz | busiest SM active cycles "
          "| active us at 1980 MHz | model kernel us |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for d in with_model(diagonals(), launches):
        m = "-" if d.model_us is None else f"{d.model_us:.2f}"
        print(f"| {d.block} | {d.skip} | {d.blocks} | {d.duration_us:.2f} | {d.clock_mhz:.0f} | "
              f"{d.active_cycles:.0f} | {d.active_us:.2f} | {m} |")
    for block, ls in launches.items():
        each, flat, above = distinct_pair_us(ls)
        n = round(sum(w for *_, w in ls))
        print(f"\n{block}: model pair {flat:.2f} us a launch with the mean w ({flat * n / 1e3:.2f}"
              f" ms), {each:.2f} with each distinct launch's w ({each * n / 1e3:.2f} ms); "
              f"{above} of {n} launches above loop_launch_us; largest kernel "
              f"{max(t for _, t, _ in ls):.2f} us")


if __name__ == "__main__":
    main()
