"""Analytical models: each a pure function (profile, device, options) -> frozen result.

`MODELS` maps a model name to its predict function; `predict` dispatches by name and wraps the
model's own result (kept as `details`) in the common `ModelResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cgpredict.devices import GPUDevice
from cgpredict.models.base import LaunchGeometry, ModelDetails, ModelResult, launch_geometry
from cgpredict.models.bounds import Bounds, launch_bounds
from cgpredict.models.cgpredict_model import CGPredictResult, predict_cgpredict, sm_figures
from cgpredict.models.gpuperf import GPUPerfResult, predict_gpuperf
from cgpredict.models.hongkim import (
    HongKimInputs,
    HongKimResult,
    hongkim_inputs,
    hongkim_raw,
    predict_hongkim,
)
from cgpredict.models.launches import (
    DEFAULT_SYNC,
    KernelTime,
    kernel_time,
    module_load_ms,
    program_sync_ms,
)
from cgpredict.profile import KernelProfile

__all__ = [
    "MODELS",
    "Bounds",
    "bound_text",
    "CGPredictResult",
    "GPUPerfResult",
    "HongKimInputs",
    "HongKimResult",
    "LaunchGeometry",
    "ModelResult",
    "hongkim_inputs",
    "DEFAULT_SYNC",
    "KernelTime",
    "kernel_parts",
    "module_load_ms",
    "kernel_time",
    "program_sync_ms",
    "hongkim_raw",
    "launch_bounds",
    "launch_geometry",
    "predict",
    "predict_cgpredict",
    "predict_gpuperf",
    "predict_hongkim",
]

#: what a binding physical bound makes the kernel: the chain is a thread's own latency
_BOUND_KIND = {"dram": "memory", "l2": "memory", "issue": "compute", "chain": "latency",
               "atomic": "memory", "pipe": "compute", "l1": "memory", "dispatch": "launch",
               "phases": "memory"}

MODELS: dict[str, Callable[..., Any]] = {
    "cgpredict": predict_cgpredict,
    "hongkim": predict_hongkim,
    "gpuperf": predict_gpuperf,
}


def predict(
    profile: KernelProfile, device: GPUDevice, model: str = "cgpredict", **options: Any
) -> ModelResult:
    """Run model `model` (a key of MODELS) with its keyword `options`; return the summary.

    Every model sees the loads as the memory instructions a warp waits for and the stores as
    issued instructions (a warp does not wait for its stores); the physical bounds of
    models/bounds.py (DRAM traffic, issue, L2 path, stores included) then floor its time, and
    the launch stream's costs are added per kernel (models/launches.py), not here."""
    try:
        fn = MODELS[model]
    except KeyError:
        raise ValueError(f"unknown model {model!r}; expected one of {sorted(MODELS)}") from None
    d: ModelDetails = fn(profile.loads_only(), device, **options)
    launches = max(profile.launches, 1)
    bounds = launch_bounds(profile, device, launch_geometry(profile, device))
    per_launch = d.cycles / launches
    binding = "model" if per_launch >= bounds.cycles else bounds.binding
    cycles = max(per_launch, bounds.cycles) * launches
    bound = d.bound if binding == "model" else _BOUND_KIND[binding]
    return ModelResult(
        model=model,
        cycles=cycles,
        time_ms=device.cycles_to_ms(cycles),
        bound=bound,
        mwp=d.mwp,
        cwp=d.cwp,
        n_warps=d.n_warps,
        b_blocks=d.b_blocks,
        case=d.case,
        details=d,
        model_cycles=d.cycles,
        bounds=bounds,
        binding=binding,
    )


def kernel_parts(
    launches: Sequence[tuple[KernelProfile, float]],
    device: GPUDevice,
    model: str = "cgpredict",
    sync: str = DEFAULT_SYNC,
    **options: Any,
) -> KernelTime:
    """Time of all launches of one kernel, in parts: each (profile, how many launches it
    stands for) predicted once, plus the launch stream's costs (models/launches.py)."""
    return kernel_time(
        [(predict(p, device, model, **options).time_ms, w) for p, w in launches], device, sync
    )


def bound_text(result: ModelResult) -> str:
    """The bound label with the figures it rests on: an SM's compute and memory cycles (the
    cgpredict model's own time), or the physical bound that sets the time; a memory bound
    with MWP = N (too few warps to cover the loads' latency, whatever DRAM traffic) is named
    memory-latency-bound."""
    d = result.details
    if result.binding == "pipe":
        return f"{result.bound}-bound (the {result.bounds.pipe} pipe bound sets the time)"
    if result.binding != "model":
        return f"{result.bound}-bound (the {result.binding} bound sets the time)"
    need = ("comp_cycles", "mem_cycles", "n_warps", "mwp")
    if not all(hasattr(d, a) for a in need):
        return f"{result.bound}-bound"
    # MWP = N: every warp may wait at memory at once, neither the departure delay nor the
    # DRAM bandwidth holds them back: the time is the loads' latency
    latency = result.bound == "memory" and d.mwp >= d.n_warps
    comp, mem = sm_figures(d.comp_cycles, d.mem_cycles, d.n_warps, d.mwp)
    label = "memory-latency" if latency else result.bound
    b = getattr(result, "bounds", None)
    # eq. (12p): a warp's computing time is its busiest pipe's when that exceeds the dispatch
    pipe = (f", the {b.pipe} pipe's" if b is not None and b.pipe
            and b.pipe_cycles > b.issue_cycles else "")
    own = getattr(d, "own_comp_cycles", 0.0)
    # eq. (22c): too few warps, a warp's own computing waits for its dependent latencies
    chain = (f"; a warp's own computing {own:.4g} cycles, its dependent latencies (22c)"
             if getattr(d, "case", "") == "eq22" and own > d.comp_cycles * (1 + 1e-9) else "")
    overlap = getattr(d, "own_overlap", 1.0)
    if getattr(d, "case", "") == "eq22" and overlap > 1 + 1e-9:  # eq. (22m)
        chain += f"; a warp's own memory periods {overlap:.3g} in flight (22m)"
    retire = getattr(d, "retire_cycles", 0.0)
    if retire > 0 and getattr(d, "batch", 0.0) > 1:  # eqs. (R1), (R1w): any case
        chain += f"; blocks retire {retire:.4g} cycles after their mean warp (R1)"
    lockstep = getattr(d, "lockstep_cycles", 0.0)
    if getattr(d, "case", "") == "eq17" and lockstep > 0:  # eq. (17l)
        chain += f"; its warps miss the L1 in step, {lockstep:.4g} cycles exposed (17l)"
    return (
        f"{label}-bound (per SM: compute {comp:.4g} = {d.n_warps:g} warps x "
        f"{d.comp_cycles:.4g} cycles{pipe}, memory {mem:.4g} = {d.n_warps:g} x "
        f"{d.mem_cycles:.4g} / MWP {d.mwp:.2f}{chain})"
    )
