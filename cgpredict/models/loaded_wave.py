"""The loaded wave: a wave of one-pass warps lasts a loaded warp life plus its blocks' tail.

A kernel whose warps each make one pass through memory (a stencil, SAXPY: load, compute,
store, exit) runs as waves of blocks. Nsight Compute's warps-active counters of the H100's
2-D stencils (issue 24, ``validation/stencil_shapes.py``) split each wave into two parts:

* a warp's life ``m = warps active x wave``, 1630-1880 cycles with one DRAM line a warp
  (Jacobi-2D, 2DCONV, sfu_heavy), the same for both block shapes, at 2048² as at 4096²,
  and 2.4-2.7 times the unloaded round trip (685 cycles): the warp issues its loads
  together and waits one round trip under the load that every SM's warps make at once;
* the slots' idle time while a block waits for its last warp: eq. (R1) (retire.py).

So a launch of ``w`` whole waves whose loads reach DRAM lasts at least

    loaded_wave = w x dram_loaded_latency_cycles + (w - 1) x retire_cycles              (LW)

the first term the waves' loaded warp lives, the second the handovers of the blocks' slots
to the next wave (as eq. (22) charges (R1)). It takes the place of the DRAM bound's round
trip a wave (models/bounds.py): that unloaded round trip plus the bytes at the stream
bandwidth exceeded FDTD-2D's measured kernel times at 8 of 20 points, while a wave's time is
not set by its bytes (the same at 2048² and 4096², though 4096² writes ten times the DRAM
bytes). ``dram_loaded_latency_cycles`` = 0 (every device but the H100) keeps the round trip.
"""

from __future__ import annotations

import math

from cgpredict.devices import GPUDevice
from cgpredict.models.retire import retire_cycles
from cgpredict.profile import KernelProfile

__all__ = ["loaded_wave_cycles"]


def loaded_wave_cycles(profile: KernelProfile, device: GPUDevice, waves: float,
                       dram_loads: float) -> float:
    """Eq. (LW): ``waves`` counted whole (a partial last wave still lives a loaded warp
    life), each one loaded warp life, plus (R1) at each handover; 0 without the device field
    or when no load reaches DRAM."""
    life = device.dram_loaded_latency_cycles
    if life <= 0 or dram_loads <= 0:
        return 0.0
    whole = max(math.ceil(waves - 1e-9), 1)
    return whole * life + (whole - 1) * retire_cycles(profile, device)  # (LW)
