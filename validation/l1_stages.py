"""The H100's L1 load path as two pipelined stages, checked against every mode and warp count of
``validation/ubench/l1_lines.cu`` (issue 24; the lease of 2026-11-27, probes-1 and probes-2).

Loads (eq. (L1s)). A warp load instruction passes a tag stage, one look-up a line, at
``l1_line_cycles`` (1.0, the published rate: the ``rows`` mode's 32.00 cycles a 32-line
request), and a data stage that moves the bytes the request returns, ``DATA_BYTES_PER_CYCLE``
(64 B, read off the ``line`` mode: 128 B in 1.99 cycles at 64 warps). The stages are pipelined,
so a sequence of requests costs the slower stage's sum:

    cycles / request = max(sum lines x l1_line_cycles, sum bytes / 64) / requests   (L1s)

With few warps a closed loop adds latency (eq. (L1q)): each warp issues a trip of ``K`` = 8
independent loads, waits ``Z`` cycles for them and its loop, and issues the next; the SM's
L1 is one queue of service ``K x (L1s)`` a trip, solved by exact mean-value analysis for W
warps. ``implied_latency`` inverts it: the ``Z`` each measured point needs.

Stores (eq. (L1w)), 4 SMs of 8 warps (the L2 does not bind): a per-request cost and a
per-line cost, the two unknowns read off ``store_line`` (1 line) and ``store_rows`` (32
lines); ``store_rows_loads`` (a rows load and a rows store, alternately) then checks whether
the load's tags add to them (sum) or overlap (max).

    python validation/l1_stages.py

prints each mode's model against both calls' mean and the check of the stores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBES = [ROOT / f"validation/measured/h100-session-2026-11-27/probes-{i}/l1_lines.json"
          for i in (1, 2)]

#: the published tag rate: one line a cycle (device field l1_line_cycles)
TAG_CYCLES_PER_LINE = 1.0
#: the data stage, bytes a cycle (the ``line`` mode at 64 warps: 128 B in 1.99 cycles)
DATA_BYTES_PER_CYCLE = 64.0
#: independent loads a trip of the micro-benchmark (kUnroll)
TRIP_LOADS = 8
#: L1 hit latency of one thread's pointer chase (h100.toml l1_latency_cycles)
L1_LATENCY = 38.9


@dataclass(frozen=True)
class Request:
    """One warp load instruction: the L1 lines it touches and the bytes it returns."""

    lines: int
    data_bytes: int


#: each load mode's trip of requests (l1_lines.cu, 32-bit words, 32 lanes)
MODES: dict[str, tuple[Request, ...]] = {
    "line": (Request(1, 128),) * TRIP_LOADS,
    "broadcast": (Request(1, 4),) * TRIP_LOADS,
    "gemm": (Request(1, 4), Request(1, 128)) * (TRIP_LOADS // 2),
    "two": (Request(2, 128),) * TRIP_LOADS,
    "rows": (Request(32, 128),) * TRIP_LOADS,
    # the restrict GEMM port's addresses (B's lines 16 KB apart) and its FFMA chain: the same
    # requests as gemm, so (L1s) gives them gemm's cost; measured from the next lease on
    "gemm_port": (Request(1, 4), Request(1, 128)) * (TRIP_LOADS // 2),
    "gemm_chain": (Request(1, 4), Request(1, 128)) * (TRIP_LOADS // 2),
}


def stage_cycles(trip: tuple[Request, ...], tag: float = TAG_CYCLES_PER_LINE,
                 data_rate: float = DATA_BYTES_PER_CYCLE) -> float:
    """Cycles a request of the trip holds the SM's L1, the slower stage's sum over the trip
    divided by its requests (eq. (L1s))."""
    tags = tag * sum(r.lines for r in trip)
    data = sum(r.data_bytes for r in trip) / data_rate
    return max(tags, data) / len(trip)  # (L1s)


def closed_loop_cycles(per_request: float, warps: int, think: float,
                       trip: int = TRIP_LOADS) -> float:
    """Cycles a request with ``warps`` warps, each a trip of ``trip`` loads at the L1 (service
    ``trip x per_request``) then ``think`` cycles away: exact mean-value analysis of one queue
    and a delay (eq. (L1q)); at many warps it tends to ``per_request``."""
    demand = trip * per_request
    queue = 0.0
    throughput = 0.0
    for n in range(1, warps + 1):
        response = demand * (1.0 + queue)
        throughput = n / (think + response)
        queue = throughput * response
    return 1.0 / (throughput * trip)  # (L1q)


def implied_latency(per_request: float, warps: int, measured: float) -> float:
    """The ``think`` cycles of eq. (L1q) that give ``measured`` cycles a request (bisection;
    0 where the stage alone is already slower than measured)."""
    lo, hi = 0.0, 4096.0
    if closed_loop_cycles(per_request, warps, lo) >= measured:
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if closed_loop_cycles(per_request, warps, mid) < measured:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def measured(paths: list[Path] = PROBES) -> dict[str, dict[tuple[int, int], float]]:
    """Both calls' mean cycles a request per mode and (SMs used, warps an SM)."""
    runs = [json.loads(p.read_text())["modes"] for p in paths]
    out: dict[str, dict[tuple[int, int], float]] = {}
    for mode in runs[0]:
        key = "cycles_per_store" if mode.startswith("store") else "cycles_per_load"
        for rows in zip(*(r[mode] for r in runs)):
            where = (rows[0].get("sms_used", 0), rows[0]["warps_per_sm"])
            out.setdefault(mode, {})[where] = sum(x[key] for x in rows) / len(rows)
    return out


@dataclass(frozen=True)
class StoreStages:
    """Eq. (L1w) on 4 SMs: cycles a store request and a store line, and the row load + row
    store pair both ways (its tags added, or overlapped) against its measurement."""

    per_request: float
    per_line: float
    pair_sum: float
    pair_max: float
    pair_measured: float


def store_stages(m: dict[str, dict[tuple[int, int], float]]) -> StoreStages:
    """Solve eq. (L1w) ``request + lines x line`` from the 1-line and the 32-line store on 4
    SMs of 8 warps, and check it on the load + store pair."""
    one, rows = m["store_line"][(4, 8)], m["store_rows"][(4, 8)]
    per_line = (rows - one) / 31.0
    per_request = one - per_line
    load = stage_cycles(MODES["rows"][:1])
    return StoreStages(per_request, per_line, load + rows, max(load, rows),
                       m["store_rows_loads"][(4, 8)])


def main() -> None:
    m = measured()
    print("mode       warps  model(L1s)  measured  error   implied Z (L1q)")
    for mode, trip in MODES.items():
        if mode not in m:
            continue
        s = stage_cycles(trip)
        for (_, warps), value in sorted(m[mode].items(), key=lambda kv: kv[0][1]):
            z = implied_latency(s, warps, value)
            print(f"{mode:10s} {warps:5d}  {s:10.3f}  {value:8.3f}  {s / value - 1:+6.1%}"
                  f"   {z:7.1f}")
    st = store_stages(m)
    print(f"stores (L1w): {st.per_request:.3f} a request + {st.per_line:.3f} a line; "
          f"rows load + rows store: sum {st.pair_sum:.1f}, max {st.pair_max:.1f}, "
          f"measured {st.pair_measured:.1f}")


if __name__ == "__main__":
    main()
