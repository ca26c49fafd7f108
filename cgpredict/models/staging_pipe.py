"""The hidden staging's own passes through the shared pipe, eq. (22e) of docs/models.md.

Eq. (22d) lets the share of a tiled kernel's staging issue that a staging block leaves free
hide under the other resident blocks' shared loads. That staging is not only issue: each
staged element is a global load (`LDG`) whose data returns through the L1's data stage and a
shared store (`STS`) that writes through it, the same pipe, one pass (wavefront) a line, that
the shared loads (eq. (20)) occupy. While a staging block's copy overlaps the other blocks'
shared loads, the pipe serves both, so the overlapped phase lasts the shared loads' passes
plus the hidden share of the staging's passes:

    staging_passes = load_insts x (1 + ceil(sectors a staging load / 4))
    extra          = (hidden / staging) x staging_passes x smem_issue_cycles        (22e)

Where nothing hides (one block resident, a block of 8 or more warps a scheduler, the Kepler
TK1) the staging runs while the pipe has no shared load to serve and (22e) adds nothing.
Evidence: Nsight Compute of GEMM, 2MM and 3MM tiled at 32x8 (`l1tex__data_pipe_lsu_wavefronts`
= shared + global data-stage passes; `validation/measured/h100-session-2026-11-27b/counters/`):
gemm_tiled 1024 32x8 runs 48.0 shared-load, 5.2 shared-store and 5.3 global-load passes a warp
a strip (1537, 166 and 170 a warp over 32 strips), the model's pipe term counted the 48 only.
"""

from __future__ import annotations

import math

from cgpredict.devices import GPUDevice
from cgpredict.profile import KernelProfile

__all__ = ["staging_passes", "hidden_staging_pipe_cycles"]

# a line of the L1 a data-stage pass: 4 sectors of 32 bytes (128 B)
_SECTORS_A_PASS = 4


def staging_passes(profile: KernelProfile) -> float:
    """Data-stage passes of a warp's tile staging: each staging load's lines (its L2 sectors
    over 4, rounded up) and one shared store of 32 lanes x 4 bytes (one pass) a load."""
    sh = profile.shared
    if sh.load_insts <= 0:
        return 0.0
    sectors = sh.load_l2_trans / sh.load_insts
    lines = max(math.ceil(sectors / _SECTORS_A_PASS - 1e-9), 1)
    return sh.load_insts * (1 + lines)


def hidden_staging_pipe_cycles(profile: KernelProfile, device: GPUDevice, staging: float,
                               hidden: float) -> float:
    """Shared-pipe cycles the hidden share of a warp's staging adds, eq. (22e): its loads'
    and stores' passes while the pipe also serves other blocks' shared loads."""
    if staging <= 0 or hidden <= 0:
        return 0.0
    return hidden / staging * staging_passes(profile) * device.smem_issue_cycles  # (22e)
