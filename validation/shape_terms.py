"""The 2-D stencils' per-launch model terms beside Nsight Compute's counters, by block shape.

For each launch of 2DCONV, FDTD-2D (k1-k3) and Jacobi-2D at 32x8, 16x16, 64x4 and 32x32 (the
lease of 2026-11-28, ``validation/measured/h100-lease-2026-11-28/shapes``: every shape in one
lease, ncu ``--cache-control all``) this prints the model's terms at the work size
(``result.bounds`` of ``cgpredict.predict(..., device="h100")``: the L1 path (B2), the L2
bound, the DRAM bound and its (LW) part past the bytes, the L2 read requests, and ``k``, a
warp's load requests that miss the L2, the count eq. (LM) gives a slot each) beside ncu's:
L1 data-stage wavefronts an SM, L2 read and write requests, DRAM bytes read, warps active,
long-scoreboard stalls an issue, ``lts__throughput``, the duration, and a warp's life ``m``
and its block's ``gap`` (validation/stencil_shapes.py). docs/validation.md, "The 2-D
stencils at 16x16 and 64x4: the model's terms beside ncu", holds its output. Usage:

    python validation/shape_terms.py [--no-model]

(``--no-model``: the ncu columns alone, without the twenty predictions, a few minutes.)
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ncu_csv import read_ncu
from stencil_shapes import decompose, read_rows

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LEASE = Path(__file__).parent / "measured" / "h100-lease-2026-11-28" / "shapes"
SHAPES = ("32x8", "16x16", "64x4", "32x32")
SMS = 132
# label, C source, work sizes, ncu CSV stem, kernel name (ncu's and the model's)
LAUNCHES = (
    ("2DCONV", "polybench_c/2dconv.c", {"NI": 4096, "NJ": 4096}, "corpus-ncu/2dconv",
     "conv2d"),
    ("FDTD-2D k1", "polybench_c/fdtd2d.c", {"NX": 4096, "NY": 4096, "TMAX": 500},
     "corpus-ncu/fdtd2d", "fdtd_k1"),
    ("FDTD-2D k2", "polybench_c/fdtd2d.c", {"NX": 4096, "NY": 4096, "TMAX": 500},
     "corpus-ncu/fdtd2d", "fdtd_k2"),
    ("FDTD-2D k3", "polybench_c/fdtd2d.c", {"NX": 4096, "NY": 4096, "TMAX": 500},
     "corpus-ncu/fdtd2d", "fdtd_k3"),
    ("Jacobi-2D", "examples/user/jacobi2d.c", {"N": 4096, "TSTEPS": 10}, "user-ncu/jacobi2d",
     "jacobi"),
)
NCU = ("l1tex__data_pipe_lsu_wavefronts.sum", "lts__t_requests_srcunit_tex_op_read.sum",
       "lts__t_requests_srcunit_tex_op_write.sum", "dram__bytes_read.sum",
       "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
       "lts__throughput.avg.pct_of_peak_sustained_elapsed")


def _kernel(names: Iterable[str], kernel: str) -> str:
    """ncu's kernel name for the model's ``kernel`` (2DCONV's is conv2d_kernel)."""
    return next(n for n in names if n in (kernel, f"{kernel}_kernel"))


def ncu_terms(path: Path, kernel: str) -> dict[str, float]:
    """One launch's ncu figures (medians over its profiled launches): the NCU metrics, the
    wavefronts an SM, and stencil_shapes' wave split (t_us, active, m, gap)."""
    launches = read_ncu(path)
    name = _kernel({x.kernel for x in launches}, kernel)
    mine = [x for x in launches if x.kernel == name]
    out = {m: statistics.median(x.metrics[m] for x in mine) for m in NCU}
    out["wavefronts_per_sm"] = out["l1tex__data_pipe_lsu_wavefronts.sum"] / SMS
    split = decompose(read_rows(path)[name])
    out.update({k: split[k] for k in ("t_us", "active", "m", "gap")})
    return out


def missed_requests(profile: Any, line_sectors: int = 4) -> float:
    """k: a warp's load requests that miss the L2 (eq. (LM)'s count): per load pattern, its
    instructions past the L1 x DRAM sectors x requests a sector (untraced: a coalesced
    load's sectors packed ``line_sectors`` a line, an uncoalesced one's one each)."""
    loads = profile.loads_only()
    total = 0.0
    for kind, p in enumerate((loads.coal, loads.uncoal, loads.const)):
        if p.insts <= 1e-12 or p.dram_trans_per_warp <= 0:
            continue
        sectors = max(p.l2_trans_per_warp, 1.0)
        guess = (-(-sectors // line_sectors), sectors, 1.0)[kind]
        lines = p.l2_requests_per_warp if p.l2_requests_per_warp > 0 else guess
        total += p.insts * (1 - p.l1_hit_fraction) * p.dram_trans_per_warp * min(
            lines / sectors, 1.0)
    return total


def model_terms(kernel: Any) -> dict[str, Any]:
    """A report kernel's terms: its bounds' L1, L2, DRAM cycles and (LW) part, its L2 read
    requests, the binding bound and k."""
    b = kernel.result.bounds
    return {"l1": b.l1_cycles, "l2": b.l2_cycles, "dram": b.dram_cycles,
            "wave": b.dram_wave_cycles, "requests": b.l2_requests,
            "binding": kernel.result.binding, "k": missed_requests(kernel.profile)}


def main(with_model: bool = True) -> None:
    """Print the table of docs/validation.md (the model's columns empty without it)."""
    print("| launch | shape | model L1 / L2 / DRAM, k cycles (binds) | (LW) part | "
          "model L2 read req, M | k | ncu wavefronts an SM, k | ncu L2 read / write req, M "
          "| ncu DRAM read MB | warps active | long-sb stall | lts % | ncu us | m / gap |")
    print("|---|---|" + "---:|" * 12)
    for label, source, sizes, stem, kernel in LAUNCHES:
        for shape in SHAPES:
            n = ncu_terms(LEASE / f"{stem}-{shape}.csv", kernel)
            model = "| | | |"
            if with_model:
                import cgpredict
                rep = cgpredict.predict(ROOT / source, block=shape, device="h100", sizes=sizes)
                t = model_terms(next(k for k in rep.kernels if k.name == kernel))
                model = (f"{t['l1'] / 1e3:.1f} / {t['l2'] / 1e3:.1f} / {t['dram'] / 1e3:.1f} "
                         f"({t['binding']}) | {t['wave'] / 1e3:.1f} | "
                         f"{t['requests'] / 1e6:.3f} | {t['k']:.2f} |")
            print(f"| {label} | {shape} | {model} {n['wavefronts_per_sm'] / 1e3:.1f} | "
                  f"{n[NCU[1]] / 1e6:.3f} / {n[NCU[2]] / 1e6:.3f} | {n[NCU[3]] / 1e6:.1f} | "
                  f"{n['active']:.3f} | {n[NCU[4]]:.1f} | {n[NCU[5]]:.1f} | {n['t_us']:.2f} | "
                  f"{n['m']:.0f} / {n['gap']:.0f} |")


if __name__ == "__main__":
    main(with_model="--no-model" not in sys.argv[1:])
