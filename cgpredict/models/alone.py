"""A warp with a scheduler to itself or sharing it: its own dependence chain, eqs. (22k), (22q).

§3 (22) reads a warp's timeline when too few warps hide it as its memory periods one after
another plus its computing (docs/models.md). When an SM holds no more warps than it has
schedulers (``schedulers_per_sm``: 4 on sm_90), each warp issues alone on its scheduler, so
its time is the path its instructions' dependences leave in issue order: the loads of one
ptxas block in flight together, each op behind the slow-path branches before it
(issue_blocks, eqs. (IB1)-(IB2)). (22) charges those loads one after another. Measured on the
H100 (event times, ``nvidia-h100-80gb-hbm3-user-blocks.json``, 1980 MHz): the user kernel
nbody_f64 runs 435.6 cycles an inner iteration at one warp an SM (32x1) and 446.6 at four
(128x1), where (22) gave 735 and 487; its critical path with (IB1)-(IB2) is 415 and 414.

With more warps than schedulers (eq. (22q)) the warp shares its scheduler's issue slot and
slow pipes with the others there: the closed loop of eq. (LTq2) (warp_queue.py) on the same
path. The f32 nbody_soa at 256x1 (2 warps a sub-partition) measures 270.8 ncu cycles a j
iteration where (22) charged its four independent loads one after another (302) and (LTq2)
gives 266.6.

The chain holds each load at one request's latency, so (22k) applies only where that is a
load's whole wait (priced): no uncoalesced load (its 32 lines leave the L1 one a cycle,
which the chain does not add: ATAX's row walk ``atax_k1`` at 4 warps an SM, 128x1,
measures 0.468 ms where its chain gives 0.265) and loads that leave the L1 mostly hitting
the L2 (a warp's DRAM miss while every SM misses waits a loaded round trip, about 740
cycles on the H100 against the chain's unloaded 685.1: ``atax_k2`` at 128x1 measures 747
cycles an iteration, its chain 694).
"""

from __future__ import annotations

import math

from cgpredict.devices import GPUDevice
from cgpredict.models.warp_queue import queued_path_cycles
from cgpredict.profile import KernelProfile

__all__ = ["alone_cycles", "priced"]


def alone_cycles(profile: KernelProfile, device: GPUDevice, n: float, comp: float) -> float:
    """Eq. (22k): a warp's timeline when each of the SM's ``n`` warps has a scheduler to
    itself (n <= schedulers_per_sm): its critical path (profile.chain_cycles), at least its
    instructions at one a cycle (``comp``: its issue cycles at the SM's rate of
    schedulers_per_sm a cycle). Eq. (22q): with more warps than schedulers, the same path
    shared with the other warps of its sub-partition, the closed loop of (LTq2) around the
    issue slot and slow pipes (warp_queue.queued_path_cycles), at least the path alone,
    where a warp keeps one trip's loads in flight (loads_in_flight 1: (22m) off). 0 when
    the chain does not price its loads whole (priced)."""
    if profile.chain_cycles <= 0 or not priced(profile):
        return 0.0
    if n > device.schedulers_per_sm:  # (22q): n / schedulers warps share an issue slot
        if profile.loads_in_flight > 1:  # (22m)'s trips in flight queue in memory
            return 0.0
        return max(profile.chain_cycles, queued_path_cycles(profile, device, math.ceil(n)))
    return max(profile.chain_cycles, comp * device.schedulers_per_sm)


def priced(profile: KernelProfile) -> bool:
    """Whether the chain prices the warp's loads whole (module docstring): no uncoalesced
    load, and of the transactions its loads send past the L1 at most half miss the L2."""
    if profile.uncoal.insts > 0:
        return False
    pats = (profile.coal, profile.const)
    past = sum(p.insts * (1 - p.l1_hit_fraction) * p.l2_trans_per_warp for p in pats)
    dram = sum(p.insts * (1 - p.l1_hit_fraction) * min(p.dram_trans_per_warp,
                                                        p.l2_trans_per_warp) for p in pats)
    return dram <= 0.5 * past
