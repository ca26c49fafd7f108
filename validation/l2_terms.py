"""A launch's L2 terms, the model's against Nsight Compute's, kernel by kernel (round 13, t3).

    python validation/l2_terms.py polybench_c/fdtd2d.c 32x8 \\
        validation/measured/h100-session-2026-11-27b/counters/plain-ncu/fdtd2d-32x8.csv

Runs ``cgpredict run FILE --device h100 --block B --json`` and prints per kernel the L2 read
requests, the L2 bound and the DRAM bound (us at the H100's 1.98 GHz) beside ncu's read
requests, ``gpu__time_duration``, and the busiest L2 unit's time at 100 % of its peak
(``lts__throughput`` x the duration): an L2 rate in the bounds' max can reach the measured
time only where ncu's busiest-unit time does (docs/validation.md)."""

from __future__ import annotations

import json
import subprocess
import sys

from ncu_csv import read_ncu

CLOCK_GHZ = 1.98


def _ncu(path: str) -> dict[str, dict[str, float]]:
    """Per kernel name (before its argument list): the counters this script reads."""
    want = ("lts__t_requests_srcunit_tex_op_read.sum", "gpu__time_duration.sum",
            "lts__throughput.avg.pct_of_peak_sustained_elapsed")
    return {launch.kernel: {k: launch.metrics[k] for k in want} for launch in read_ncu(path)}


def main(argv: list[str]) -> int:
    """Print the table; 2 with a one-line usage error."""
    if len(argv) != 3:
        print("usage: l2_terms.py FILE BLOCK NCU_CSV", file=sys.stderr)
        return 2
    src, block, ncu_path = argv
    ncu = _ncu(ncu_path)
    run = subprocess.run([sys.executable, "-m", "cgpredict", "run", src, "--device", "h100",
                          "--block", block, "--json"], capture_output=True, text=True,
                         check=True)
    print("| kernel | requests model / ncu (M) | L2 bound us | DRAM bound us "
          "| ncu time us | ncu busiest L2 unit at 100 % us |")
    print("|---|---|---|---|---|---|")
    for k in json.loads(run.stdout)["kernels"]:
        b, m = k["result"]["bounds"], ncu.get(k["name"], ncu.get(k["name"] + "_kernel"))
        if m is None:
            continue
        dur = m["gpu__time_duration.sum"] / 1e3
        busy = dur * m["lts__throughput.avg.pct_of_peak_sustained_elapsed"] / 100
        print(f"| {k['name']} | {b['l2_requests'] / 1e6:.3f} / "
              f"{m['lts__t_requests_srcunit_tex_op_read.sum'] / 1e6:.3f} | "
              f"{b['l2_cycles'] / CLOCK_GHZ / 1e3:.1f} | "
              f"{b['dram_cycles'] / CLOCK_GHZ / 1e3:.1f} | "
              f"{dur:.1f} | {busy:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
