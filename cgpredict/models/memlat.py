"""Per-warp memory latency and departure delay from the access patterns (SPEC §2.3 eqs. 1-8)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cgpredict.devices import GPUDevice
from cgpredict.profile import KernelProfile, PatternCounts

__all__ = ["MemoryLatency", "active_departure_delay", "memory_latency", "own_mwp"]


@dataclass(frozen=True)
class MemoryLatency:
    """Output of eqs. (1)-(8). Latencies in cycles; counts per thread.

    load_bytes_per_warp: DRAM bytes one warp memory instruction moves on average
    (DRAM transactions * l2_sector_bytes), the Load_bytes_per_warp of the bandwidth bound.
    trans_per_warp: L2 transactions per warp memory instruction, averaged over instructions.
    miss_ratio: DRAM transactions / L2 transactions (0 with no transactions).
    """

    mem_l_coal: float
    mem_l_uncoal: float
    mem_l_const: float
    dep_del_coal: float
    dep_del_uncoal: float
    dep_del_const: float
    no_mem_insts: float
    mem_cycles: float
    mem_l: float
    departure_delay: float
    load_bytes_per_warp: float
    trans_per_warp: float
    miss_ratio: float


def _pw(p: PatternCounts, unknown: float = 1.0) -> float:
    # A warp instruction issues at least one transaction. A profile that leaves no_P_pw at 0
    # (unknown) is read as `unknown`: one for coalesced and constant accesses, warp_size for
    # uncoalesced ones (as the Hong & Kim mapping reads it), so that (1), (3), (5) stay meaningful.
    return max(p.l2_trans_per_warp, 1.0) if p.l2_trans_per_warp > 0 else unknown


def _with_l1(p: PatternCounts, d: GPUDevice, mem_l: float, dep_del: float):
    """Blend in the warp instructions the L1 serves: L1 latency, no L2/DRAM departure delay."""
    f = p.l1_hit_fraction
    if f <= 0:
        return mem_l, dep_del
    return f * d.l1_latency_cycles + (1 - f) * mem_l, (1 - f) * dep_del


def _pattern(p: PatternCounts, d: GPUDevice, unknown_pw: float = 1.0) -> tuple[float, float]:
    """mem_l_P and dep_del_P of a coalesced or uncoalesced pattern."""
    pw, dram = _pw(p, unknown_pw), p.dram_trans_per_warp
    if dram <= 1:
        mem_l = d.l2_latency_cycles + (pw - 1) * d.dd_l2_cycles  # (1)
    else:
        mem_l = d.l2_latency_cycles + d.dram_latency_cycles + (dram - 1) * d.dd_dram_cycles  # (2)
    dep_del = max(pw * d.dd_l2_cycles, dram * d.dd_dram_cycles)  # (3)
    return _with_l1(p, d, mem_l, dep_del)


def memory_latency(profile: KernelProfile, device: GPUDevice) -> MemoryLatency:
    """Eqs. (1)-(8). With no memory instructions, mem_l and departure_delay are 0 (limit)."""
    d = profile
    mem_l_coal, dep_coal = _pattern(d.coal, device)
    mem_l_uncoal, dep_uncoal = _pattern(d.uncoal, device, float(device.warp_size))
    c = d.const
    mem_l_const = (
        device.l2_latency_cycles + c.dram_trans_per_warp * device.dram_latency_cycles
    )  # (4)
    dep_const = _pw(c) * device.dd_l2_cycles + c.dram_trans_per_warp * device.dd_dram_cycles  # (5)
    mem_l_const, dep_const = _with_l1(c, device, mem_l_const, dep_const)

    n = d.mem_insts
    mem_cycles = (
        mem_l_coal * d.coal.insts + mem_l_uncoal * d.uncoal.insts + mem_l_const * c.insts
    )  # (6)
    weighted_dep = dep_coal * d.coal.insts + dep_uncoal * d.uncoal.insts + dep_const * c.insts
    pats = (d.coal, d.uncoal, d.const)
    unknown = (1.0, float(device.warp_size), 1.0)
    l2_trans = sum(p.insts * (1 - p.l1_hit_fraction) * _pw(p, u) for p, u in zip(pats, unknown))
    dram_trans = sum(p.insts * (1 - p.l1_hit_fraction) * p.dram_trans_per_warp for p in pats)
    return MemoryLatency(
        mem_l_coal=mem_l_coal,
        mem_l_uncoal=mem_l_uncoal,
        mem_l_const=mem_l_const,
        dep_del_coal=dep_coal,
        dep_del_uncoal=dep_uncoal,
        dep_del_const=dep_const,
        no_mem_insts=n,
        mem_cycles=mem_cycles,
        mem_l=mem_cycles / n if n > 0 else 0.0,  # (7)
        departure_delay=weighted_dep / n if n > 0 else 0.0,  # (8)
        load_bytes_per_warp=dram_trans * device.l2_sector_bytes / n if n > 0 else 0.0,
        trans_per_warp=l2_trans / n if n > 0 else 0.0,
        miss_ratio=dram_trans / l2_trans if l2_trans > 0 else 0.0,
    )


def active_departure_delay(lat: MemoryLatency, device: GPUDevice, active_sms: int) -> float:
    """The departure delay (8) of an SM when only ``active_sms`` SMs share the DRAM, eq. (13a):
    ``dd_dram_cycles`` is one SM's share of the bandwidth with every SM busy, so with fewer
    its DRAM term shrinks by active_sms / sm_count, down to the SM's own L2 requests at
    ``dd_l2_cycles`` a transaction (eq. (3) from the averaged counts); never above (8)."""
    if active_sms >= device.sm_count:
        return lat.departure_delay
    dram = lat.trans_per_warp * lat.miss_ratio * device.dd_dram_cycles
    own = max(lat.trans_per_warp * device.dd_l2_cycles, dram * active_sms / device.sm_count)
    return min(lat.departure_delay, own)


def own_mwp(lat: MemoryLatency, device: GPUDevice, active_sms: int) -> float:
    """MWP (13) with the departure delay of ``active_sms`` SMs (active_departure_delay, eq.
    (13a)): the requests one SM keeps in flight, the cap of eq. (22m); inf without a delay."""
    dep = active_departure_delay(lat, device, active_sms)
    return lat.mem_l / dep if dep > 0 else math.inf
