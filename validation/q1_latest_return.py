#!/usr/bin/env python3
"""What-if of eq. (Q1r) (round 14, t7): a warp's round of D DRAM loads in flight waits for
the latest of its D returns over a loop load's measured one-load trip, in place of (Q1)'s
gap a sector. Derives sigma and the lift from the committed ``dram_inflight`` outputs, sets
them on the device's OpLatencies (dram_sigma, dram_lift; dram_gap 0) and runs the CLI.

    python validation/q1_latest_return.py --derive
    python validation/q1_latest_return.py --spread [LANES,W] [--table] [-- ...]
    python validation/q1_latest_return.py [--sigma S] [--lift L] -- validate --device h100 ...

Without the ``--`` arguments it prints the derivation. Figures: docs/validation.md,
"(Q1r): the latest of K returns, as a what-if (round 14, t7)" and "(Q1r) from the lease's
cold spread (round 14, t8)": ``--spread [LANES,W]`` fits the three figures to one run of
h100-lease-2026-11-28/spread/ (issue and sigma both free), ``--table`` prints every run.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
UBENCH = ROOT / "validation/measured/h100-worst-2026-11-27/ubench/dram_inflight.json"
ROW_MODES = ("colsum", "rows+128", "64warps")  # rows 8 KB / 8320 B apart, 8 or 64 SMs
L2_MODE = "1warp"  # 2 MiB footprint: the L2 holds it, the trip's own issue and arithmetic
SPREAD = ROOT / "validation/measured/h100-lease-2026-11-28/spread/dram_spread.txt"
_SPREAD_LINE = re.compile(r"^lanes\s+(\d+)\s+W\s+(\d+)\s+K\s+(\d+).*cyc_trip@1980\s+([\d.]+)")
_LINE = re.compile(r"^(\S+)\s+K=\s*(\d+).*cyc_trip@1980\s+([\d.]+)")


def trips(path: pathlib.Path = UBENCH) -> dict[str, dict[int, float]]:
    """{mode: {K: cycles a trip at 1980 MHz}} from the micro-benchmark's output."""
    out: dict[str, dict[int, float]] = {}
    for line in path.read_text().splitlines():
        m = _LINE.match(line)
        if m:
            out.setdefault(m.group(1), {})[int(m.group(2))] = float(m.group(3))
    return out


def derive(t: dict[str, dict[int, float]],
           dram_total: float = 685.1) -> tuple[float, float, float]:
    """(sigma, lift, issue). issue: the L2-resident run's increment a load over K = 1..16
    (least squares through K = 1: the round's own slot and add a load); sigma: the least-
    squares fit of each row mode's DRAM part (its increment over K = 1 less the L2 run's)
    to z(K), K = 2..16, median over the row modes; lift: the median K = 1 row trip less one
    load's issue less the model's L2 + DRAM latency ``dram_total``."""
    from cgpredict.dram_rounds import expected_max_normal as z

    l2 = t[L2_MODE]
    ks = [k for k in sorted(l2) if 2 <= k <= 16]
    issue = sum((l2[k] - l2[1]) * (k - 1) for k in ks) / sum((k - 1) ** 2 for k in ks)
    sigmas = []
    for mode in ROW_MODES:
        part = [(t[mode][k] - t[mode][1]) - (l2[k] - l2[1]) for k in ks]
        sigmas.append(sum(p * z(k) for p, k in zip(part, ks)) / sum(z(k) ** 2 for k in ks))
    lift = statistics.median(t[m][1] for m in ROW_MODES) - issue - dram_total
    return statistics.median(sigmas), lift, issue


def spread_trips(path: pathlib.Path = SPREAD) -> dict[tuple[int, int], dict[int, float]]:
    """{(lanes, W): {K: cycles a trip at 1980 MHz}} from dram_spread's output (L2 cold)."""
    out: dict[tuple[int, int], dict[int, float]] = {}
    for line in path.read_text().splitlines():
        m = _SPREAD_LINE.match(line)
        if m:
            out.setdefault((int(m.group(1)), int(m.group(2))), {})[int(m.group(3))] = float(
                m.group(4))
    return out


def derive_spread(trip: dict[int, float],
                  dram_total: float = 685.1) -> tuple[float, float, float]:
    """(sigma, lift, issue) of eq. (Q1r) from one dram_spread configuration alone: the least-
    squares fit of its increments over K = 1 (K = 2, 4, 8, 16) to issue x (K - 1) + sigma x
    z(K), both free; lift: its K = 1 trip less one load's issue less ``dram_total``."""
    from cgpredict.dram_rounds import expected_max_normal as z

    ks = [k for k in sorted(trip) if k >= 2]
    inc = [trip[k] - trip[1] for k in ks]
    a11 = sum((k - 1) ** 2 for k in ks)
    a12 = sum((k - 1) * z(k) for k in ks)
    a22 = sum(z(k) ** 2 for k in ks)
    b1 = sum(d * (k - 1) for d, k in zip(inc, ks))
    b2 = sum(d * z(k) for d, k in zip(inc, ks))
    det = a11 * a22 - a12 * a12
    issue, sigma = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    return sigma, trip[1] - issue - dram_total, issue


def form_rms(trip: dict[int, float]) -> dict[str, float]:
    """rms (cycles) over K = 2..16 of three forms of a round's increment over K = 1, each
    least-squares on ``trip``: (Q1) a gap a load g x (K - 1); (Q1r) with t7's issue 12.2 and
    sigma x z(K); (Q1r) with issue and sigma both free."""
    from cgpredict.dram_rounds import expected_max_normal as z

    ks = [k for k in sorted(trip) if k >= 2]
    inc = {k: trip[k] - trip[1] for k in ks}
    g = sum(inc[k] * (k - 1) for k in ks) / sum((k - 1) ** 2 for k in ks)
    s7 = sum((inc[k] - 12.2 * (k - 1)) * z(k) for k in ks) / sum(z(k) ** 2 for k in ks)
    sigma, lift, issue = derive_spread(trip)
    forms = {"gap": lambda k: g * (k - 1), "z, issue 12.2": lambda k: 12.2 * (k - 1) + s7 * z(k),
             "z, issue free": lambda k: issue * (k - 1) + sigma * z(k)}
    return {n: (sum((inc[k] - f(k)) ** 2 for k in ks) / len(ks)) ** 0.5 for n, f in forms.items()}


def spread_table(pick: tuple[int, int] = (32, 1)) -> str:
    """Markdown: each (lanes, W) run's trips against eq. (Q1r) with ``pick``'s figures
    (685.1 + issue + queued), and each run's rms of the three forms (form_rms)."""
    from cgpredict.dram_rounds import latest_return

    runs = spread_trips()
    sigma, lift, issue = derive_spread(runs[pick])
    out = ["| lanes | W | " + " | ".join(f"K = {k}" for k in sorted(runs[pick]))
           + " | rms gap | rms z, 12.2 | rms z, free |", "|---" * 10 + "|"]
    for (lanes, w), trip in sorted(runs.items(), key=lambda r: (-r[0][0], r[0][1])):
        cells = [f"{685.1 + issue + latest_return(k, lift, sigma, issue):.0f} / {t:.1f}"
                 for k, t in sorted(trip.items())]
        rms = " | ".join(f"{v:.1f}" for v in form_rms(trip).values())
        out.append(f"| {lanes} | {w} | " + " | ".join(cells) + f" | {rms} |")
    return "\n".join(out)


def patch(sigma: float, lift: float, issue: float) -> None:
    """Give every device's OpLatencies eq. (Q1r)'s sigma, lift and issue, (Q1)'s gap 0."""
    from cgpredict.devices import GPUDevice

    base = GPUDevice.op_latencies.fget

    def op_latencies(self):  # noqa: ANN001, ANN202
        lat = base(self)
        if not (lat.dram_gap or lat.dram_sigma):  # only a device with (Q1) or (Q1r): the H100
            return lat
        return dataclasses.replace(lat, dram_gap=0.0, dram_sigma=sigma, dram_lift=lift,
                                   dram_issue=issue)

    GPUDevice.op_latencies = property(op_latencies)


def main(argv: list[str]) -> None:
    """Print the derivation, or run the CLI with the form patched in."""
    sys.path.insert(0, str(ROOT))
    sigma, lift, issue = derive(trips())
    if "--spread" in argv:  # the lease's cold run, 32 lanes and one warp unless LANES,W
        at = argv.index("--spread")
        pick = argv[at + 1] if at + 1 < len(argv) and "," in argv[at + 1] else "32,1"
        argv = argv[:at] + argv[at + 1 + (pick in argv[at + 1:at + 2]):]
        try:
            key = tuple(int(x) for x in pick.split(","))
            sigma, lift, issue = derive_spread(spread_trips()[key])
        except (ValueError, KeyError):
            raise SystemExit(f"q1_latest_return: no dram_spread run {pick!r}") from None
    if "--table" in argv:
        print(spread_table())
        return
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    opts = argv[:argv.index("--")] if "--" in argv else argv
    try:
        given = {n: float(opts[opts.index(n) + 1]) for n in ("--sigma", "--lift", "--issue")
                 if n in opts}
    except (IndexError, ValueError):
        raise SystemExit("q1_latest_return: --sigma, --lift and --issue take a number") from None
    sigma = given.get("--sigma", sigma)
    lift, issue = given.get("--lift", lift), given.get("--issue", issue)
    print(f"(Q1r) sigma {sigma:.1f}, lift {lift:.1f}, issue {issue:.1f} cycles", file=sys.stderr)
    if not args:
        return
    patch(sigma, lift, issue)
    from cgpredict.cli import entry

    sys.argv = ["cgpredict", *args]
    entry()


if __name__ == "__main__":
    main(sys.argv[1:])
