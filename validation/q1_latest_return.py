#!/usr/bin/env python3
"""What-if of eq. (Q1r) (round 14, t7): a warp's round of D DRAM loads in flight waits for
the latest of its D returns over a loop load's measured one-load trip, in place of (Q1)'s
gap a sector. Derives sigma and the lift from the committed ``dram_inflight`` outputs, sets
them on the device's OpLatencies (dram_sigma, dram_lift; dram_gap 0) and runs the CLI.

    python validation/q1_latest_return.py --derive
    python validation/q1_latest_return.py [--sigma S] [--lift L] -- validate --device h100 ...

Without the ``--`` arguments it prints the derivation. Figures: docs/validation.md,
"(Q1r): the latest of K returns, as a what-if (round 14, t7)".
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


def patch(sigma: float, lift: float, issue: float) -> None:
    """Give every device's OpLatencies eq. (Q1r)'s sigma, lift and issue, (Q1)'s gap 0."""
    from cgpredict.devices import GPUDevice

    base = GPUDevice.op_latencies.fget

    def op_latencies(self):  # noqa: ANN001, ANN202
        lat = base(self)
        if not lat.dram_gap:  # only a device that (Q1) calibrated (the H100) gets the form
            return lat
        return dataclasses.replace(lat, dram_gap=0.0, dram_sigma=sigma, dram_lift=lift,
                                   dram_issue=issue)

    GPUDevice.op_latencies = property(op_latencies)


def main(argv: list[str]) -> None:
    """Print the derivation, or run the CLI with the form patched in."""
    sys.path.insert(0, str(ROOT))
    sigma, lift, issue = derive(trips())
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
