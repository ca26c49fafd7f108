"""The L2 slices' miss path (eq. (LM), docs/models.md) read from the committed Nsight Compute
counters: which L2 unit ncu's ``lts__throughput`` finds busiest on the random gather.

``lts__throughput`` is the busiest L2 sub-unit's share of its peak. For any one unit whose
work is a count C (per slice), C / (peak x elapsed) <= lts__throughput on every launch, with
equality where that unit is the busiest. So each launch gives an upper bound on the time one
unit of C takes at 100 % (elapsed x lts__throughput x 80 slices / C), and a unit is told by
the launches that reach the least of these bounds together.

The device field is read the other way (round 17, t1), as ``l2_request_cycles`` and
``dram_bandwidth_gbps`` are: the highest slot rate a whole launch sustained, i.e. the least
``1 / slots`` (ns a slot on a slice) over the launches, whatever their ``lts__throughput``
(``--sustained``). The peak's least bound is no stable figure: the newer leases' spmv_ell
1024x1 (77.9 % of peak) lowers it from 1.251 to 1.162 ns, where the sustained reading stays
the random gather's 1.379 (its four launches 1.379-1.387, spmv_ell 256x1 1.409 next).

The counts per launch (ncu names; per slice and ns):
  rq, wq   lts__t_requests_srcunit_tex_op_read / _write
  rh, rm   lts__t_sectors_srcunit_tex_op_read lookup hits / the rest (misses)
  w        lts__t_sectors_srcunit_tex_op_write (+ op_red)
  fill, wb dram__bytes_read / dram__bytes_write in 32-B sectors
  ext      lts__t_sectors less rh + rm + w: the sectors crossing between the partitions

Run: ``python validation/l2_miss_counters.py`` (prints the table; ``--lp`` the linear program
that shows no single count, nor any non-negative sum of the eight, reaches the gather;
``--sustained`` the launches with the highest slot rates; ``--all`` adds the CSVs of the
worst-rows leases, h100-worst*-2026-11-27, to the 113 launches the field was first read on).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from ncu_csv import read_ncu

ROOT = Path(__file__).resolve().parent / "measured"
DIRS = ("h100-blind-2026-11-27/plain-ncu", "h100-session-2026-11-27b/counters/plain-ncu",
        "h100-session-2026-11-27b/counters/restrict-ncu",
        "h100-session-2026-11-27b/counters/user-ncu")
NEWER = ("h100-worst-2026-11-27/blind-ncu", "h100-worst-2026-11-27/user-ncu",
         "h100-worst-2026-11-27/more-ncu", "h100-worst2-2026-11-27/blind-ncu",
         "h100-worst2-2026-11-27/user-ncu", "h100-worst2-2026-11-27/corpus-ncu")
SLICES = 80  # device__attribute_l2s_count
COLS = ("rq", "wq", "rh", "rm", "w", "fill", "wb", "ext")


def counts(metrics: dict[str, float]) -> tuple[np.ndarray, float] | None:
    """The eight counts per slice and ns, and lts__throughput as a fraction, from a launch's
    ``metrics`` (ncu_csv.NcuLaunch; a metric absent or not a number counts 0)."""
    g = lambda k: metrics.get(k, 0.0)  # noqa: E731
    thr = g("lts__throughput.avg.pct_of_peak_sustained_elapsed") / 100
    t_ns = g("gpu__time_duration.sum")
    if thr < 0.05 or t_ns <= 0:
        return None
    tr, hit = g("lts__t_sectors_srcunit_tex_op_read.sum"), \
        g("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
    w = g("lts__t_sectors_srcunit_tex_op_write.sum") + g("lts__t_sectors_op_red.sum")
    wq = g("lts__t_requests_srcunit_tex_op_write.sum") + \
        g("lts__t_requests_srcunit_tex_op_red.sum")
    ext = g("lts__t_sectors.sum") - tr - w
    x = np.array([g("lts__t_requests_srcunit_tex_op_read.sum"), wq, hit, tr - hit, w,
                  g("dram__bytes_read.sum") / 32, g("dram__bytes_write.sum") / 32, ext])
    return x / (SLICES * t_ns), thr


def table(dirs: tuple[str, ...] = DIRS) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Launch names, their eight counts per slice and ns, and lts__throughput, over ``dirs``."""
    names, xs, ys = [], [], []
    for d in dirs:
        for path in sorted((ROOT / d).glob("*.csv")):
            for k, launch in enumerate(read_ncu(path)):
                c = counts(launch.metrics)
                if c is not None:
                    names.append(f"{d.split('/')[-1]}/{path.stem}#{k}")
                    xs.append(c[0])
                    ys.append(c[1])
    return names, np.array(xs), np.array(ys)


def miss_slots(x: np.ndarray) -> np.ndarray:
    """Eq. (LM) on the counters: missed read requests (the read requests times their sectors'
    missed share) plus the crossing sectors in 64-B pairs."""
    rq, _, rh, rm, _, _, _, ext = x.T
    return rq * rm / np.maximum(rh + rm, 1e-12) + ext / 2


def main(argv: list[str]) -> None:
    names, x, y = table(DIRS + NEWER if "--all" in argv else DIRS)
    slots = miss_slots(x)
    ns = y / np.maximum(slots, 1e-12)  # each launch's upper bound on the ns a slot at 100 %
    k = float(ns.min())
    print(f"{len(names)} launches; l2_miss_slot_ns = {k:.4f} (the least upper bound)")
    for i in np.argsort(ns)[:16]:
        print(f"  {names[i]:44s} lts__throughput {y[i] * 100:5.1f} %  miss path "
              f"{k * slots[i] * 100:5.1f} %  ratio {k / ns[i]:.3f}")
    for leave in ("spmv_ell", "gather"):
        keep = [i for i, n in enumerate(names) if leave not in n]
        print(f"  leaving out {leave}: {ns[keep].min():.4f}")
    if "--sustained" in argv:
        per_slot = 1 / np.maximum(slots, 1e-12)  # ns a slot delivered over the whole launch
        print(f"sustained: l2_miss_slot_ns = {per_slot.min():.4f} (the highest slot rate)")
        for i in np.argsort(per_slot)[:8]:
            print(f"  {names[i]:44s} {per_slot[i]:.4f} ns a slot at lts__throughput "
                  f"{y[i] * 100:5.1f} %")
    if "--lp" in argv:
        from scipy.optimize import linprog
        g = next(i for i, n in enumerate(names) if "gather" in n)
        r = linprog(-x[g] / y[g], A_ub=x, b_ub=y, bounds=[(0, None)] * x.shape[1],
                    method="highs")
        print(f"best non-negative sum of {', '.join(COLS)} within every launch's "
              f"lts__throughput explains {x[g] @ r.x / y[g]:.3f} of the gather's")


if __name__ == "__main__":
    main(sys.argv[1:])
