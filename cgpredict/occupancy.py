"""Active blocks (B) and warps (N) per SM, as the CUDA occupancy calculator computes them (§2.5).

The arithmetic follows NVIDIA's `cuda_occupancy.h` for compute capability >= 2 (warp allocation
granularity 1):

* warps per block = ceil(threads_per_block / warp_size);
* warp limit      = max_warps_per_sm // warps_per_block;
* block limit     = max_blocks_per_sm;
* register limit  = registers are allocated per warp, regs_per_thread * warp_size rounded up to
  `register_alloc_unit`; each of the `schedulers_per_sm` sub-partitions holds
  registers_per_sm / schedulers_per_sm registers, so warps/SM = (that // regs_per_warp) *
  schedulers_per_sm, and the limit is warps/SM // warps_per_block. A block must also pass the
  per-block check regs_per_warp * roundup(warps_per_block, schedulers_per_sm) <= registers per
  block. Zero registers mean no register limit;
* shared limit    = shared_mem_per_sm_bytes // roundup(shared_bytes_per_block + reserved bytes,
  shared_mem_alloc_unit_bytes); no limit when nothing is allocated.

B is the minimum of the four limits; a launch whose block cannot fit at all raises ValueError.
"""

from __future__ import annotations

from dataclasses import dataclass

from cgpredict.devices import GPUDevice

__all__ = ["BlockDoesNotFit", "Occupancy", "occupancy", "round_up"]

_NO_LIMIT = 1 << 30


class BlockDoesNotFit(ValueError):
    """A launch configuration that the GPU would refuse (no block fits on an SM)."""


def round_up(x: int, unit: int) -> int:
    """``x`` rounded up to a whole number of ``unit`` (an allocation granule)."""
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """Occupancy of one SM for one launch configuration.

    blocks_per_sm: B, active blocks per SM. warps_per_sm: N = B * warps_per_block.
    active_threads: B * threads_per_block (threads actually resident, not warp-rounded).
    limiting_factor: the first of "warps", "blocks", "registers", "shared_memory" whose limit
    equals B (`limiting_factors` lists every one that does). occupancy: N / max_warps_per_sm.
    """

    blocks_per_sm: int
    warps_per_sm: int
    warps_per_block: int
    active_threads: int
    limiting_factor: str
    limiting_factors: tuple[str, ...]
    occupancy: float
    limit_warps: int
    limit_blocks: int
    limit_registers: int
    limit_shared_memory: int


_KEPT: dict[tuple, tuple[GPUDevice, Occupancy]] = {}  # (an int 8 and a float 8.0 differ)
_KEEP_AT_MOST = 4096


def occupancy(
    device: GPUDevice,
    threads_per_block: int,
    registers_per_thread: int = 32,
    shared_bytes_per_block: int = 0,
) -> Occupancy:
    """Active blocks and warps per SM of `device` for one block configuration (kept per
    configuration: a kernel's hundreds of launches share a few; keyed by the device object
    itself, which the entry holds, so that no other device can take its id)."""
    key = (id(device), threads_per_block, registers_per_thread, shared_bytes_per_block,
           type(threads_per_block), type(registers_per_thread), type(shared_bytes_per_block))
    kept = _KEPT.get(key)
    if kept is not None and kept[0] is device:
        return kept[1]
    occ = _occupancy(device, threads_per_block, registers_per_thread, shared_bytes_per_block)
    if len(_KEPT) >= _KEEP_AT_MOST:
        _KEPT.clear()
    _KEPT[key] = (device, occ)
    return occ


def _occupancy(
    device: GPUDevice,
    threads_per_block: int,
    registers_per_thread: int,
    shared_bytes_per_block: int,
) -> Occupancy:
    """Active blocks and warps per SM of `device` for one block configuration."""
    if threads_per_block <= 0:
        raise BlockDoesNotFit(f"threads_per_block must be positive, got {threads_per_block}")
    if threads_per_block > device.max_threads_per_block:
        raise BlockDoesNotFit(
            f"threads_per_block {threads_per_block} exceeds {device.name}'s maximum of "
            f"{device.max_threads_per_block}"
        )
    if registers_per_thread < 0 or registers_per_thread > device.max_registers_per_thread:
        raise BlockDoesNotFit(
            f"registers per thread must be in 0..{device.max_registers_per_thread} on "
            f"{device.name}, got {registers_per_thread}"
        )
    if shared_bytes_per_block < 0 or shared_bytes_per_block > device.shared_mem_per_block_max_bytes:
        raise BlockDoesNotFit(
            f"shared memory per block must be in 0..{device.shared_mem_per_block_max_bytes} "
            f"bytes on {device.name}, got {shared_bytes_per_block}"
        )

    warps_per_block = -(-threads_per_block // device.warp_size)
    limit_warps = device.max_warps_per_sm // warps_per_block
    limit_blocks = device.max_blocks_per_sm
    limit_regs = _register_limit(device, warps_per_block, registers_per_thread)
    limit_smem = _shared_limit(device, shared_bytes_per_block)

    limits = {
        "warps": limit_warps,
        "blocks": limit_blocks,
        "registers": limit_regs,
        "shared_memory": limit_smem,
    }
    b = min(limits.values())
    if b <= 0:
        why = {
            "warps": f"{warps_per_block} warps > {device.max_warps_per_sm} per SM",
            "registers": f"{registers_per_thread} registers x {threads_per_block} threads > "
            f"{device.registers_per_block} per block or {device.registers_per_sm} per SM",
            "shared_memory": f"{shared_bytes_per_block} shared bytes > "
            f"{device.shared_mem_per_sm_bytes} per SM",
        }
        raise BlockDoesNotFit(
            f"a block of {threads_per_block} threads does not fit on an SM of {device.name}: "
            + "; ".join(why.get(k, k) for k, v in limits.items() if v <= 0)
        )
    factors = tuple(name for name, value in limits.items() if value == b)
    n = b * warps_per_block
    return Occupancy(
        blocks_per_sm=b,
        warps_per_sm=n,
        warps_per_block=warps_per_block,
        active_threads=b * threads_per_block,
        limiting_factor=factors[0],
        limiting_factors=factors,
        occupancy=n / device.max_warps_per_sm,
        limit_warps=limit_warps,
        limit_blocks=limit_blocks,
        limit_registers=limit_regs,
        limit_shared_memory=limit_smem,
    )


def _register_limit(device: GPUDevice, warps_per_block: int, registers_per_thread: int) -> int:
    if registers_per_thread == 0:
        return _NO_LIMIT
    regs_per_warp = round_up(registers_per_thread * device.warp_size, device.register_alloc_unit)
    subparts = device.schedulers_per_sm
    regs_assumed_per_block = regs_per_warp * round_up(warps_per_block, subparts)
    if regs_assumed_per_block > device.registers_per_block:
        return 0
    warps_per_subpart = (device.registers_per_sm // subparts) // regs_per_warp
    return (warps_per_subpart * subparts) // warps_per_block


def _shared_limit(device: GPUDevice, shared_bytes_per_block: int) -> int:
    allocated = shared_bytes_per_block + device.shared_mem_reserved_per_block_bytes
    if allocated == 0:
        return _NO_LIMIT
    allocated = round_up(allocated, device.shared_mem_alloc_unit_bytes)
    return device.shared_mem_per_sm_bytes // allocated
