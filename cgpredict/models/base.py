"""Pieces every analytical model shares: the common result and the launch geometry."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from cgpredict.devices import GPUDevice
from cgpredict.occupancy import Occupancy, occupancy
from cgpredict.profile import KernelProfile

__all__ = ["Bound", "LaunchGeometry", "ModelDetails", "ModelResult", "launch_geometry"]

Bound = Literal["memory", "compute", "latency"]  # latency: a thread's own critical path


class ModelDetails(Protocol):
    """What every model-specific result exposes, so `predict` can summarise it."""

    cycles: float
    time_ms: float
    bound: Bound
    mwp: float
    cwp: float
    n_warps: int
    b_blocks: int
    case: str


@dataclass(frozen=True)
class ModelResult:
    """The model-independent summary of one prediction; `details` is the model's own result."""

    model: str
    cycles: float
    time_ms: float
    bound: Bound
    mwp: float
    cwp: float
    n_warps: int
    b_blocks: int
    case: str
    details: ModelDetails  # the model's own result (hongkim, gpuperf, cgpredict_model)
    # what the model's own time was before the physical bounds (models/bounds.py), the
    # bounds and which one binds ("model" when none does)
    model_cycles: float = 0.0
    bounds: Any = None
    binding: str = "model"


@dataclass(frozen=True)
class LaunchGeometry:
    """How a launch's blocks spread over the SMs.

    occupancy: the calculator's result (B_max, N_max). active_sms: min(sm_count, blocks).
    b_blocks: B = min(B_max, ceil(blocks / active_sms)), the blocks an SM really holds (a
    launch smaller than one full wave cannot fill the occupancy limit). n_warps: N = B *
    warps_per_block. waves: blocks / (B * active_sms), at least 1 (the busiest SM always runs
    one full set of B blocks; SPEC eq. (15) with the multi-SM spread, §3 eq. (21)).
    total_warps: every warp of the launch.
    """

    occupancy: Occupancy
    active_sms: int
    b_blocks: int
    n_warps: int
    waves: float
    total_warps: int
    warps_per_block: int


def launch_geometry(
    profile: KernelProfile, device: GPUDevice, occ: Occupancy | None = None
) -> LaunchGeometry:
    """B, N, active SMs and waves of `profile`'s launch on `device`."""
    if profile.blocks <= 0:
        raise ValueError(f"{profile.name}: blocks must be positive, got {profile.blocks}")
    if occ is None:
        occ = occupancy(
            device,
            profile.threads_per_block,
            profile.registers_per_thread,
            profile.shared.bytes_per_block,
        )
    active_sms = min(device.sm_count, profile.blocks)
    b = min(occ.blocks_per_sm, math.ceil(profile.blocks / active_sms))
    waves = max(profile.blocks / (b * active_sms), 1.0)
    return LaunchGeometry(
        occupancy=occ,
        active_sms=active_sms,
        b_blocks=b,
        n_warps=b * occ.warps_per_block,
        waves=waves,
        total_warps=profile.blocks * occ.warps_per_block,
        warps_per_block=occ.warps_per_block,
    )
