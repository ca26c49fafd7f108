"""Block-granular retirement: a wave of blocks lasts as long as its blocks' slowest warps.

An SM frees a block's warp slots only when the block's last warp has finished, so a wave
lasts the expected *latest* of each block's W warp timelines, not the mean one. That holds
whatever sets the mean (eq. (R1w), docs/models.md): the warps' own timelines in the
memory-latency-bound case (§3 (22)), the SM's issue in (17) or its memory parallelism in
(16); the model charges it in all three. The warps' DRAM round trips vary under load
(queueing, the L2 partition a line lives in): with the relative standard deviation ``cv``
of one round trip (device ``dram_latency_cv``) and ``d`` independent DRAM waits a warp
makes (its DRAM load bytes in units of one coalesced warp load), a warp timeline spreads
by sigma = cv x round trip x sqrt(d), and the expected maximum of W such timelines lies

    retire_cycles = z(W) x cv x (l2_latency + dram_latency) x sqrt(d)                     (R1)

beyond the mean, z(W) the expected maximum of W independent standard normal variables
(z(1) = 0, z(2) = 1/sqrt(pi), z(8) = 1.4236, z(32) = 2.0697). A block of 32x32 threads
(W = 32) therefore holds its slots longer past its mean warp than one of 32x8 (W = 8).
The cost is the next wave's wait for those slots, so the model charges it at each of a
launch's batch - 1 handovers (waves - 1), in every case (eq. (R1w)): it was measured there
(the gap between a wave's length and its warps' mean life, multi-wave launches of the 2-D
stencils, (22), and of sfu_heavy and the particles' AoS step, (17)); a launch of at most
one wave hands no slot over and its tail is not charged (3DCONV at 256^3, 0.2 waves a
launch at 235 GB/s, measured within 3 % without it, 11 % over with it).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from cgpredict.devices import GPUDevice
from cgpredict.profile import KernelProfile

__all__ = ["dram_waits_per_warp", "expected_max_normal", "retire_cycles"]


@lru_cache(maxsize=256)
def expected_max_normal(n: int) -> float:
    """z(n) of eq. (R1): E[max of n independent standard normals], by the integral
    of x n phi(x) Phi(x)^(n-1) over x (trapezoid over [-10, 10]); 0 for n <= 1."""
    if n <= 1:
        return 0.0
    x = np.linspace(-10.0, 10.0, 20001)
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x]))
    return float(np.trapezoid(x * n * phi * cdf ** (n - 1), x))


def dram_waits_per_warp(profile: KernelProfile, device: GPUDevice) -> float:
    """d of eq. (R1): a warp's DRAM load bytes (its loads' L2 misses, the L1-served share
    left out) over the bytes of one coalesced warp load (warp_size x bytes_per_access)."""
    loads = profile.loads_only()
    sectors = sum(p.insts * (1 - p.l1_hit_fraction) * p.dram_trans_per_warp
                  for p in (loads.coal, loads.uncoal, loads.const))
    warp_load = device.warp_size * max(profile.bytes_per_access, 1)
    return max(sectors, 0.0) * device.l2_sector_bytes / warp_load


def retire_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """Eq. (R1): cycles a wave's blocks outlast their mean warp timeline (0 without a
    ``dram_latency_cv`` or without DRAM loads)."""
    cv = device.dram_latency_cv
    waits = dram_waits_per_warp(profile, device)
    if cv <= 0 or waits <= 0:
        return 0.0
    warps = math.ceil(profile.threads_per_block / device.warp_size)
    round_trip = device.l2_latency_cycles + device.dram_latency_cycles  # SPEC (2)
    return expected_max_normal(warps) * cv * round_trip * math.sqrt(waits)  # (R1)
