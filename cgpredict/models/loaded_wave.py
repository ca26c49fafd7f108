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

A loaded one-pass warp's life has four parts (eq. (LWk), fifteenth round): a floor, the
issue of its wave (its SM's n warps share the SM's schedulers, and round-robin issue brings
each warp's last instruction near the end of them all), each DRAM line past the first
(``dram_line_life_cycles``; one-pass warps only, ``one_pass``), and the latest of its load
requests that miss the L2 (each its own round trip under load, spread as (R1)'s sigma):

    wait = dram_loaded_latency_cycles + dram_line_life_cycles x max(d - 1, 0)
           + z(k) x cv x (l2_latency + dram_latency)
    life = wait + min(n x insts x inst_cycles_per_warp_inst, wait)                    (LWk)

(the wave's issue counts as far as the wait can hold it: a warp whose SM's issue of the
wave exceeds its wait overlaps the next wave's wait, and the issue bound takes the launch:
blackscholes and int_hash, 256x1, went +22 and +11 points with the issue added whole)

d the warp's DRAM lines (eq. (R1)'s), k its missed requests, z(k) the expected maximum of k
standard normals (z(1) = 0; a fractional k, a mean over warps, is warps with floor(k) and
ceil(k) requests). Nsight Compute's warp lives of the 2-D stencils give the parts: 2DCONV and
Jacobi-2D (one line, 1.6 requests) differ by their instructions (44 and 34 a warp: 176
cycles of a wave's issue, their lives 173 apart at 32x8); FDTD-2D k1 and k2 (two lines)
live 83-287 cycles more than the floor, issue and spread give; a 16-wide block's warp
reads each row as two half lines, twice the requests for the same bytes (FDTD-2D k1 k =
1.99 at 32x8, 3.96 at 16x16), and lives longer by about z(k)'s step. The floor and the line
are read from those counters (docs/models.md, (LWk)). The light life (LWl) takes none of
this (it was read in SM cycles on launches whose DRAM serves their reads alone) and stays
never above the loaded life.
"""

from __future__ import annotations

import math

from cgpredict.devices import GPUDevice
from cgpredict.models.retire import dram_waits_per_warp, expected_max_normal, retire_cycles
from cgpredict.parallelism import LOADS_IN_FLIGHT
from cgpredict.profile import KernelProfile

__all__ = ["dram_requests_per_warp", "expected_max_mixed", "loaded_life_cycles",
           "loaded_wave_cycles", "one_pass", "request_spread_cycles", "stores_stay_in_l2"]


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


def one_pass(profile: KernelProfile) -> bool:
    """Whether a warp's loads are all in flight at once (at most LOADS_IN_FLIGHT load
    instructions a thread: a stencil's, SAXPY's), the warps (LWk)'s line term was read on; a
    row walk's thousands of lines overlap each other in its loop and take no line term."""
    loads = profile.loads_only()
    return sum(p.insts for p in (loads.coal, loads.uncoal, loads.const)) <= LOADS_IN_FLIGHT


def dram_requests_per_warp(profile: KernelProfile, device: GPUDevice) -> float:
    """k of eq. (LWk): a warp's load requests that miss the L2, each its own DRAM round trip
    (the count eq. (LM) gives a miss slot each): per load pattern, its instructions past the
    L1 x their DRAM sectors x requests a sector (``l2_requests_per_warp`` over
    ``l2_trans_per_warp``; untraced: a coalesced load's sectors packed into lines, an
    uncoalesced one's a request each, a broadcast one request)."""
    per_line = max(device.l2_line_bytes // max(device.l2_sector_bytes, 1), 1)
    loads = profile.loads_only()
    total = 0.0
    for kind, p in enumerate((loads.coal, loads.uncoal, loads.const)):
        if p.insts <= 1e-12 or p.dram_trans_per_warp <= 0:
            continue
        sectors = max(p.l2_trans_per_warp, 1.0)
        guess = (math.ceil(sectors / per_line - 1e-9), sectors, 1.0)[kind]
        lines = p.l2_requests_per_warp if p.l2_requests_per_warp > 0 else guess
        total += p.insts * (1 - p.l1_hit_fraction) * p.dram_trans_per_warp * min(
            lines / sectors, 1.0)
    return total


def expected_max_mixed(k: float) -> float:
    """z(k) of eq. (LWk) for a mean of k requests a warp: warps with floor(k) and ceil(k)
    requests in the proportions that give the mean, so z linear between the integers
    (z(1) = 0, z(2) = 1/sqrt(pi)); 0 for k <= 1."""
    if k <= 1.0:
        return 0.0
    low = math.floor(k)
    frac = k - low
    return (1 - frac) * expected_max_normal(low) + frac * expected_max_normal(low + 1)


def request_spread_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """Eq. (LWk): cycles a loaded warp's latest DRAM request lies past its mean round trip,
    z(k) x cv x (l2_latency + dram_latency); 0 without ``dram_latency_cv``."""
    cv = device.dram_latency_cv
    if cv <= 0:
        return 0.0
    round_trip = device.l2_latency_cycles + device.dram_latency_cycles  # SPEC (2)
    return expected_max_mixed(dram_requests_per_warp(profile, device)) * cv * round_trip


def loaded_life_cycles(profile: KernelProfile, device: GPUDevice, n_warps: float) -> float:
    """A one-pass warp's life in (LW) among ``n_warps`` warps an SM: ``dram_light_life_cycles``
    when the launch's stores stay in the L2 (the DRAM takes its reads alone), eq. (LWl), never
    above the loaded one; else the floor, the wave's issue, its lines past the first and its
    requests' spread, eq. (LWk)."""
    floor = device.dram_loaded_latency_cycles
    if floor <= 0:
        return 0.0
    lines = 0.0
    if one_pass(profile):  # the lines were read on one-pass warps: 1-3 lines, 3-9 loads
        lines = device.dram_line_life_cycles * max(dram_waits_per_warp(profile, device) - 1, 0.0)
    wait = floor + lines + request_spread_cycles(profile, device)
    # the wave's issue, as far as the next wave's wait cannot hide it (beyond, the SM's
    # issue bound takes the launch)
    issue = n_warps * profile.total_insts * device.inst_cycles_per_warp_inst
    life = wait + min(issue, wait)  # (LWk)
    light = device.dram_light_life_cycles
    if light > 0 and stores_stay_in_l2(profile, device):
        return min(light, life)  # (LWl)
    return life


def loaded_wave_cycles(profile: KernelProfile, device: GPUDevice, waves: float,
                       dram_loads: float, n_warps: float) -> float:
    """Eq. (LW): ``waves`` counted whole (a partial last wave still lives a loaded warp
    life), each one loaded warp life of ``n_warps`` warps an SM (eq. (LWk); eq. (LWl): a
    light one if the stores stay in the L2), plus (R1) at each handover; 0 without the
    device field or when no load reaches DRAM."""
    life = loaded_life_cycles(profile, device, n_warps)  # (LWk), (LWl)
    if life <= 0 or dram_loads <= 0:
        return 0.0
    whole = max(math.ceil(waves - 1e-9), 1)
    return whole * life + (whole - 1) * retire_cycles(profile, device)  # (LW)
