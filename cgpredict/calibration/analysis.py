"""Analysis of the calibration micro-benchmarks: raw numbers in, device parameters out (SPEC §6).

Every function here is pure (no GPU, no files) so that it can be tested on synthetic data. The
micro-benchmarks (`cgpredict/calibration/microbench/*.cu`) print raw cycles, times and counts;
`analyse` turns one dictionary of those raw results (benchmark name -> its JSON object) into
`Measured` values keyed by device-file field name. `cgpredict.calibration.run` runs the
programs and writes the device file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "ENERGY_COUNTS",
    "VALUE_RANGES",
    "Analysis",
    "EnergyFit",
    "EnergyRun",
    "LinearFit",
    "Measured",
    "Plateau",
    "analyse",
    "bank_conflict_cost",
    "departure_delay",
    "energy_runs",
    "fetch_granularity",
    "find_plateaus",
    "fit_energy",
    "integrate_energy_j",
    "linear_fit",
    "sectors_per_warp",
    "value_problem",
    "warp_insts_per_cycle",
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


@dataclass(frozen=True)
class Measured:
    """One device parameter from the GPU: value, how it was obtained, benchmark accuracy (0..1).

    kind: "measured" (a micro-benchmark), "queried" (a CUDA runtime attribute) or "derived"
    (computed from measured values).
    """

    value: float | int | str
    method: str
    accuracy: float | None = None
    kind: str = "measured"


@dataclass(frozen=True)
class Plateau:
    """A run of consecutive sweep points at one latency: the sizes it spans, in bytes."""

    latency_cycles: float
    first_bytes: int
    last_bytes: int
    points: int


@dataclass(frozen=True)
class LinearFit:
    slope: float
    intercept: float
    r2: float


# ---- latency curves --------------------------------------------------------------------
def find_plateaus(
    sizes: Sequence[int], cycles: Sequence[float], rel_tol: float = 0.15, min_points: int = 2
) -> tuple[Plateau, ...]:
    """Latency plateaus of a pointer-chase curve (sizes ascending).

    A plateau is a maximal run of consecutive points within `rel_tol` of the run's median;
    runs shorter than `min_points` (the ramp between two levels) are dropped, and neighbouring
    plateaus closer than `rel_tol` are merged. The last size of a plateau is the largest
    footprint still served by that level: a lower bound of its capacity.
    """
    if len(sizes) != len(cycles):
        raise ValueError(f"expected as many sizes as latencies, got {len(sizes)} and {len(cycles)}")
    order = np.argsort(np.asarray(sizes, dtype=float), kind="stable")
    xs = [int(sizes[i]) for i in order]
    ys = [float(cycles[i]) for i in order]
    runs: list[list[int]] = []
    for i, y in enumerate(ys):
        if runs:
            ref = float(np.median([ys[k] for k in runs[-1]]))
            if abs(y - ref) <= rel_tol * ref:
                runs[-1].append(i)
                continue
        runs.append([i])
    kept = [r for r in runs if len(r) >= min_points]
    merged: list[list[int]] = []
    for r in kept:
        if merged:
            a = float(np.median([ys[k] for k in merged[-1]]))
            b = float(np.median([ys[k] for k in r]))
            if abs(b - a) <= rel_tol * a:
                merged[-1].extend(r)
                continue
        merged.append(list(r))
    return tuple(
        Plateau(float(np.median([ys[k] for k in r])), xs[r[0]], xs[r[-1]], len(r)) for r in merged
    )


def fetch_granularity(strides: Sequence[int], cycles: Sequence[float], rel_tol: float = 0.1) -> int:
    """Line / sector size from a first-touch stride sweep.

    With stride s below the fetch granularity G only s/G of the accesses miss, so cycles per
    access rise with s and stay flat from s = G on: G is the smallest stride within `rel_tol`
    of the top plateau (the median of the points at or above 90% of the maximum).
    """
    s = np.asarray(strides, dtype=float)
    c = np.asarray(cycles, dtype=float)
    if s.size == 0 or s.size != c.size:
        raise ValueError("expected equally long, non-empty stride and latency lists")
    order = np.argsort(s)
    s, c = s[order], c[order]
    top = float(np.median(c[c >= 0.9 * c.max()]))
    return int(s[np.nonzero(c >= (1.0 - rel_tol) * top)[0][0]])


# ---- fits ------------------------------------------------------------------------------
def linear_fit(x: Sequence[float], y: Sequence[float]) -> LinearFit:
    """Least-squares line y = slope * x + intercept, with its coefficient of determination."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.size < 2 or np.ptp(xa) == 0:
        raise ValueError("a line needs at least two distinct x values")
    slope, intercept = np.polyfit(xa, ya, 1)
    resid = ya - (slope * xa + intercept)
    ss = float(((ya - ya.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss if ss > 0 else 1.0
    return LinearFit(float(slope), float(intercept), r2)


def departure_delay(
    sectors_per_warp: Sequence[float],
    warp_insts: Sequence[float],
    ms: Sequence[float],
    clock_mhz: float,
    sm_count: int,
) -> LinearFit:
    """Departure delay of a saturated stream (MWP-CWP dd_L2 / dd_dram, SPEC eqs. (1)-(3)).

    SM cycles per warp memory instruction = cycles / (warp_insts / sm_count) grows by dd per
    transaction the warp instruction needs: the slope over the coalescing degrees is dd.
    """
    per_inst = [m * 1e3 * clock_mhz / (w / sm_count) for m, w in zip(ms, warp_insts)]
    return linear_fit(sectors_per_warp, per_inst)


def bank_conflict_cost(degrees: Sequence[int], cycles: Sequence[float]) -> tuple[float, float]:
    """(latency of a conflict-free shared load, extra cycles per additional conflict way)."""
    free = [c for d, c in zip(degrees, cycles) if d == 1]
    if not free:
        raise ValueError("the sweep has no conflict-free (degree 1) point")
    fit = linear_fit(degrees, cycles)
    return float(np.median(free)), fit.slope


def warp_insts_per_cycle(
    thread_ops: float, ms: float, clock_mhz: float, sm_count: int, warp_size: int = 32
) -> float:
    """Throughput in warp instructions per SM cycle of one instruction class."""
    return thread_ops / warp_size / (ms * 1e3 * clock_mhz * sm_count)


def sectors_per_warp(
    stride_words: int, sector_bytes: int = 32, word_bytes: int = 4, warp_size: int = 32
) -> int:
    """Distinct `sector_bytes` transactions of one warp load whose lane t reads word
    t * stride_words (stream.cu's count for 32-B sectors, recounted for another size)."""
    return len({t * stride_words * word_bytes // sector_bytes for t in range(warp_size)})


# ---- energy ------------------------------------------------------------------------------
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


# ---- everything at once ------------------------------------------------------------------
@dataclass(frozen=True)
class Analysis:
    """Measured device fields, measured energies, findings with no device field, remarks."""

    values: Mapping[str, Measured]
    energy: Mapping[str, Measured] = field(default_factory=dict)
    extra: Mapping[str, Measured] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _accuracy(r: Mapping[str, Any]) -> float | None:
    pure, total = r.get("pure_insts"), r.get("total_insts")
    return pure / total if pure and total else None


_PROP_FIELDS = (
    "sm_count",
    "warp_size",
    "max_threads_per_sm",
    "max_blocks_per_sm",
    "max_threads_per_block",
    "registers_per_sm",
    "registers_per_block_max",
    "shared_mem_per_sm_bytes",
    "shared_mem_per_block_max_bytes",
    "shared_mem_reserved_per_block_bytes",
    "dram_bytes",
    "compute_capability",
)


def _props(p: Mapping[str, Any], l2_unit: int, out: dict, notes: list) -> None:
    how = "CUDA runtime device attribute"
    for key in _PROP_FIELDS:
        if key in p and (p[key] or key == "shared_mem_reserved_per_block_bytes"):
            out[key] = Measured(p[key], how, kind="queried")
    if p.get("max_threads_per_sm") and p.get("warp_size"):
        out["max_warps_per_sm"] = Measured(
            p["max_threads_per_sm"] // p["warp_size"], how, kind="queried"
        )
    l2 = p.get("l2_bytes")
    if l2 and l2 % l2_unit == 0:
        out["l2_bytes"] = Measured(l2, how, kind="queried")
    elif l2:
        notes.append(
            f"l2_bytes {l2} from the CUDA runtime is not a multiple of l2_line_bytes * "
            f"l2_ways = {l2_unit}; the base value is kept"
        )


def _clock(raw: Mapping[str, Any]) -> float | None:
    clocks = [
        float(r["clock_mhz"])
        for r in raw.values()
        if isinstance(r, Mapping)
        and isinstance(r.get("clock_mhz"), (int, float))
        and math.isfinite(r["clock_mhz"])
        and r["clock_mhz"] > 0
    ]
    return float(np.median(clocks)) if clocks else None


def _latency_l1(
    r: Mapping[str, Any], l2_first: float | None, out: dict, extra: dict, notes: list
) -> None:
    levels = find_plateaus(r["values"], r["cycles_per_access"])
    if not levels:
        notes.append("L1 sweep found no plateau; l1_latency_cycles keeps the base value")
        return
    first = levels[0].latency_cycles
    # one plateau near the L2 latency: the loads were not served by L1 (not an L1 latency)
    if (l2_first and first >= 0.7 * l2_first) or (not l2_first and len(levels) < 2):
        notes.append(
            f"L1 sweep: first plateau {first:.0f} cycles ({len(levels)} plateau(s)) is not "
            f"clearly below the L2 latency ({l2_first or 'unknown'}): ld.global.ca seems not "
            "cached in L1; l1_latency_cycles keeps the base value"
        )
        return
    out["l1_latency_cycles"] = Measured(
        round(first, 1),
        f"pointer chase (ld.global.ca, stride {r['stride']} B), first plateau of {len(levels)}",
        _accuracy(r),
    )
    if len(levels) > 1:
        extra["l1_capacity_bytes"] = Measured(
            levels[0].last_bytes, "largest footprint on the L1 plateau (lower bound)"
        )


def _latency_l2(
    r: Mapping[str, Any], l2_bytes: int | None, out: dict, extra: dict, notes: list
) -> None:
    sizes, cycles = r["values"], r["cycles_per_access"]
    levels = find_plateaus(sizes, cycles)
    acc = _accuracy(r)
    if not levels:
        notes.append("L2 sweep found no plateau; its fields keep the base values")
        return
    l2 = levels[0].latency_cycles
    out["l2_latency_cycles"] = Measured(
        round(l2, 1), f"pointer chase (ld.global.cg, stride {r['stride']} B), first plateau", acc
    )
    if len(levels) < 2:
        notes.append("L2 sweep found no DRAM plateau: footprints too small?")
        return
    # DRAM level: the largest footprints (>= 4 x L2), past the L2 -> DRAM ramp, which under
    # non-LRU replacement reaches far beyond the L2 size and would pull a plateau median down
    pts = sorted(zip(sizes, cycles))
    far = [float(c) for s, c in pts if l2_bytes and s >= 4 * l2_bytes]
    total: float | None = None
    if len(far) >= 2:
        total = float(np.median(far[-3:]))
        how = f"median of the {min(3, len(far))} largest footprints (>= 4 x L2)"
    elif not l2_bytes or levels[-1].first_bytes > l2_bytes:
        total = levels[-1].latency_cycles
        how = f"last plateau (from {levels[-1].first_bytes} B)"
    else:
        notes.append(
            f"L2 sweep: the last plateau starts at {levels[-1].first_bytes} B, inside the "
            f"{l2_bytes}-B L2, and no footprint reaches 4 x L2: no DRAM level; "
            "dram_latency_cycles keeps the base value"
        )
    if total is not None:
        out["dram_latency_cycles"] = Measured(
            round(total - l2, 1),
            f"pointer chase beyond L2 ({how}): {total:.0f} cycles in all, minus the L2 "
            "latency (the field is additive, SPEC eq. (2)); a sequential 128-B chase hits "
            "open DRAM rows, so a lower bound for scattered accesses",
            acc,
        )
    extra["l2_capacity_bytes"] = Measured(
        levels[-2].last_bytes,
        "largest footprint on the last L2 plateau (not a bound under non-LRU replacement)",
    )
    if len(levels) > 2:
        notes.append(
            "L2 sweep shows intermediate plateaus "
            + ", ".join(f"{p.latency_cycles:.0f}" for p in levels[1:-1])
            + " cycles (far L2 partition or TLB)"
        )


def _line_l2(
    r: Mapping[str, Any],
    l2_line_bytes: int,
    l2_sector_bytes: int,
    out: dict,
    extra: dict,
    notes: list,
) -> None:
    # strides beyond 2 lines only add DRAM row / TLB effects to the top of the curve
    pts = [(s, c) for s, c in zip(r["values"], r["cycles_per_access"]) if s <= 2 * l2_line_bytes]
    g = fetch_granularity([s for s, _ in pts], [c for _, c in pts])
    acc = _accuracy(r)
    extra["l2_dram_fetch_bytes"] = Measured(
        g, "first-touch stride sweep after an L2 flush: L2<-DRAM fetch granularity", acc
    )
    # l2_sector_bytes is the unit of every L2 and DRAM transaction the model counts (and of
    # dd_l2 / dd_dram): a DRAM fetch granularity only confirms it, never replaces it
    if g == l2_sector_bytes and g in (32, 64, 128) and l2_line_bytes % g == 0:
        out["l2_sector_bytes"] = Measured(
            g,
            "first-touch stride sweep: the L2<-DRAM fetch granularity equals the transaction "
            "size the model counts",
            acc,
        )
    else:
        notes.append(
            f"L2<-DRAM fetch granularity {g} B differs from l2_sector_bytes {l2_sector_bytes} B "
            "(the transaction the model counts, the unit of dd_l2/dd_dram): base value kept"
        )


def _smem(r: Mapping[str, Any], out: dict, extra: dict) -> None:
    lat, replay = bank_conflict_cost(r["conflict_degree"], r["cycles_per_access"])
    out["shared_latency_cycles"] = Measured(
        round(lat, 1), "shared-memory pointer chase, conflict-free", _accuracy(r)
    )
    extra["smem_conflict_replay_cycles"] = Measured(
        round(replay, 2), "slope of cycles per shared load vs bank-conflict degree", _accuracy(r)
    )


def _stream(
    r: Mapping[str, Any],
    key: str,
    clock: float,
    sms: int,
    sector_bytes: int,
    out: dict,
    notes: list,
) -> None:
    spw = list(r["sectors_per_warp"])
    unit = int(r.get("sector_bytes", 32))  # stream.cu counts 32-B sectors
    if sector_bytes != unit:
        if "strides" not in r:
            notes.append(
                f"{key}: the stream counts {unit}-B sectors, the model {sector_bytes}-B "
                "transactions, and the raw results have no strides to recount: base kept"
            )
            return
        spw = [sectors_per_warp(int(s), sector_bytes) for s in r["strides"]]
    fit = departure_delay(spw, r["warp_insts"], r["ms"], clock, sms)
    if fit.slope <= 0:
        notes.append(f"{key}: slope {fit.slope:.3g} is not positive; base kept")
        return
    out[key] = Measured(
        round(fit.slope, 3),
        f"saturated {len(r['ms'])}-point stream, slope of SM cycles per warp load vs "
        f"{sector_bytes}-B transactions per warp (r2 {fit.r2:.3f})",
        _accuracy(r),
    )


def _bandwidth(r: Mapping[str, Any], out: dict) -> None:
    read = r["bytes"] * int(r.get("passes", 1))
    out["dram_bandwidth_gbps"] = Measured(
        round(read / (min(r["ms"]) * 1e-3) / 1e9, 1),
        "16-B load stream (4 loads in flight per thread) over a buffer >> L2, best run",
        _accuracy(r),
    )


def _inst(r: Mapping[str, Any], clock: float, sms: int, warp: int, out: dict, extra: dict) -> None:
    acc = _accuracy(r)
    rates = {
        c: warp_insts_per_cycle(r[f"{c}_thread_ops"], r[f"{c}_ms"], clock, sms, warp)
        for c in ("int32", "fp32", "fp64", "sfu")
        if f"{c}_ms" in r
    }
    for c, v in rates.items():
        extra[f"{c}_warp_insts_per_cycle"] = Measured(
            round(v, 3), "full-occupancy independent chains", acc
        )
    if rates:
        best = max(rates, key=rates.get)
        out["inst_cycles_per_warp_inst"] = Measured(
            round(1.0 / rates[best], 4),
            f"issue rate: 1 / the fastest class ({best}, "
            f"{rates[best]:.2f} warp insts per SM cycle)",
            acc,
        )
    if "int32_latency_cycles" in r:
        out["inst_latency_cycles"] = Measured(
            round(r["int32_latency_cycles"], 2), "dependent mad.lo.s32 chain", acc
        )
    if "fp32_latency_cycles" in r:
        out["fp_latency_cycles"] = Measured(
            round(r["fp32_latency_cycles"], 2), "dependent fma.rn.f32 chain", acc
        )


def _barrier(r: Mapping[str, Any], extra: dict) -> None:
    cyc = dict(zip(r["threads"], r["cycles_per_barrier"]))
    pick = 256 if 256 in cyc else max(cyc)
    extra["barrier_cycles"] = Measured(
        round(cyc[pick], 1),
        f"__syncthreads of a {pick}-thread block, one block per SM",
        _accuracy(r),
    )


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


def _energy(raw: Mapping[str, Any], energy: dict, notes: list) -> None:
    runs = energy_runs(raw)
    if len(runs) < 2:
        return
    fit = fit_energy(runs)
    how = (
        f"NVML energy over {len(runs)} runs ({', '.join(r.name for r in runs)}), least "
        f"squares, relative residual {fit.rel_residual:.3f}"
    )
    for k, v in fit.nj.items():
        energy[f"{k}_nj"] = Measured(round(v, 4), how)
    if fit.static_power_w is not None:
        energy["static_power_w"] = Measured(round(fit.static_power_w, 2), how)
    if fit.dropped:
        notes.append("energy fit dropped non-positive terms: " + ", ".join(fit.dropped))
    if raw.get("energy", {}).get("energy_counter") is False:
        notes.append(
            "energy from NVML power samples (no energy counter): on many GPUs the power "
            "reading is a ~1-s moving average, which smears each run into its neighbours"
        )


# ---- sanity of calibrated values ---------------------------------------------------------
# Plausible range of a calibrated field (generous: a value outside is a broken measurement).
VALUE_RANGES: dict[str, tuple[float, float]] = {
    "clock_mhz": (100.0, 10_000.0),
    "l1_latency_cycles": (1.0, 2_000.0),
    "l2_latency_cycles": (1.0, 10_000.0),
    "dram_latency_cycles": (1.0, 20_000.0),
    "shared_latency_cycles": (1.0, 2_000.0),
    "smem_load_cycles": (1.0, 50_000.0),
    "dd_l2_cycles": (0.001, 1_000.0),
    "dd_dram_cycles": (0.001, 1_000.0),
    "inst_cycles_per_warp_inst": (0.01, 100.0),
    "inst_latency_cycles": (0.5, 1_000.0),
    "fp_latency_cycles": (0.5, 1_000.0),
    "dram_bandwidth_gbps": (1.0, 100_000.0),
    "barrier_cycles": (0.1, 1e6),
    "smem_conflict_replay_cycles": (0.01, 1_000.0),
    "warp_size": (1, 1024),
}
# Sizes that must be powers of two; fields that may be 0.
_POW2 = ("l2_sector_bytes", "l1_fetch_bytes", "l2_dram_fetch_bytes", "warp_size")
_ZERO_OK = ("shared_mem_reserved_per_block_bytes",)


def value_problem(key: str, value: Any) -> str | None:
    """Why a calibrated value cannot be right, or None: not a positive finite number, not a
    power of two (line and sector sizes), outside the plausible range of its field."""
    if isinstance(value, str):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "not a number"
    if not math.isfinite(value):
        return "not a finite number"
    if value < 0 or (value == 0 and key not in _ZERO_OK):
        return "not a positive number"
    if key in _POW2 and (value != int(value) or int(value) & (int(value) - 1)):
        return "not a power of two"
    lo, hi = VALUE_RANGES.get(key, (0.0, math.inf))
    if not lo <= value <= hi:
        return f"outside the plausible range [{lo:g}, {hi:g}]"
    return None


def _screen(table: dict, notes: list, kept: str) -> None:
    for key, m in list(table.items()):
        why = value_problem(key, m.value)
        if why:
            notes.append(f"{key}: measured {m.value!r} is {why}; {kept}")
            del table[key]


_RAW_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, ZeroDivisionError)


def _sm_count(raw: Mapping[str, Any], props: Mapping) -> int:
    """The SMs the props benchmark (else any benchmark) reports; 1 when none does."""
    try:
        sms = int(
            props.get("sm_count")
            or next(
                (r["sm_count"] for r in raw.values() if isinstance(r, Mapping) and "sm_count" in r),
                1,
            )
        )
    except _RAW_ERRORS:
        sms = 1
    return sms


def _benchmark_steps(step: Callable[[str, Callable[[dict, dict], None]], None],
                     raw: Mapping[str, Any], out: dict[str, Measured], notes: list[str],
                     clock: float | None, sms: int, warp: int, l2b: int | None,
                     l2_line_bytes: int, l2_sector_bytes: int) -> None:
    """Each benchmark that ran, analysed by ``step`` in order (the L1 latency after the L2's,
    which it uses; the streams and instruction rates only with a clock)."""

    def rr(name: str) -> Any:
        return raw.get(name)

    if rr("latency_l2"):
        step("latency_l2", lambda o, e: _latency_l2(rr("latency_l2"), l2b, o, e, notes))
    if rr("latency_l1"):
        l2_first = out["l2_latency_cycles"].value if "l2_latency_cycles" in out else None
        step("latency_l1", lambda o, e: _latency_l1(rr("latency_l1"), l2_first, o, e, notes))
    if rr("line_l1"):
        step(
            "line_l1",
            lambda o, e: e.update(
                l1_fetch_bytes=Measured(
                    fetch_granularity(rr("line_l1")["values"], rr("line_l1")["cycles_per_access"]),
                    "first-touch stride sweep: L1 fetch granularity",
                    _accuracy(rr("line_l1")),
                )
            ),
        )
    if rr("line_l2"):
        step(
            "line_l2",
            lambda o, e: _line_l2(rr("line_l2"), l2_line_bytes, l2_sector_bytes, o, e, notes),
        )
    if rr("smem"):
        step("smem", lambda o, e: _smem(rr("smem"), o, e))
    for name, key in (("stream_l2", "dd_l2_cycles"), ("stream_dram", "dd_dram_cycles")):
        if rr(name) and clock:
            step(
                name,
                lambda o, e, name=name, key=key: _stream(
                    rr(name), key, clock, sms, l2_sector_bytes, o, notes
                ),
            )
    if rr("bandwidth"):
        step("bandwidth", lambda o, e: _bandwidth(rr("bandwidth"), o))
    if rr("inst") and clock:
        step("inst", lambda o, e: _inst(rr("inst"), clock, sms, warp, o, e))
    if rr("barrier"):
        step("barrier", lambda o, e: _barrier(rr("barrier"), e))


def analyse(
    raw: Mapping[str, Any],
    l2_line_bytes: int,
    l2_ways: int,
    *,
    l2_sector_bytes: int = 32,
    l2_bytes: int | None = None,
) -> Analysis:
    """Device parameters from the raw results of the micro-benchmarks that ran.

    `raw` maps a benchmark name (props, latency_l1, latency_l2, line_l1, line_l2, smem,
    stream_l2, stream_dram, bandwidth, inst, barrier, energy) to its JSON object; missing
    benchmarks leave their fields unmeasured, and so do raw results that cannot be analysed
    (with a note). l2_line_bytes and l2_ways (of the base file) decide whether the runtime's
    L2 size can be written (it must be a multiple of both); l2_sector_bytes (of the base file)
    is the transaction the dd_* fields are per; l2_bytes (the base's, when the runtime gives
    none) tells the DRAM footprints of the L2 sweep. Values that fail `value_problem` are
    left out (with a note).
    """
    out: dict[str, Measured] = {}
    extra: dict[str, Measured] = {}
    energy: dict[str, Measured] = {}
    notes: list[str] = []

    def step(name: str, fn: Callable[[dict, dict], None]) -> None:
        """Run one benchmark's analysis; its fields are kept only if it completes."""
        if not isinstance(raw.get(name, {}), Mapping):
            notes.append(f"{name}: raw results are not an object; its fields keep the base values")
            return
        o: dict[str, Measured] = {}
        e: dict[str, Measured] = {}
        try:
            fn(o, e)
        except _RAW_ERRORS as exc:
            notes.append(
                f"{name}: cannot analyse the raw results ({type(exc).__name__}: {exc}); "
                "its fields keep the base values"
            )
            return
        out.update(o)
        extra.update(e)

    props = raw.get("props") if isinstance(raw.get("props"), Mapping) else {}
    step("props", lambda o, e: _props(props, l2_line_bytes * l2_ways, o, notes))
    clock = _clock(raw)
    if clock:
        out["clock_mhz"] = Measured(
            round(clock, 1),
            "clock64() cycles over event time of a "
            "spin kernel on every SM (median over the benchmarks)",
        )
    sms = _sm_count(raw, props)
    warp = props.get("warp_size", 32)
    warp = warp if isinstance(warp, int) and warp > 0 else 32
    l2b = props.get("l2_bytes") if isinstance(props.get("l2_bytes"), int) else None
    l2b = l2b or l2_bytes

    _benchmark_steps(step, raw, out, notes, clock, sms, warp, l2b, l2_line_bytes, l2_sector_bytes)
    _screen(out, notes, "base kept")
    parts = [out.get(k) for k in ("l2_latency_cycles", "dram_latency_cycles", "dd_dram_cycles")]
    if all(parts):
        out["smem_load_cycles"] = Measured(
            round(sum(p.value for p in parts), 1),
            "measured L2 + DRAM latency + dd_dram",
            kind="derived",
        )
    _screen(out, notes, "base kept")
    _screen(extra, notes, "left out")
    if isinstance(raw.get("energy"), Mapping):
        try:
            _energy(raw, energy, notes)
        except (*_RAW_ERRORS, np.linalg.LinAlgError) as exc:
            notes.append(f"energy: cannot fit the runs ({type(exc).__name__}: {exc})")
            energy.clear()
    _screen(energy, notes, "left out")
    return Analysis(out, energy, extra, tuple(notes))
