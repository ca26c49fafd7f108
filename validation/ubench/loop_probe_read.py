#!/usr/bin/env python3
"""Reads loop_probe.cu's JSON (issue t5): per kernel the ports' pair a launch, the GPU's
queued pair ``w``, the host's period ``P`` (host clock around the queued loop) and eq. (E4)'s
max(w, min(P, d' + w)) with d' = launch_call_us (4.35 us on the H100).
``python validation/ubench/loop_probe_read.py OUT/loop_probe.json``."""

from __future__ import annotations

import json
import statistics
import sys

CALL_US = 4.35  # h100.toml launch_call_us


def main(path: str) -> None:
    data = json.loads(open(path).read())
    for kernel in ("heat", "wavefront", "empty"):
        n = data[f"{kernel}_port"]["launches"]
        per = {m: (statistics.median(data[f"{kernel}_{m}"]["total_us"]) / n,
                   statistics.median(data[f"{kernel}_{m}"]["host_loop_us"]) / n)
               for m in ("port", "queued", "bare", "bareq")}
        w, period = per["queued"]
        e4 = max(w, min(period, CALL_US + w))
        print(f"{kernel}: {n} launches; port pair {per['port'][0]:.2f} us, (E4) {e4:.2f} "
              f"(queued w {w:.2f}, host period P {period:.2f}); no per-launch events: "
              f"{per['bare'][0]:.2f} (queued {per['bareq'][0]:.2f})")


if __name__ == "__main__":
    main(sys.argv[1])
