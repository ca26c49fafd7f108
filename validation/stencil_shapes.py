"""The 2-D stencils by block shape, from their Nsight Compute counters (issue 24).

For each profiled kernel and block shape (median over its profiled launches) this prints
the time, the DRAM bytes and the bandwidth they reach, the L1/L2 figures, the achieved
warps, and the wave decomposition used in docs/validation.md ("The 2-D stencils by block
shape"):

    T_wave = t x clock / waves                        (a wave: one set of every SM's slots)
    m      = a x T_wave                               (a warp's mean life, a = warps active)
    gap    = T_wave - m                               (slots idle until a block's last warp)
    resid  = T_wave - wave bytes / dram_bandwidth     (what the DRAM bound charges 685 for)
    bound  = (wave bytes / dram_bandwidth + 685.1) / T_wave   (> 1: the DRAM bound's round trip
                                                      a wave is more than the kernel took)
    R1     = z(W) x 0.47 x 685.1 x sqrt(d), d = DRAM read bytes a warp / 128 (eq. (R1),
             cgpredict/models/retire.py), to set beside gap

waves = blocks / (blocks an SM x SMs), blocks an SM from ncu's occupancy limits. Usage:

    python validation/stencil_shapes.py [CSV ...]

(no argument: the stencil CSVs of validation/measured/h100-session-2026-11-26).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

from ncu_csv import read_ncu

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cgpredict.models.retire import expected_max_normal  # noqa: E402

SESSION = Path(__file__).parent / "measured" / "h100-session-2026-11-26"
DEFAULT = [
    *sorted((SESSION / "measured-ncu").glob("fdtd2d-32x*.csv")),
    *sorted((SESSION / "measured-ncu").glob("2dconv-32x*.csv")),
    *sorted((SESSION / "measured-user-ncu").glob("jacobi2d-32x*.csv")),
    *sorted((SESSION / "sizes").glob("*-ncu/fdtd2d-32x*.csv")),
    *sorted((SESSION / "sizes").glob("*-ncu/2dconv-32x*.csv")),
]
ROUND_TRIP = 685.1  # h100.toml l2_latency_cycles + dram_latency_cycles
CV = 0.47  # h100.toml dram_latency_cv
CLOCK_HZ = 1.98e9  # the H100's clock (device file h100.toml)
SMS = 132
BANDWIDTH = 3097e9  # h100.toml dram_bandwidth_gbps
METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_sectors.sum", "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
           "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__grid_size",
           "launch__block_size", "launch__occupancy_limit_warps",
           "launch__occupancy_limit_registers", "launch__occupancy_limit_blocks")


def read_rows(path: Path) -> dict[str, dict[str, float]]:
    """Median of each metric over a CSV's launches, per kernel name."""
    by_kernel: dict[str, list[dict[str, float]]] = defaultdict(list)
    for launch in read_ncu(path):  # the cells' text: _number reads '65,536 (0: 65,536)' too
        by_kernel[launch.kernel].append({m: _number(launch.cells[m]) for m in METRICS})
    return {name: {m: statistics.median(r[m] for r in rows) for m in METRICS}
            for name, rows in by_kernel.items()}


def _number(cell: str) -> float:
    """A CSV cell as a number: newer ncu writes launch__ figures as '65,536 (0: 65,536)'."""
    return float(cell.split(" (")[0].replace(",", ""))


def decompose(m: dict[str, float]) -> dict[str, float]:
    """The wave figures of the module docstring for one kernel's medians."""
    t = m["gpu__time_duration.sum"] * 1e-9
    per_sm = min(m["launch__occupancy_limit_warps"], m["launch__occupancy_limit_registers"],
                 m["launch__occupancy_limit_blocks"])
    waves = m["launch__grid_size"] / (per_sm * SMS)
    dram = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    wave = t * CLOCK_HZ / waves
    active = m["sm__warps_active.avg.pct_of_peak_sustained_active"] / 100
    warps = m["launch__grid_size"] * m["launch__block_size"] / 32
    d = m["dram__bytes_read.sum"] / warps / 128
    r1 = expected_max_normal(int(m["launch__block_size"] // 32)) * CV * ROUND_TRIP * d ** 0.5
    stream = dram / BANDWIDTH * CLOCK_HZ / waves
    return {"t_us": t * 1e6, "read_MB": m["dram__bytes_read.sum"] / 1e6,
            "write_MB": m["dram__bytes_write.sum"] / 1e6, "TB/s": dram / t / 1e12,
            "l2_Msec": m["lts__t_sectors.sum"] / 1e6, "l2_hit": m["lts__t_sector_hit_rate.pct"],
            "l1_hit": m["l1tex__t_sector_hit_rate.pct"], "active": active, "waves": waves,
            "T_wave": wave, "m": active * wave, "gap": wave - active * wave,
            "resid": wave - stream, "bound": (stream + ROUND_TRIP) / wave, "d": d, "R1": r1}


def main(paths: list[Path]) -> None:
    cols = ("t_us", "read_MB", "write_MB", "TB/s", "l2_Msec", "l2_hit", "l1_hit", "active",
            "waves", "T_wave", "m", "gap", "R1", "d", "resid", "bound")
    print("| file | kernel | " + " | ".join(cols) + " |")
    print("|---|---|" + "---:|" * len(cols))
    for path in paths:
        for name, medians in read_rows(path).items():
            d = decompose(medians)
            label = f"{path.parent.name}/{path.stem}"
            print(f"| {label} | {name} | " + " | ".join(f"{d[c]:.4g}" for c in cols) + " |")


if __name__ == "__main__":
    main([Path(a) for a in sys.argv[1:]] or DEFAULT)
