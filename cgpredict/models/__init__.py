"""Analytical models: each a pure function (profile, device, options) -> frozen result.

`MODELS` maps a model name to its predict function; `predict` dispatches by name and wraps the
model's own result (kept as `details`) in the common `ModelResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cgpredict.devices import GPUDevice
from cgpredict.models.base import LaunchGeometry, ModelDetails, ModelResult, launch_geometry
from cgpredict.models.cgpredict_model import CGPredictResult, predict_cgpredict
from cgpredict.models.gpuperf import GPUPerfResult, predict_gpuperf
from cgpredict.models.hongkim import (
    HongKimInputs,
    HongKimResult,
    hongkim_inputs,
    hongkim_raw,
    predict_hongkim,
)
from cgpredict.profile import KernelProfile

__all__ = [
    "MODELS",
    "CGPredictResult",
    "GPUPerfResult",
    "HongKimInputs",
    "HongKimResult",
    "LaunchGeometry",
    "ModelResult",
    "hongkim_inputs",
    "hongkim_raw",
    "launch_geometry",
    "predict",
    "predict_cgpredict",
    "predict_gpuperf",
    "predict_hongkim",
]

MODELS: dict[str, Callable[..., Any]] = {
    "cgpredict": predict_cgpredict,
    "hongkim": predict_hongkim,
    "gpuperf": predict_gpuperf,
}


def predict(
    profile: KernelProfile, device: GPUDevice, model: str = "cgpredict", **options: Any
) -> ModelResult:
    """Run model `model` (a key of MODELS) with its keyword `options`; return the summary."""
    try:
        fn = MODELS[model]
    except KeyError:
        raise ValueError(f"unknown model {model!r}; expected one of {sorted(MODELS)}") from None
    d: ModelDetails = fn(profile, device, **options)
    return ModelResult(
        model=model,
        cycles=d.cycles,
        time_ms=d.time_ms,
        bound=d.bound,
        mwp=d.mwp,
        cwp=d.cwp,
        n_warps=d.n_warps,
        b_blocks=d.b_blocks,
        case=d.case,
        details=d,
    )
