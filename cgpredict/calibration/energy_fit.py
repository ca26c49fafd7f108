"""Energy of the calibration micro-benchmarks (SPEC §6): the energy drawn in a window from
power samples, and the least-squares fit of energy per operation and transaction and the
constant power over the energy runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ENERGY_COUNTS",
    "EnergyFit",
    "EnergyRun",
    "energy_runs",
    "fit_energy",
    "integrate_energy_j",
]


# Count names of the energy regression; the device field is f"{name}_nj" ([energy] table).
ENERGY_COUNTS = (
    "fp32_op",
    "int32_op",
    "sfu_op",
    "fp64_op",
    "dram_transaction",
    "l2_transaction",
    "smem_transaction",
)


def integrate_energy_j(
    t_ns: Sequence[int],
    power_w: Sequence[float],
    t0_ns: int,
    t1_ns: int,
    energy_mj: Sequence[float] | None = None,
) -> float:
    """Energy (J) drawn in the window [t0_ns, t1_ns] from power samples taken at `t_ns`.

    With the NVML total-energy counter (`energy_mj`, millijoules) the counter is interpolated
    at both ends; otherwise the power samples are integrated (trapezoids, the samples nearest
    the ends extended to the window's edges).
    """
    t = np.asarray(t_ns, dtype=float)
    if t.size < 2 or t1_ns <= t0_ns:
        raise ValueError("need at least two power samples and a non-empty window")
    if energy_mj is not None:
        e = np.asarray(energy_mj, dtype=float)
        return float(np.interp(t1_ns, t, e) - np.interp(t0_ns, t, e)) / 1e3
    p = np.asarray(power_w, dtype=float)
    inside = (t > t0_ns) & (t < t1_ns)
    ts = np.concatenate(([t0_ns], t[inside], [t1_ns]))
    ps = np.concatenate(([np.interp(t0_ns, t, p)], p[inside], [np.interp(t1_ns, t, p)]))
    return float(np.sum((ps[1:] + ps[:-1]) / 2 * np.diff(ts))) / 1e9


@dataclass(frozen=True)
class EnergyRun:
    """One energy micro-benchmark: its duration, what it executed, the energy it drew."""

    name: str
    seconds: float
    counts: Mapping[str, float]
    energy_j: float


@dataclass(frozen=True)
class EnergyFit:
    """Energy per operation / transaction (nJ), constant power (W) and the fit's residual."""

    nj: Mapping[str, float]
    static_power_w: float | None
    rel_residual: float
    dropped: tuple[str, ...] = ()


def fit_energy(runs: Sequence[EnergyRun]) -> EnergyFit:
    """Least squares of energy = static_power * seconds + sum_k nj_k * count_k over the runs.

    Counts that no run exercises are left out; coefficients that come out non-positive are
    dropped (reported in `dropped`) and the fit is repeated without them.
    """
    if not runs:
        raise ValueError("no energy runs to fit")
    cols = ["static"] + [k for k in ENERGY_COUNTS if any(r.counts.get(k, 0) > 0 for r in runs)]
    dropped: list[str] = []
    y = np.array([r.energy_j for r in runs])
    while True:
        a = np.array(
            [
                [r.seconds if c == "static" else r.counts.get(c, 0.0) * 1e-9 for c in cols]
                for r in runs
            ]
        )
        scale = np.abs(a).max(axis=0)
        scale[scale == 0] = 1.0
        coef, *_ = np.linalg.lstsq(a / scale, y, rcond=None)
        coef = coef / scale
        bad = [c for c, v in zip(cols, coef) if v <= 0]
        if not bad:
            break
        worst = min(zip(coef, cols))[1]
        cols.remove(worst)
        dropped.append(worst)
        if not cols:
            return EnergyFit({}, None, 1.0, tuple(dropped))
    resid = y - a @ coef
    rel = float(np.linalg.norm(resid) / np.linalg.norm(y)) if np.linalg.norm(y) > 0 else 0.0
    values = dict(zip(cols, (float(v) for v in coef)))
    static = values.pop("static", None)
    return EnergyFit(values, static, rel, tuple(dropped))


def energy_runs(raw: Mapping[str, Any]) -> list[EnergyRun]:
    """The EnergyRun of every energy micro-benchmark that has a finite measured energy."""
    return [
        EnergyRun(e["name"], e["seconds"], e["counts"], e["energy_j"])
        for e in raw.get("energy", {}).get("runs", [])
        if isinstance(e.get("energy_j"), (int, float))
        and math.isfinite(e["energy_j"])
        and isinstance(e.get("seconds"), (int, float))
        and math.isfinite(e["seconds"])
    ]
