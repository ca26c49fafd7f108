"""What a warp's trip of DRAM loads in flight together adds to its chain (eqs. (Q1), (Q1r)).

A looped trip holds ``held`` = D loads that reach DRAM (the overlap times the loads' DRAM
shares, memory.inflight.chain_dram_sectors) and ``sect`` = S sectors they fetch themselves.
(Q1) (round 13, t6/t6b): each load after the first returns its sectors a gap apart,
``g_s x (S / D) x (D - 1)``. (Q1r) (round 14, t7): the ``dram_inflight`` micro-benchmark
(validation/measured/h100-worst-2026-11-27/ubench/dram_inflight.json) shows instead one
warp's round waits for the latest of its D returns, ``sigma x z(D)``, over a loop load's
measured one-load trip, which is ``lift`` cycles above the model's L2 + DRAM latency, and
each later load's ``issue`` cycles in the round (the L2-resident run's increment a load).
(Q1w) (round 16, t7): the lease's ``dram_spread`` runs (W = 1..132 warps walking at once)
lift a round's trip by the other walkers: the lone warp's ``lift`` rises to the loaded one
as 1 - (1 - 1/C)^(W - 1), C the DRAM's memory controllers, W the launch's walking warps.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

from .compute import OpLatencies
from .device_schema import GPUDevice
from .occupancy import occupancy


@lru_cache(maxsize=None)
def expected_max_normal(n: int) -> float:
    """z(n): E[max of n independent standard normals] (trapezoid of x n phi Phi^(n-1) over
    [-10, 10]); the same z as eq. (R1) (models/retire.py), kept here below the models layer."""
    if n <= 1:
        return 0.0
    steps, lo, hi = 8000, -10.0, 10.0
    h = (hi - lo) / steps
    total = 0.0
    for k in range(steps + 1):
        x = lo + k * h
        f = x * n * math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        f *= (0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))) ** (n - 1)
        total += f * (0.5 if k in (0, steps) else 1.0)
    return total * h


def z_between(d: float) -> float:
    """z at a non-integer count of loads ``d``: linear between z(floor d) and z(ceil d)."""
    if d <= 1.0:
        return 0.0
    lo = int(math.floor(d))
    z_lo = expected_max_normal(lo)
    return z_lo + (d - lo) * (expected_max_normal(lo + 1) - z_lo)


def latest_return(held: float, lift: float, sigma: float, issue: float = 0.0) -> float:
    """Eq. (Q1r): cycles a round of ``held`` DRAM loads in flight adds to the chain's one
    load latency: the loop load's lift to its measured trip (at most once, scaled by the
    share when less than one load reaches DRAM), each later load's ``issue`` (its slot and
    use in the round), plus the latest of the returns."""
    if held <= 0.0:
        return 0.0
    return min(held, 1.0) * lift + issue * max(held - 1.0, 0.0) + sigma * z_between(held)


def walker_share(walkers: float, channels: float) -> float:
    """Eq. (Q1w): the chance that at least one of the ``walkers`` - 1 other warps walking at
    once has a request at this round's memory controller, of ``channels``, each another
    walker's round landing on one of them alike: 1 - (1 - 1/C)^(W - 1); 0 without C."""
    if channels <= 0 or walkers <= 1.0:
        return 0.0
    if channels <= 1.0:
        return 1.0
    return 1.0 - (1.0 - 1.0 / channels) ** (walkers - 1.0)


def loaded_lift(op_lat: OpLatencies) -> float:
    """Eq. (Q1w): the loop load's lift over the model's latency with ``op_lat.dram_walkers``
    warps walking at once: the lone warp's ``dram_lift`` raised towards the loaded
    ``dram_lift_loaded`` by walker_share; the lone lift where the device has no loaded one."""
    if op_lat.dram_lift_loaded <= 0:
        return op_lat.dram_lift
    share = walker_share(op_lat.dram_walkers, op_lat.dram_channels)
    return op_lat.dram_lift + (op_lat.dram_lift_loaded - op_lat.dram_lift) * share


def walking_warps(device: GPUDevice, threads_per_block: int, registers: int,
                  shared_bytes: int, blocks: int, busiest: float) -> float:
    """W of eq. (Q1w): the launch's warps resident at once on the whole GPU (its blocks, at
    most the SMs' resident blocks, times a block's warps) over ``busiest`` (the busiest
    thread's events over the mean thread's: a launch where one thread of many walks, as
    Gram-Schmidt's k1, has one walker), at least 1."""
    occ = occupancy(device, threads_per_block, registers, shared_bytes)
    resident = min(max(blocks, 1), device.sm_count * occ.blocks_per_sm) * occ.warps_per_block
    return max(resident / max(busiest, 1.0), 1.0)


def with_walkers(op_lat: OpLatencies, walkers: float) -> OpLatencies:
    """``op_lat`` for a launch of ``walkers`` warps walking at once (eq. (Q1w)); the same
    object when the device has no loaded lift (nothing changes)."""
    if op_lat.dram_lift_loaded <= 0 or walkers == op_lat.dram_walkers:
        return op_lat
    return dataclasses.replace(op_lat, dram_walkers=float(walkers))


def dram_queue(held: float, sect: float, op_lat: OpLatencies) -> float:
    """What a trip of ``held`` DRAM loads of ``sect`` sectors adds to its chain: eq. (Q1r)
    with the device's ``dram_sigma`` (its lift loaded by the walkers, (Q1w)), else (Q1)'s
    gap a sector, else nothing."""
    if op_lat.dram_sigma > 0:  # (Q1r), (Q1w)
        return latest_return(held, loaded_lift(op_lat), op_lat.dram_sigma, op_lat.dram_issue)
    if op_lat.dram_gap > 0 and held > 1.0:  # (Q1)
        return op_lat.dram_gap * sect / held * (held - 1.0)
    return 0.0
