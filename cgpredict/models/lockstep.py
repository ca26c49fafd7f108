"""Misses in step: the latency the N warps of an SM expose when they miss the L1 together.

On a GPU whose L1 caches global loads, a row walk (each thread reading its own row, element
by element) is served by the L1 seven iterations in eight and goes beyond it on the eighth,
when a new 32-byte sector starts. The N warps of an SM run the same loop from the same start
in step, so all of them miss in that same iteration and wait together; while they wait, the
SM has only the other warps' work of the same memory period to do. Two places read it:

* the compute-bound case of the CGPredict model, eq. (17l): the work hiding a miss is the
  other warps' computing (``comp_cycles`` a warp);
* the L1 path bound, eq. (B2l) (models/bounds.py): the work hiding a miss is the other
  warps' lines through the SM's L1 (``l1_path_cycles`` a warp), so the L1 idles for the
  rest of the miss's latency, once for the N warps.
"""

from __future__ import annotations

from cgpredict.devices import GPUDevice
from cgpredict.profile import KernelProfile

__all__ = ["lockstep_cycles"]


def lockstep_cycles(profile: KernelProfile, device: GPUDevice, n: float,
                    work_cycles: float, no_mem_insts: float) -> float:
    """A warp's exposed latency beyond the L1 when its SM's N warps miss in step, eqs. (17l)
    and (B2l): each load that goes beyond the L1 (a pattern's ``insts x (1 -
    l1_hit_fraction)``, for the patterns the L1 serves in part) waits its L2 latency plus
    the DRAM latency for the share of its sectors that miss (SPEC (2)), less one memory
    period (``work_cycles / no_mem_insts`` x MLP loads) of the other N - 1 warps' work.
    ``work_cycles``: a warp's work that can hide a miss, its computing (17l) or its lines
    through the L1 (B2l). ``profile``: loads only."""
    if n <= 0 or no_mem_insts <= 0:
        return 0.0
    hidden = (n - 1) * work_cycles / no_mem_insts * max(profile.mlp, 1.0)
    exposed = 0.0
    for p in (profile.coal, profile.uncoal, profile.const):
        beyond = p.insts * (1 - p.l1_hit_fraction)
        if beyond <= 0 or p.l1_hit_fraction <= 0:
            continue  # no L1 in step: the misses are not synchronised by it
        miss = min(p.dram_trans_per_warp / max(p.l2_trans_per_warp, 1.0), 1.0)
        latency = device.l2_latency_cycles + miss * device.dram_latency_cycles  # SPEC (2)
        exposed += beyond * max(latency - hidden, 0.0)
    return exposed
