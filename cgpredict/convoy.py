"""A dependent step's latency when the warps of a sub-partition run it together, eq. (CV).

A thread's critical path (parallelism.ThreadBodies.chain_cycles) charges each dependent
instruction its latency as if the warp ran alone. The warps of a launch run the same code
from the same start, so the ``n`` warps of one sub-partition (scheduler) reach each step of
that path together; the step's next instruction can issue in the last of them only after the
pipe has taken all ``n`` (a convoy). A step of kind k (FP32, FP64, SFU, integer) then lasts

    l'_k = max(l_k, n x c_k),   c_k = schedulers x max(inst_cycles_per_warp_inst,
                                                        warp_size / rate_k)           (CV)

``c_k`` the sub-partition's cycles a warp instruction of that pipe (the issue slot at least),
``rate_k`` the device's [pipes] lanes a clock an SM. An IEEE division or square root the
device measured as one chain (OpLatencies.measured, eq. (IE)) adds each of its SASS_CHAIN
steps' excess, l'_k - l_k. Loads keep their latency (the L1 and L2 have their own rules),
and so do integer steps (IR steps that ptxas fuses; loaded_latencies). Warps stay in step
only through loads that return to all of them together, so a body's chain takes (CV) for
the share of its trips in which no warp fetches a line of its own beyond the L1:

    chain = chain_1 + s x (chain_CV - chain_1),  s = product over loads of L1-served share (CV2)

On the H100 (FP64 64 lanes a clock an SM: c = 2; SFU 16: c = 8) a DFMA step of 8.03 cycles
lasts 16 at n = 8 warps a sub-partition (32 an SM), 8.03 at n <= 4. The loop_trip
micro-benchmark's chain of 8 FFMAs (two register-bank reads each, 2 cycles a warp
instruction) measured 40.1 cycles a trip alone, 71.2 at n = 4 and 137.5 at n = 8, where
(CV) gives 40.1 + 8 x (8 - 4) = 72.1 and 40.1 + 8 x (16 - 4) = 136.1 (docs/models.md).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from cgpredict.compute import SASS_CHAIN, OpLatencies
from cgpredict.device_schema import GPUDevice
from cgpredict.occupancy import occupancy

__all__ = ["convoy_latencies", "convoy_step", "convoy_warps", "in_step_share", "loaded_latencies",
           "pipe_warp_cycles"]


def pipe_warp_cycles(device: GPUDevice) -> dict[str, float]:
    """c_k of eq. (CV): a sub-partition's cycles a warp instruction of kind ``fp32``,
    ``fp64``, ``sfu`` and ``integer`` (the int_add pipe): the issue slot, or the pipe where
    the device's [pipes] table gives it a lower rate."""
    slot = device.schedulers_per_sm * device.inst_cycles_per_warp_inst
    rates = device.pipes
    out = {}
    for kind, pipe in (("fp32", "fp32"), ("fp64", "fp64"), ("sfu", "sfu"),
                       ("integer", "int_add")):
        rate = getattr(rates, pipe) if rates is not None else None
        lane = device.schedulers_per_sm * device.warp_size / rate if rate else 0.0
        out[kind] = max(slot, lane)  # (CV)
    return out


def convoy_latencies(device: GPUDevice, warps: int) -> OpLatencies:
    """``device``'s op_latencies at ``warps`` warps a sub-partition in step, eq. (CV)."""
    return loaded_latencies(device.op_latencies, warps, pipe_warp_cycles(device))


def loaded_latencies(lat: OpLatencies, warps: int, cycles: dict[str, float]) -> OpLatencies:
    """``lat`` with each kind's latency at ``warps`` warps a sub-partition in step, eq. (CV):
    max(latency, warps x cycles[kind]); a measured IEEE chain plus its SASS_CHAIN steps'
    excess (MUFU steps at the SFU's, FP64 at the FP64's, ALU steps at the FP32's). Integer
    steps keep their latency: the trace's integer operations are IR steps that ptxas fuses
    (int_hash: 8 on the chain a round, 4.4 SASS instructions a round issued), and at n x 2
    cycles each those extra steps would be charged in full (docs/models.md, (CV) limits)."""
    if warps <= 1:
        return lat
    new = {k: max(getattr(lat, k), warps * cycles[k]) for k in ("fp32", "fp64", "sfu")}  # (CV)
    extra = {k: new[k] - getattr(lat, k) for k in new}
    measured = tuple(
        (name, value + SASS_CHAIN[name][0] * extra["sfu"] + SASS_CHAIN[name][1] * extra["fp64"]
         + SASS_CHAIN[name][2] * extra["fp32"]) if name in SASS_CHAIN else (name, value)
        for name, value in lat.measured)
    return replace(lat, measured=measured, **new)


def in_step_share(together: Mapping[int, float], mem_ids: Sequence[int]) -> float:
    """The share of a body's trips whose warps stay in step (CV2): the product over its loads
    (``mem_ids``) of each one's share of warp instructions that the L1 serves from a line
    fetched at an earlier step (``together``); a load not named waits beyond the L1. A fetch
    from the L2 or DRAM, a warp's own or one it waits on (eq. (C1)), returns after a latency
    that varies by hundreds of cycles under load (dram_latency_cv) and takes the warps out
    of step."""
    share = 1.0
    for mid in mem_ids:
        share *= together.get(mid, 0.0)  # (CV2)
    return share


def convoy_step(device: GPUDevice, warps: int, loads: Iterable, fixed: Iterable[int] = ()):
    """What ThreadBodies.chain_cycles takes as ``step`` (eqs. (CV), (CV2)): the latencies at
    ``warps`` warps a sub-partition in step and the share of a body's trips in step, from
    ``loads`` (memory.InstrMemStats: pure L1 hits of all) and ``fixed``
    (loads at a fixed latency: shared-memory staging, reloads of the thread's own stores);
    None with one warp (nothing changes)."""
    if warps <= 1:
        return None
    together = {s.sid: (sum(s.l1_served) - sum(s.l1_inflight)) / max(s.total_warp_insts, 1)
                for s in loads}  # (CV2): L1 hits on a line fetched at an earlier step
    together.update(dict.fromkeys(fixed, 1.0))
    return convoy_latencies(device, warps), functools.partial(in_step_share, together)


def convoy_warps(device: GPUDevice, threads_per_block: int, registers_per_thread: int,
                 shared_bytes_per_block: int, blocks: int) -> int:
    """n of eq. (CV): the warps of one sub-partition, the resident blocks of an SM (no more
    than the launch has for each SM) times their warps, over the schedulers."""
    occ = occupancy(device, threads_per_block, registers_per_thread, shared_bytes_per_block)
    active = min(device.sm_count, max(blocks, 1))
    b = min(occ.blocks_per_sm, math.ceil(max(blocks, 1) / active))
    return max(math.ceil(b * occ.warps_per_block / device.schedulers_per_sm), 1)
