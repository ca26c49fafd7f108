"""The H100 L1's cost per warp request, read off Nsight Compute counters of the ports themselves
(eq. (B2r); issue t4, the lease of 2026-11-27, second session: extended counters).

For every port configuration whose L1 binds (the restrict GEMM-like and SYRK ports:
``l1tex__throughput`` 80-99 % of peak, warps stalled on ``lg_throttle``), the SM's active cycles
are split into the L1's data-stage wavefronts (``l1tex__data_pipe_lsu_wavefronts``) and its
requests (``l1tex__lsuin_requests``), per SM (``.avg``) and summed over a row's launches:

    sm__cycles_active = a x wavefronts + b x requests                        (B2r)

``a`` is fitted free as a check (the ubench's ``rows`` mode gives 1.000 cycle a line, the
published one line a clock), then ``b`` with ``a`` held at ``l1_line_cycles`` = 1.0: the
value of the device field ``l1_request_cycles``. The GEMM-like ports have 1.00 wavefront a
request and the SYRK ports 16.5, so a per-request cost and a per-wavefront cost are told apart
(a max of the two, the old reading, gives the SYRK ports no request cost).

    python validation/l1_request_counters.py

prints each row (wavefronts, cycles, the request cost left over, the L1's miss sectors) and
both fits with each row's error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ncu_csv import read_ncu

ROOT = Path(__file__).resolve().parents[1]
COUNTERS = ROOT / "validation/measured/h100-session-2026-11-27b/counters"
#: the L1-bound rows (restrict port: stores do not bind, one or 16.5 wavefronts a request)
ROWS = [(k, b) for k in ("gemm", "2mm", "3mm", "mm", "syrk", "syr2k") for b in ("32x32", "32x8")]
#: the published tag/data rate: one line (wavefront) a cycle (device field l1_line_cycles)
LINE_CYCLES = 1.0


@dataclass(frozen=True)
class L1Row:
    """One port configuration's per-SM counters, summed over its profiled launches."""

    name: str
    requests: float
    wavefronts: float
    active: float
    miss_sectors: float
    throughput_pct: float


def load_row(port: str, kernel: str, block: str) -> L1Row:
    """Per-SM (``.avg``) requests, wavefronts, active cycles and miss sectors of one row."""
    launches = read_ncu(COUNTERS / f"{port}-ncu/{kernel}-{block}.csv")

    def total(metric: str) -> float:
        return sum(m.metrics[metric] for m in launches)

    return L1Row(
        name=f"{port} {kernel} {block}",
        requests=total("l1tex__lsuin_requests.avg"),
        wavefronts=total("l1tex__data_pipe_lsu_wavefronts.avg"),
        active=total("sm__cycles_active.avg"),
        miss_sectors=total("l1tex__m_xbar2l1tex_read_sectors.avg"),
        throughput_pct=total("l1tex__throughput.avg.pct_of_peak_sustained_active") / len(launches),
    )


def fit_free(rows: list[L1Row]) -> tuple[float, float]:
    """(a, b) of eq. (B2r) by least squares on the relative error of each row."""
    a = np.array([[r.wavefronts / r.active, r.requests / r.active] for r in rows])
    sol = np.linalg.lstsq(a, np.ones(len(rows)), rcond=None)[0]
    return float(sol[0]), float(sol[1])


def fit_request(rows: list[L1Row], line: float = LINE_CYCLES) -> float:
    """b of eq. (B2r) with a held at ``line``: least squares on the relative error."""
    x = np.array([r.requests / r.active for r in rows])
    y = np.array([1.0 - line * r.wavefronts / r.active for r in rows])
    return float(x @ y / (x @ x))


def main() -> None:
    rows = [load_row("restrict", k, b) for k, b in ROWS]
    heads = ("wf/req", "cyc/req", "left/req", "miss/req", "l1 %")
    print(f"{'row':24s} " + " ".join(f"{h:>8s}" for h in heads))
    for r in rows:
        print(f"{r.name:24s} {r.wavefronts / r.requests:8.3f} {r.active / r.requests:8.3f} "
              f"{(r.active - LINE_CYCLES * r.wavefronts) / r.requests:8.3f} "
              f"{r.miss_sectors / r.requests:8.3f} {r.throughput_pct:8.1f}")
    a, b = fit_free(rows)
    held = fit_request(rows)
    for label, (wa, wb) in (("free", (a, b)), ("a = l1_line_cycles", (LINE_CYCLES, held))):
        errs = [(wa * r.wavefronts + wb * r.requests) / r.active - 1 for r in rows]
        print(f"{label}: a = {wa:.4f}, b = {wb:.4f}; rows within "
              f"{100 * min(errs):+.1f} .. {100 * max(errs):+.1f} %, "
              f"mean |err| {100 * float(np.mean(np.abs(errs))):.1f} %")


if __name__ == "__main__":
    main()
