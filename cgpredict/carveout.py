"""The L1 a launch sees: the combined L1/shared array less the shared carve-out the driver
picks for its block shape and shared memory (docs/models.md, eq. (SC1)-(SC3)).

On GPUs whose L1 and shared memory are one SRAM (Volta and later) the driver splits the
array per launch into shared memory of one of a few capacities (device field
``shared_carveouts_kb``; cc 9.0: 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB, CUDA C
Programming Guide) and leaves the rest to the L1. The choice is a hint-driven driver
policy that NVIDIA does not publish; Nsight Compute reports it as
``launch__shared_mem_config_size``. What the H100 launches measured in this project show
(validation/measured, every ncu CSV with that metric):

* a launch with no shared memory of its own: 32 KB at 32, 128 and 256 threads a block
  (16 to 60 registers a thread), 8 KB at 1024 threads; the 1 KB each block reserves, for
  ``carveout_blocks_factor`` (4) times the blocks the warp limit admits, at most
  ``max_blocks_per_sm`` (32): 32, 32, 32 and 8 blocks                          (SC1)
* a launch with shared memory: its occupancy's blocks, each its shared bytes plus the
  1 KB, rounded to the allocation unit (the 32x32 tiled ports: 32, 16 and 32 KB as
  measured; the 32x8 ones get more than that, 100 and 132 KB against 64)        (SC1s)
* the carve-out is the smallest capacity holding that, the largest when none does (SC2)
* the L1 is the array less the carve-out                                       (SC3)
"""

from __future__ import annotations

from dataclasses import dataclass

from cgpredict.devices import GPUDevice
from cgpredict.occupancy import occupancy, round_up

__all__ = ["Carveout", "launch_carveout"]

_KB = 1024


@dataclass(frozen=True)
class Carveout:
    """One launch's split of the L1/shared array: ``shared_bytes`` the driver gives shared
    memory, ``l1_bytes`` what the L1 keeps; ``provisioned_blocks`` the blocks whose shared
    memory (and 1 KB reservation) the carve-out is sized for (eq. (SC1))."""

    shared_bytes: int
    l1_bytes: int
    provisioned_blocks: int


def _provisioned_blocks(device: GPUDevice, threads: int, registers: int,
                        shared_bytes: int) -> int:
    """Blocks the driver sizes the carve-out for, eq. (SC1) / (SC1s)."""
    occ = occupancy(device, threads, registers, shared_bytes)
    if shared_bytes == 0 and device.carveout_blocks_factor:  # the warp limit's blocks
        return min(device.max_blocks_per_sm, device.carveout_blocks_factor * occ.limit_warps)
    return occ.blocks_per_sm


def launch_carveout(device: GPUDevice, threads: int, registers: int = 0,
                    shared_bytes: int = 0) -> Carveout:
    """The carve-out a launch of ``threads``-thread blocks with ``shared_bytes`` of shared
    memory a block and ``registers`` a thread gets, and the L1 left, eq. (SC1)-(SC3). A
    device without ``shared_carveouts_kb`` keeps ``l1_bytes`` as its L1 whatever the launch."""
    if not device.shared_carveouts_kb:
        return Carveout(0, device.l1_bytes, 0)
    blocks = _provisioned_blocks(device, threads, registers, shared_bytes)
    per_block = round_up(shared_bytes + device.shared_mem_reserved_per_block_bytes,
                         max(device.shared_mem_alloc_unit_bytes, 1))
    need = blocks * per_block  # (SC1)
    sizes = [kb * _KB for kb in device.shared_carveouts_kb]
    shared = next((c for c in sizes if c >= need), sizes[-1])  # (SC2)
    return Carveout(shared, device.l1_bytes - shared, blocks)  # (SC3)
