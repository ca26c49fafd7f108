"""A warp with a scheduler to itself: its own dependence chain, eq. (22k).

§3 (22) reads a warp's timeline when too few warps hide it as its memory periods one after
another plus its computing (docs/models.md). When an SM holds no more warps than it has
schedulers (``schedulers_per_sm``: 4 on sm_90), each warp issues alone on its scheduler, so
its time is the path its instructions' dependences leave in issue order: the loads of one
ptxas block in flight together, each op behind the slow-path branches before it
(issue_blocks, eqs. (IB1)-(IB2)). (22) charges those loads one after another. Measured on the
H100 (event times, ``nvidia-h100-80gb-hbm3-user-blocks.json``, 1980 MHz): the user kernel
nbody_f64 runs 435.6 cycles an inner iteration at one warp an SM (32x1) and 446.6 at four
(128x1), where (22) gave 735 and 487; its critical path with (IB1)-(IB2) is 415 and 414.
"""

from __future__ import annotations

from cgpredict.devices import GPUDevice
from cgpredict.profile import KernelProfile

__all__ = ["alone_cycles"]


def alone_cycles(profile: KernelProfile, device: GPUDevice, n: float, comp: float) -> float:
    """Eq. (22k): a warp's timeline when each of the SM's ``n`` warps has a scheduler to
    itself (n <= schedulers_per_sm): its critical path (profile.chain_cycles), at least its
    instructions at one a cycle (``comp``: its issue cycles at the SM's rate of
    schedulers_per_sm a cycle); 0 when warps share a scheduler."""
    if n > device.schedulers_per_sm or profile.chain_cycles <= 0:
        return 0.0
    return max(profile.chain_cycles, comp * device.schedulers_per_sm)
