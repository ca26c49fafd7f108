"""Predicted energy of a kernel from a device file's [energy] table (SPEC §6).

energy = Σ_class ops_class * E_class + Σ_level transactions_level * E_level
         (+ static_power_w * time, when the device file has it)

Operation counts are per thread in the profile and multiplied by the threads of every launch:
SFU ops at sfu_op_nj, the other floating-point ops at fp32_op_nj, the remaining compute ops
(integer, compare, branch, address arithmetic) at int32_op_nj. `KernelProfile` does not split
FP64 from FP32, so fp64_op_nj is not used yet. Transactions are per warp instruction: DRAM
transactions = Σ_P dram_trans_per_warp * insts_P * warps (P = coalesced, uncoalesced,
constant), L2 transactions likewise with l2_trans_per_warp, shared-memory transactions =
Σ X * n * warps over the (conflict degree X, accesses n) pairs of a tiled kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cgpredict.devices import GPUDevice
from cgpredict.profile import KernelProfile

__all__ = ["EnergyEstimate", "predict_energy"]


@dataclass(frozen=True)
class EnergyEstimate:
    """Predicted energy in millijoules, with its parts.

    components: (name, mJ) pairs, name one of fp32, int32, sfu, dram, l2, smem, static.
    missing: components with a non-zero count but no energy figure in the device file.
    """

    total_mj: float
    components: tuple[tuple[str, float], ...]
    missing: tuple[str, ...] = ()

    @property
    def static_mj(self) -> float:
        return dict(self.components).get("static", 0.0)

    @property
    def dynamic_mj(self) -> float:
        return self.total_mj - self.static_mj


def _counts(profile: KernelProfile, warp_size: int) -> dict[str, tuple[str, float]]:
    """Component -> (energy field, count over all launches)."""
    threads = profile.threads * profile.launches
    warps = math.ceil(profile.threads_per_block / warp_size) * profile.blocks * profile.launches
    sfu = profile.sfu_insts
    fp = max(profile.fp_insts - sfu, 0.0)  # SFU ops are floating point: counted once, as SFU
    integer = max(profile.comp_insts - fp - sfu, 0.0)
    pats = (profile.coal, profile.uncoal, profile.const)
    smem = profile.shared.transactions
    return {
        "fp32": ("fp32_op_nj", fp * threads),
        "int32": ("int32_op_nj", integer * threads),
        "sfu": ("sfu_op_nj", sfu * threads),
        "dram": ("dram_transaction_nj", sum(p.dram_trans_per_warp * p.insts for p in pats) * warps),
        "l2": ("l2_transaction_nj", sum(p.l2_trans_per_warp * p.insts for p in pats) * warps),
        "smem": ("smem_transaction_nj", smem * warps),
    }


def predict_energy(
    profile: KernelProfile, device: GPUDevice, time_ms: float
) -> EnergyEstimate | None:
    """Energy of `profile` on `device` running `time_ms`; None without an [energy] table."""
    table = device.energy
    if table is None:
        return None
    parts: list[tuple[str, float]] = []
    missing: list[str] = []
    for name, (key, count) in _counts(profile, device.warp_size).items():
        nj = getattr(table, key, None)
        if nj is None:
            if count > 0:
                missing.append(name)
            continue
        parts.append((name, count * nj * 1e-6))
    static_w = getattr(table, "static_power_w", None)  # proposed schema key
    if static_w is not None:
        parts.append(("static", static_w * time_ms))  # W * ms = mJ
    return EnergyEstimate(sum(v for _, v in parts), tuple(parts), tuple(missing))
