#!/usr/bin/env python3
"""A launch's cycles outside its SMs' active span, from the extended ncu counters (t10).

For every profiled launch in ``h100-session-2026-11-27b/counters/*-ncu/*.csv``: the SMs'
elapsed cycles (``sm__cycles_elapsed.avg``, the launch's whole ncu duration) less the
busiest SM's active cycles (``sm__cycles_active.max``), beside the launch's grid, waves
and DRAM bytes; then the median and quartiles of that gap for single-wave and multi-wave
launches and its correlation with log grid size, log DRAM bytes and waves. Launches whose
gap is over 10000 cycles either way (counter sampling of kernels of 10 ms or more) are
left out of the statistics. With ``--stalls NAME``: the stall reasons per issue of the
launches of one CSV stem (``3dconv-32x8``). Run from the repository root:
``python validation/launch_spans.py``.
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from ncu_csv import read_ncu

COUNTERS = Path("validation/measured/h100-session-2026-11-27b/counters")


@dataclass(frozen=True)
class LaunchSpan:
    """One profiled launch: its CSV stem, grid (blocks), waves, ncu duration (ns), elapsed
    and busiest-SM active cycles and DRAM bytes (read + written)."""

    name: str
    grid: float
    waves: float
    ns: float
    elapsed: float
    active_max: float
    dram_bytes: float

    @property
    def outside(self) -> float:
        """Cycles of the launch outside its busiest SM's active span."""
        return self.elapsed - self.active_max


def launch_spans() -> list[LaunchSpan]:
    """Every profiled launch of the extended session."""
    out = []
    for path in sorted(COUNTERS.glob("*-ncu/*.csv")):
        for launch in read_ncu(path):
            g = lambda k, m=launch.metrics: m.get(k, math.nan)  # noqa: E731 - NaN: no number
            out.append(LaunchSpan(
                f"{path.parent.name[:-4]}/{path.stem}", g("launch__grid_size"),
                g("launch__waves_per_multiprocessor"), g("gpu__time_duration.sum"),
                g("sm__cycles_elapsed.avg"), g("sm__cycles_active.max"),
                g("dram__bytes_read.sum") + g("dram__bytes_write.sum")))
    return out


def _corr(pairs: list[tuple[float, float]]) -> float:
    mx = statistics.fmean(a for a, _ in pairs)
    my = statistics.fmean(b for _, b in pairs)
    sxy = sum((a - mx) * (b - my) for a, b in pairs)
    sxx = sum((a - mx) ** 2 for a, _ in pairs)
    syy = sum((b - my) ** 2 for _, b in pairs)
    return sxy / math.sqrt(sxx * syy)


def summary(spans: list[LaunchSpan]) -> list[str]:
    """Quartiles of the outside cycles by waves and their correlations."""
    kept = [s for s in spans if abs(s.outside) < 10000]
    lines = [f"launches {len(spans)}, kept {len(kept)}"]
    for label, group in (("single wave", [s for s in kept if s.waves < 1]),
                         ("multi-wave", [s for s in kept if s.waves >= 1]), ("all", kept)):
        q = statistics.quantiles([s.outside for s in group], n=4)
        lines.append(f"{label}: {len(group)} launches, median {q[1]:.0f}, "
                     f"quartiles {q[0]:.0f}-{q[2]:.0f} cycles")
    lines.append("correlation with log grid %.2f, log DRAM bytes %.2f, waves %.2f" % (
        _corr([(math.log10(s.grid), s.outside) for s in kept]),
        _corr([(math.log10(s.dram_bytes + 1.0), s.outside) for s in kept]),
        _corr([(s.waves, s.outside) for s in kept])))
    return lines


def stalls(stem: str) -> list[str]:
    """Stall reasons per issue (over 0.05) and instructions per sub-partition, per launch."""
    lines = []
    for path in sorted(COUNTERS.glob(f"*-ncu/{stem}.csv")):
        for launch in read_ncu(path):
            r = launch.cells
            st = {k.split("stalled_")[1].split("_per")[0]: v for k, v in launch.metrics.items()
                  if "issue_stalled" in k and v > 0.05}
            lines.append(f"{path.parent.name}/{stem} grid {r['launch__grid_size']} active "
                         f"{r['sm__cycles_active.max']} inst/smsp {r['smsp__inst_issued.max']} "
                         + " ".join(f"{k} {v:.2f}" for k, v in st.items()))
    return lines


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "--stalls":
        print("\n".join(stalls(argv[1])))
        return
    spans = launch_spans()
    for s in spans:
        print(f"{s.name:32s} grid {s.grid:7.0f} waves {s.waves:6.2f} {s.ns:10.0f} ns "
              f"elapsed {s.elapsed:10.0f} active {s.active_max:10.0f} outside {s.outside:7.0f}")
    print("\n".join(summary(spans)))


if __name__ == "__main__":
    main(sys.argv[1:])
