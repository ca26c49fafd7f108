"""The warps of one sub-partition queueing for its issue slot and its slowest pipe, eq. (LTq2).

A thread's critical path (``KernelProfile.alone_chain_cycles``: one warp alone, no other warp
in its way) and the sub-partition's throughput (its warps' instructions at one issue a cycle,
or the slowest pipe's share) are two separate lower bounds; the time of n warps that each run
a path of L cycles and need s_i cycles of server i on the way lies above both near the knee,
where neither dominates. An exact mean-value analysis of the closed loop (n warps around a
delay and one queue a server) gives it:

    R_i(k) = s_i x (1 + Q_i(k - 1)),   T(k) = L - sum_i s_i + sum_i R_i(k),
    Q_i(k) = k x R_i(k) / T(k),        k = 1..n                               (LTq2)

T(1) = L; T(n) tends to L for n x s << L and to n x max_i s_i for n x s >> L. With one server
it is eq. (LTq) of docs/models.md (validation/loop_trips.py: every mode and warp count of the
loop_trip micro-benchmark within 7.8 %, the trip of 8 dependent FFMAs 137.5 cycles at 8 warps a
sub-partition, measured 137.5). The servers here are the issue slot and each floating-point
or SFU pipe that takes longer than the issue slot a warp instruction (the SFU and FP64 pipes on the
H100: 8 and 2 cycles a warp instruction a sub-partition); a pipe as fast as issue is the
issue slot itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cgpredict.devices import GPUDevice
from cgpredict.pipes import PipeCounts, PipeRates
from cgpredict.profile import KernelProfile

__all__ = ["QUEUED_PIPES", "closed_loop_cycles", "pipe_services", "queued_path_cycles",
           "sub_partition_warps"]

#: the pipe classes (pipes.PipeCounts) that queue as servers of their own where their rate is
#: below the issue slot's. The integer classes do not: the trace counts integer IR
#: operations, which ptxas fuses (the blind int_hash: 8 on its chain a round, 4.4 SASS
#: instructions a round issued), as eq. (CV) leaves integer steps out for the same reason
QUEUED_PIPES = ("fp32", "fp64", "sfu", "cvt", "cvt64")


def closed_loop_cycles(path: float, services: Sequence[float], warps: int) -> float:
    """T(n) of eq. (LTq2): the cycles each of ``warps`` warps takes for a path of ``path``
    cycles alone that holds each server i for ``services[i]`` cycles of it (a server's
    service is part of the path: the rest, ``path - sum(services)``, is a pure delay, at
    least 0). ``path`` itself for one warp or without service."""
    s = [max(float(x), 0.0) for x in services]
    if warps <= 1 or path <= 0 or not any(s):
        return float(path)
    delay = max(path - sum(s), 0.0)
    if len(s) == 1:  # one server (the common case), the same steps without the lists
        return _one_server_cycles(delay, s[0], float(path), warps)
    queued = [0.0] * len(s)
    cycle = float(path)
    for k in range(1, warps + 1):
        resid = [si * (1.0 + qi) for si, qi in zip(s, queued)]  # (LTq2)
        cycle = delay + sum(resid)
        queued = [k * r / cycle for r in resid]
    return cycle


def _one_server_cycles(delay: float, service: float, path: float, warps: int) -> float:
    """closed_loop_cycles' iteration for one server: its value to the last bit (a sum of
    one term is that term)."""
    queued, cycle = 0.0, path
    for k in range(1, warps + 1):
        resid = service * (1.0 + queued)  # (LTq2)
        cycle = delay + resid
        queued = k * resid / cycle
    return cycle


def pipe_services(counts: PipeCounts, rates: PipeRates | None, warp_size: int,
                  schedulers: int, slot: float) -> list[float]:
    """The service of eq. (LTq2) each pipe of QUEUED_PIPES gives one warp on its
    sub-partition, ``counts`` (a thread's instructions of the class) x schedulers x
    warp_size / rate (the SM's lanes a clock split over its schedulers), for the classes
    whose cycles a warp instruction exceed the issue ``slot`` (a pipe as fast as issue is
    the issue slot itself); none without rates."""
    if rates is None:
        return []
    out = []
    for name in QUEUED_PIPES:
        rate, n = getattr(rates, name), getattr(counts, name)
        if rate and n > 0 and schedulers * warp_size / rate > slot:
            out.append(n * schedulers * warp_size / rate)
    return out


def sub_partition_warps(resident_warps: int, schedulers: int) -> int:
    """n of eq. (LTq2): an SM's resident warps over its schedulers, rounded up (warp w sits
    on sub-partition w mod schedulers), at least 1."""
    return max(math.ceil(max(resident_warps, 1) / max(schedulers, 1)), 1)


def queued_path_cycles(profile: KernelProfile, device: GPUDevice, resident_warps: int) -> float:
    """T(n) of eq. (LTq2) for the busiest thread's warp among the n warps of its
    sub-partition (n = sub_partition_warps of the SM's resident warps): its path alone
    (``alone_chain_cycles``) around the issue slot (a warp's instructions and shared
    wavefronts at ``inst_cycles_per_warp_inst`` x schedulers a cycle each) and each pipe
    slower than that slot (QUEUED_PIPES, eq. (12p)). 0 with one warp a sub-partition or
    without a path. The chain bound (bounds.warp_queue_cycles) and (22q) read it."""
    scheds = max(device.schedulers_per_sm, 1)
    n = sub_partition_warps(resident_warps, scheds)
    path = profile.alone_chain_cycles or profile.chain_cycles
    if n <= 1 or path <= 0:
        return 0.0
    slot = device.inst_cycles_per_warp_inst * scheds
    services = [(profile.total_insts + profile.shared.transactions) * slot]
    services += pipe_services(profile.pipes, device.pipes, device.warp_size, scheds, slot)
    return closed_loop_cycles(path, services, n)  # (LTq2)
