#!/usr/bin/env python3
"""Eq. (Q1w) (round 16, t7): how a warp's round of DRAM loads grows with the warps walking at
once, read from the lease's cold ``dram_spread`` runs alone (no kernel time).

    python validation/q1w_walkers.py [--channels C]

With the lone warp's (Q1r) figures held (issue and sigma of the 32-lane W = 1 run), each run
(lanes, W) leaves one number free, its lift: the mean over K = 1..16 of trip - 685.1 -
issue x K - sigma x z(K). The loaded lift is the mean of the saturated runs' (W = 32, 64,
132; 32 lanes); the table shows each W's share of the rise against 1 - (1 - 1/C)^(W - 1),
C the H100's memory controllers (10, published), and the rms of every run's trips
with and without (Q1w). Figures: docs/validation.md, "(Q1w) the walkers' loaded round trip".
"""

from __future__ import annotations

import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validation"))

from q1_latest_return import derive_spread, spread_trips  # noqa: E402

from cgpredict.dram_rounds import expected_max_normal as z  # noqa: E402
from cgpredict.dram_rounds import walker_share  # noqa: E402

DRAM_TOTAL = 685.1  # the model's L2 + DRAM latency, cycles
SATURATED = (32, 64, 132)


def run_lift(trip: dict[int, float], issue: float, sigma: float) -> float:
    """A run's lift with ``issue`` and ``sigma`` held: its mean residual over K."""
    return statistics.fmean(t - DRAM_TOTAL - issue * k - sigma * z(k) for k, t in trip.items())


def main(argv: list[str]) -> None:
    """Print the lone figures, the loaded lift and the table of runs."""
    try:
        channels = float(argv[argv.index("--channels") + 1]) if "--channels" in argv else 10.0
    except (IndexError, ValueError):
        raise SystemExit("q1w_walkers: --channels takes a number") from None
    runs = spread_trips()
    sigma, lone, issue = derive_spread(runs[(32, 1)])
    loaded = statistics.fmean(run_lift(runs[(32, w)], issue, sigma) for w in SATURATED)
    print(f"lone warp (32 lanes, W = 1): issue {issue:.2f}, sigma {sigma:.2f}, lift {lone:.2f}")
    lone_mean = run_lift(runs[(32, 1)], issue, sigma)
    print(f"loaded lift (32 lanes, W = {', '.join(map(str, SATURATED))}): {loaded:.2f}, "
          f"{loaded - lone_mean:.2f} above the lone run's {lone_mean:.2f} read the same way; "
          f"the device's: {lone:.2f} + {loaded - lone_mean:.2f} = {lone + loaded - lone_mean:.2f}")
    print("| lanes | W | lift | share of the rise | 1 - (1 - 1/C)^(W - 1) "
          "| rms lone | rms (Q1w) |")
    print("|---|---|---|---|---|---|---|")
    for (lanes, w), trip in sorted(runs.items(), key=lambda r: (-r[0][0], r[0][1])):
        base = runs[(lanes, 1)]
        lone_l = run_lift(base, issue, sigma)
        top = statistics.fmean(run_lift(runs[(lanes, s)], issue, sigma) for s in SATURATED)
        lift = run_lift(trip, issue, sigma)
        share = walker_share(w, channels)
        model_l = lone_l + (top - lone_l) * share

        def rms(lf: float) -> float:
            return statistics.fmean((t - DRAM_TOTAL - lf - issue * k - sigma * z(k)) ** 2
                                    for k, t in trip.items()) ** 0.5

        print(f"| {lanes} | {w} | {lift:.1f} | {(lift - lone_l) / (top - lone_l):.2f} "
              f"| {share:.2f} | {rms(lone_l):.1f} | {rms(model_l):.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
