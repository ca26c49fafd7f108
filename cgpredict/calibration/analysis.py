"""Analysis of the calibration micro-benchmarks: raw numbers in, device parameters out (SPEC §6).

Every function here is pure (no GPU, no files) so that it can be tested on synthetic data. The
micro-benchmarks (`cgpredict/calibration/microbench/*.cu`) print raw cycles, times and counts;
`analyse` turns one dictionary of those raw results (benchmark name -> its JSON object) into
`Measured` values keyed by device-file field name. `cgpredict.calibration.run` runs the
programs and writes the device file. The curve fits it uses are in `curves`, the energy fit in
`energy_fit`, the plausibility of a value in `sanity`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .curves import (
    bank_conflict_cost,
    departure_delay,
    fetch_granularity,
    find_plateaus,
    sectors_per_warp,
    warp_insts_per_cycle,
)
from .energy_fit import energy_runs, fit_energy
from .sanity import screen

__all__ = [
    "Analysis",
    "Measured",
    "analyse",
]


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


# ---- latency curves --------------------------------------------------------------------
# ---- fits ------------------------------------------------------------------------------
# ---- energy ------------------------------------------------------------------------------
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


#: the inst benchmark's dependent-chain latencies: (raw key, device field, how measured)
_LATENCY_FIELDS = (
    ("int32_latency_cycles", "inst_latency_cycles", "dependent mad.lo.s32 chain"),
    ("fp32_latency_cycles", "fp_latency_cycles", "dependent fma.rn.f32 chain"),
    ("fp64_latency_cycles", "fp64_latency_cycles", "dependent fma.rn.f64 chain"),
    ("sfu_latency_cycles", "sfu_latency_cycles", "dependent rsqrt.approx.f32 (MUFU.RSQ) chain"),
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
    for raw, name, how in _LATENCY_FIELDS:
        if raw in r:
            out[name] = Measured(round(r[raw], 2), how, acc)


def _barrier(r: Mapping[str, Any], extra: dict) -> None:
    cyc = dict(zip(r["threads"], r["cycles_per_barrier"]))
    pick = 256 if 256 in cyc else max(cyc)
    extra["barrier_cycles"] = Measured(
        round(cyc[pick], 1),
        f"__syncthreads of a {pick}-thread block, one block per SM",
        _accuracy(r),
    )


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
    screen(out, notes, "base kept")
    parts = [out.get(k) for k in ("l2_latency_cycles", "dram_latency_cycles", "dd_dram_cycles")]
    if all(parts):
        out["smem_load_cycles"] = Measured(
            round(sum(p.value for p in parts), 1),
            "measured L2 + DRAM latency + dd_dram",
            kind="derived",
        )
    screen(out, notes, "base kept")
    screen(extra, notes, "left out")
    if isinstance(raw.get("energy"), Mapping):
        try:
            _energy(raw, energy, notes)
        except (*_RAW_ERRORS, np.linalg.LinAlgError) as exc:
            notes.append(f"energy: cannot fit the runs ({type(exc).__name__}: {exc})")
            energy.clear()
    screen(energy, notes, "left out")
    return Analysis(out, energy, extra, tuple(notes))
