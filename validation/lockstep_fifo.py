"""A FIFO model of one SM's L1 serving N warps of a row walk (issue 24, GESUMMV; docs/models.md,
eqs. (P1), (22l)): does a first-come-first-served L1 keep the warps' misses in step?

Each warp runs ``iterations`` iterations of memory periods; a period asks the L1 for
``lines`` cycles of service (its load lines at ``l1_line_cycles`` 1, its store lines at
``l1_store_line_cycles`` 1.70), the L1 serves the requests one after another in the order
they arrive, and the warp's next period arrives the period's wait after its service ends:
the DRAM round trip (``l2_latency_cycles + dram_latency_cycles``, 685.1 on the H100) in the
iteration that starts a new 32-byte sector (every 8th), else the L1 hit and the chain.

    python validation/lockstep_fifo.py

prints cycles an iteration for ATAX's row kernel (one period of 34.7 cycles) and GESUMMV (two
of 35.7) next to the L1 path alone and the event-timed measurements (309.3 and 661.7), for
three orders of service. First come, first served, the warps drift apart until every miss
hides behind the other warps' hits (279 and 576); a fixed warp order gives 316 and 721; the
warps kept in step 333 and 680 (each miss exposing the round trip less the 7 other warps'
service of one period). Each measurement lies between first come, first served and the
orders that keep the warps together, and no one order fits both (fixed: ATAX +2 %, GESUMMV
+9 %; in step: +8 %, +3 %): the exposure depends on the order the SM serves its warps in,
which no published figure gives.
"""

from __future__ import annotations

from dataclasses import dataclass

#: iterations of a row walk's 4-byte words in one 32-byte sector
SECTOR_ITERATIONS = 8


@dataclass(frozen=True)
class Period:
    """One memory period of an iteration: its L1 service cycles and whether its loads
    start a new sector in the iteration that does (then it waits the DRAM round trip)."""

    service_cycles: float
    misses: bool = True


def cycles_per_iteration(periods: tuple[Period, ...], warps: int = 8, iterations: int = 512,
                         dram_cycles: float = 685.1, hit_cycles: float = 47.0,
                         policy: str = "fifo") -> float:
    """Cycles an iteration of ``warps`` warps sharing one L1 (module docstring) that serves,
    of the requests that have arrived, the first to arrive (``fifo``), the lowest-numbered
    warp's (``priority``: a fixed order, as greedy-then-oldest issue keeps it) or the least
    advanced warp's (``lockstep``: the warps stay in step)."""
    program = [(p.service_cycles, dram_cycles if p.misses and j % SECTOR_ITERATIONS == 0
                else hit_cycles) for j in range(iterations) for p in periods]
    step, ready = [0] * warps, [0.0] * warps
    t = end = 0.0
    live = set(range(warps))
    while live:
        arrived = [w for w in live if ready[w] <= t]
        if not arrived:
            t = min(ready[w] for w in live)
            continue
        key = {"fifo": lambda w: (ready[w], w), "priority": lambda w: w,
               "lockstep": lambda w: (step[w], w)}[policy]
        w = min(arrived, key=key)
        service, wait = program[step[w]]
        t += service
        step[w] += 1
        ready[w] = t + wait
        if step[w] == len(program):
            live.discard(w)
            end = max(end, ready[w])
    return end / iterations


def main() -> None:
    atax = (Period(32 + 1 + 1.70),)  # LDG A (32 lines), LDG x, STG tmp
    gesummv = (Period(32 + 1 + 1 + 1.70), Period(32 + 1 + 1 + 1.70))  # + the reload
    for name, periods, measured in (("atax_k1", atax, 309.3), ("gesummv", gesummv, 661.7)):
        l1 = 8 * sum(p.service_cycles for p in periods)
        got = ", ".join(f"{pol} {cycles_per_iteration(periods, policy=pol):.1f}"
                        for pol in ("fifo", "priority", "lockstep"))
        print(f"{name}: {got} cycles an iteration; L1 path {l1:.1f}, measured {measured}")


if __name__ == "__main__":
    main()
