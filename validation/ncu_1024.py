"""The 1024x1 rows' Nsight Compute counters beside the same kernel's at a smaller block.

Seventeenth round, t4 (docs/validation.md, "The 1024x1 rows, seventeenth round"): for each
kernel a committed lease profiled at 1024x1 and at 256x1 or 128x1 (flushed L2, ``--cache-
control all``), per launch: ncu's duration, the SMs' elapsed cycles and the share of them the
mean SM is active (``sm__cycles_active.avg / sm__cycles_elapsed.avg``: the launch's tail and
idle SMs), the warps active, the DRAM's and the L2's throughput (% of peak), the L2 sectors
the L1 read (``lts__t_sectors_srcunit_tex_op_read``), the L1's sector hit rate and the
carve-out the driver chose. The last column is the elapsed cycles' ratio over the other
block's, beside the L2's sectors over its throughput (``lts__t_sectors`` / ``lts__throughput``):
the two agree where the L2 sets the time (spmv_csr), so what grows is the traffic. Needs no
GPU and no cgpredict run; prints Markdown.

    python validation/ncu_1024.py
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ncu_csv import NcuLaunch, read_ncu

ROOT = Path(__file__).resolve().parent
MEASURED = ROOT / "measured"
W1 = MEASURED / "h100-worst-2026-11-27"
W2 = MEASURED / "h100-worst2-2026-11-27"
C27 = MEASURED / "h100-session-2026-11-27b" / "counters"
#: (kernel, the other block's profile, the 1024x1 profile)
PAIRS = (
    ("spmv_csr", W1 / "user-ncu/spmv_csr-256x1.csv", W1 / "user-ncu/spmv_csr-1024x1.csv"),
    ("particles", C27 / "user-ncu/particles-256x1.csv", W1 / "more-ncu/particles-1024x1.csv"),
    ("dot_gridstride", W2 / "user-ncu/dot_gridstride-128x1.csv",
     W2 / "user-ncu/dot_gridstride-1024x1.csv"),
    ("saxpy", W2 / "user-ncu/saxpy-128x1.csv", W2 / "user-ncu/saxpy-1024x1.csv"),
    ("sfu_heavy", W2 / "user-ncu/sfu_heavy-128x1.csv", W2 / "user-ncu/sfu_heavy-1024x1.csv"),
    ("spmv_ell", W1 / "blind-ncu/spmv_ell-128x1.csv", W1 / "blind-ncu/spmv_ell-1024x1.csv"),
)


@dataclass(frozen=True)
class Counters:
    """One launch's counters that the 1024x1 diagnosis reads (units as ncu's)."""

    block: str
    kernel: str
    us: float
    elapsed: float  # sm__cycles_elapsed.avg
    busy: float  # sm__cycles_active.avg / sm__cycles_elapsed.avg
    warps_pct: float
    dram_pct: float
    lts_pct: float
    l2_read_m: float  # L2 sectors the L1 read, millions
    lts_m: float  # every L2 sector, millions
    l1_hit_pct: float
    carveout_kb: float


def counters(launch: NcuLaunch) -> Counters:
    """The fields of ``Counters`` from one ncu launch (0 where the profile lacks one)."""
    m = launch.metrics.get
    dim = launch.cells.get("Block Size", "").strip("()").split(",")[0].strip()
    carve = launch.cells.get("launch__shared_mem_config_size", "0").split(" ")[0]
    elapsed = m("sm__cycles_elapsed.avg", 0.0)
    return Counters(
        block=f"{dim}x1", kernel=launch.kernel,
        us=m("gpu__time_duration.sum", 0.0) / 1e3, elapsed=elapsed,
        busy=m("sm__cycles_active.avg", 0.0) / elapsed if elapsed else 0.0,
        warps_pct=m("sm__warps_active.avg.pct_of_peak_sustained_active", 0.0),
        dram_pct=m("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0.0),
        lts_pct=m("lts__throughput.avg.pct_of_peak_sustained_elapsed", 0.0),
        l2_read_m=m("lts__t_sectors_srcunit_tex_op_read.sum", 0.0) / 1e6,
        lts_m=m("lts__t_sectors.sum", 0.0) / 1e6,
        l1_hit_pct=m("l1tex__t_sector_hit_rate.pct", 0.0),
        carveout_kb=float(carve.replace(",", "") or 0) / 1024)


def ratios(small: Counters, big: Counters) -> tuple[float, float]:
    """The elapsed cycles' ratio (1024x1 over the other block) and the L2's sectors over its
    throughput, the ratio the elapsed cycles have where the L2 sets the launch's time."""
    elapsed = big.elapsed / small.elapsed
    l2 = (big.lts_m / small.lts_m) / (big.lts_pct / small.lts_pct) if small.lts_m else 0.0
    return elapsed, l2


def rows() -> list[tuple[str, Counters, Counters]]:
    """Every launch of PAIRS, its profile at the other block beside its 1024x1 one."""
    out = []
    for name, small_csv, big_csv in PAIRS:
        for a, b in zip(read_ncu(small_csv), read_ncu(big_csv)):
            out.append((name, counters(a), counters(b)))
    return out


def main() -> None:
    print("| kernel | launch | block | ncu us | elapsed cycles | mean SM busy | warps active %"
          " | DRAM % | L2 % | L2 read sectors M | L1 hit % | carve-out KB |"
          " elapsed ratio / L2 sectors over throughput |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, small, big in rows():
        el, l2 = ratios(small, big)
        for c in (small, big):
            tail = f"{el:.3f} / {l2:.3f}" if c is big else ""
            print(f"| {name} | {c.kernel} | {c.block} | {c.us:.2f} | {c.elapsed:,.0f} |"
                  f" {c.busy:.3f} | {c.warps_pct:.1f} | {c.dram_pct:.1f} | {c.lts_pct:.1f} |"
                  f" {c.l2_read_m:.2f} | {c.l1_hit_pct:.1f} | {c.carveout_kb:.0f} | {tail} |")


if __name__ == "__main__":
    main()
