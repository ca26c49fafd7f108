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

``L*`` is the life while the DRAM also takes the launch's write-backs. A launch whose
stores stay in the L2 (the program's only launch, its written bytes within one L2 partition,
``l2_persist_bytes``) leaves the DRAM its reads alone, and its warps live the shorter
``dram_light_life_cycles`` in SM cycles (eq. (LWl)): Nsight Compute writes 1.6-2.6 MB to
DRAM of the 16.8 MB that sfu_heavy (2^22) and 2DCONV 2048^2 store, and their lives are SM
cycles (their time scales with the SM clock), where the 4096^2 stencils' write-backs make
theirs nanoseconds of a loaded DRAM:

    life = dram_light_life_cycles  if the program's one launch stores <= l2_persist_bytes (LWl)
           dram_loaded_latency_cycles otherwise
"""

from __future__ import annotations

import math

from cgpredict.devices import GPUDevice
from cgpredict.models.retire import retire_cycles
from cgpredict.profile import KernelProfile

__all__ = ["loaded_life_cycles", "loaded_wave_cycles", "stores_stay_in_l2"]


def stores_stay_in_l2(profile: KernelProfile, device: GPUDevice) -> bool:
    """Whether one launch's write-backs stay in the L2 past it, eq. (LWl): it is the
    program's only launch (no earlier one left dirty lines to evict) and stores, and its
    written sectors (every warp's) fit one L2 partition (``l2_persist_bytes``), so none is
    evicted to DRAM while it runs."""
    written = profile.stores.write_back_trans
    if profile.program_launches != 1 or written <= 0:
        return False
    warps = profile.blocks * math.ceil(profile.threads_per_block / max(device.warp_size, 1))
    return warps * written * device.l2_sector_bytes <= device.persist_bytes


def loaded_life_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """A one-pass warp's life in (LW): ``dram_light_life_cycles`` when the launch's stores
    stay in the L2 (the DRAM takes its reads alone), else ``dram_loaded_latency_cycles``,
    eq. (LWl); never above the loaded life."""
    life = device.dram_loaded_latency_cycles
    light = device.dram_light_life_cycles
    if light > 0 and stores_stay_in_l2(profile, device):
        return min(light, life)  # (LWl)
    return life


def loaded_wave_cycles(profile: KernelProfile, device: GPUDevice, waves: float,
                       dram_loads: float) -> float:
    """Eq. (LW): ``waves`` counted whole (a partial last wave still lives a loaded warp
    life), each one loaded warp life (eq. (LWl): a light one if the stores stay in the L2),
    plus (R1) at each handover; 0 without the device field or when no load reaches DRAM."""
    life = loaded_life_cycles(profile, device)  # (LWl)
    if life <= 0 or dram_loads <= 0:
        return 0.0
    whole = max(math.ceil(waves - 1e-9), 1)
    return whole * life + (whole - 1) * retire_cycles(profile, device)  # (LW)
