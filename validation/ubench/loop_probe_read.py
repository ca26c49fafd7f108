#!/usr/bin/env python3
"""Reads loop_probe.cu's JSON (issues t5, t3 of round 16): what a host loop of short launches
costs under the ports' cudaEvent pairs, per kernel (medians over the 7 repetitions, per launch):

* ``pair``: the event pairs' sum in the ports' loop (``port`` mode, the GPU idle at the start);
* ``period``: the host clock around that loop, the host's period of one iteration (event,
  launch, event);
* ``idle``: period - pair, the time between a launch's second event and the next launch's
  first that no pair counts (the GPU waits for the host there);
* ``queued`` head / tail: the pairs of the same loop queued behind a spin kernel, the first
  191 and the last 9 (the GPU's own time a launch with its events, in a deep and a shallow
  queue); ``first``: the first pair of a repetition (an idle GPU, a launch call after a sync);
* ``call``: the host clock around the loop without events (``bare``: the launch call's
  period), ``bareq``: the GPU's time a launch queued back to back without events.

The old reading of eq. (E4), max(w, min(P, d' + w)) with P the host's period and d' =
launch_call_us (4.35 us on the H100), is printed beside the measured pair.
``python validation/ubench/loop_probe_read.py OUT/loop_probe.json``."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass

CALL_US = 4.35  # h100.toml launch_call_us
TAIL = 9  # the queued pairs counted as a shallow queue (the last of 200)


@dataclass(frozen=True)
class LoopProbe:
    """One kernel's loop, microseconds a launch (see the module docstring)."""

    kernel: str
    launches: int
    pair: float
    period: float
    idle: tuple[float, ...]  # one a repetition
    queued_head: float | None
    queued_tail: float | None
    first: float | None
    call: float
    bareq: float

    @property
    def old_e4(self) -> float:
        """eq. (E4) as round 13 read it, with the queued head as w."""
        w = self.queued_head if self.queued_head is not None else self.bareq
        return max(w, min(self.period, CALL_US + w))


def _per(entry: dict, key: str) -> float:
    return statistics.median(entry[key]) / entry["launches"]


def read(data: dict, kernel: str) -> LoopProbe:
    """The figures of one kernel of loop_probe.cu's output."""
    port, queued = data[f"{kernel}_port"], data[f"{kernel}_queued"]
    n = port["launches"]
    idle = tuple((h - t) / n for h, t in zip(port["host_loop_us"], port["total_us"]))
    pairs = queued.get("pairs_rep1_us")
    head = statistics.median(pairs[:-TAIL]) if pairs else None
    tail = statistics.median(pairs[-TAIL:]) if pairs else None
    first = port["pairs_rep1_us"][0] if "pairs_rep1_us" in port else None
    return LoopProbe(kernel, n, _per(port, "total_us"), _per(port, "host_loop_us"), idle,
                     head, tail, first, _per(data[f"{kernel}_bare"], "host_loop_us"),
                     _per(data[f"{kernel}_bareq"], "total_us"))


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def main(path: str) -> None:
    data = json.loads(open(path).read())
    print("| kernel | launches | pair | period | idle (each rep.) | queued head | tail | "
          "first | call | bareq | old (E4) |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for kernel in ("heat", "wavefront", "empty"):
        r = read(data, kernel)
        idle = " ".join(f"{x:.2f}" for x in r.idle)
        print(f"| {kernel} | {r.launches} | {r.pair:.2f} | {r.period:.2f} | {idle} | "
              f"{_fmt(r.queued_head)} | {_fmt(r.queued_tail)} | {_fmt(r.first)} | "
              f"{r.call:.2f} | {r.bareq:.2f} | {r.old_e4:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
