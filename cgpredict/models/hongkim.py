"""The original MWP-CWP model (Hong & Kim, ISCA 2009), SPEC §3 eqs. (5)-(27), exactly.

`hongkim_raw(HongKimInputs)` takes the model's own parameters (the §3 worked example is a unit
test of it); `predict_hongkim(profile, device)` maps a KernelProfile and a device onto them:

* Mem_LD = l2_latency_cycles + dram_latency_cycles (the model has no cache: every access is a
  DRAM access, costed as SPEC eq. (2) costs one);
* Departure_del_uncoal = dd_dram_cycles (per transaction); Departure_del_coal = dd_dram_cycles *
  the transactions of an average coalesced-class instruction (constant accesses count as
  coalesced: one request per warp);
* #Uncoal_per_mw = the uncoalesced pattern's L2 transactions per warp (warp_size if unknown);
* Issue_cycles = inst_cycles_per_warp_inst; Load_bytes_per_warp = warp_size * bytes_per_access;
* tiled kernels (§2.6 shared memory): the global->shared staging loads are coalesced memory
  instructions (warp_size * bytes_per_access / l2_line_bytes transactions per warp, at least
  1), as in §3's own worked example (a tiled matrix multiply whose memory instructions are its
  staging loads); the shared-memory accesses are computation instructions, their bank-conflict
  replays included;
* N, #Active_blocks_per_SM, #Active_SMs and #Rep from the occupancy calculation and
  `launch_geometry`; #Blocks is passed as at least B * #Active_SMs so that #Rep (21) is at
  least 1 (a partial wave costs as much as its busiest SM, which holds B blocks).

Limits: with no memory instructions Mem_L = Departure_delay = 0, MWP_Without_BW = N,
MWP_peak_BW = inf, and eq. (24) applies (eqs. (22)-(23) divide by #Mem_insts and have no memory
period to overlap). With no instructions at all CWP = N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cgpredict.devices import GPUDevice
from cgpredict.models.base import Bound, launch_geometry
from cgpredict.profile import KernelProfile

__all__ = ["HongKimInputs", "HongKimResult", "hongkim_raw", "predict_hongkim"]


@dataclass(frozen=True)
class HongKimInputs:
    """The parameters of §3 (instruction counts per thread)."""

    mem_ld_cycles: float
    departure_del_uncoal_cycles: float
    departure_del_coal_cycles: float
    uncoal_per_mw: float
    uncoal_mem_insts: float
    coal_mem_insts: float
    comp_insts: float
    synch_insts: float
    issue_cycles: float
    freq_hz: float
    mem_bandwidth_bytes_per_s: float
    load_bytes_per_warp: float
    active_sms: int
    n_warps: int
    active_blocks_per_sm: int
    blocks: int
    launches: int = 1

    @property
    def mem_insts(self) -> float:
        return self.uncoal_mem_insts + self.coal_mem_insts

    @property
    def total_insts(self) -> float:
        return self.mem_insts + self.comp_insts


@dataclass(frozen=True)
class HongKimResult:
    """Every intermediate of §3; cycles and time include all launches."""

    inputs: HongKimInputs
    mem_l_uncoal: float
    mem_l_coal: float
    w_uncoal: float
    w_coal: float
    mem_l: float
    departure_delay: float
    mwp_without_bw_full: float
    mwp_without_bw: float
    bw_per_warp_gbps: float
    mwp_peak_bw: float
    mwp: float
    mem_cycles: float
    comp_cycles: float
    cwp_full: float
    cwp: float
    rep: float
    case: str
    exec_cycles: float
    synch_cost: float
    exec_with_synch: float
    n_warps: int
    b_blocks: int
    cycles: float
    time_ms: float
    bound: Bound


def hongkim_raw(p: HongKimInputs) -> HongKimResult:
    """Evaluate §3 eqs. (5)-(27) on raw parameters."""
    n = p.n_warps
    mem_insts = p.mem_insts
    mem_l_uncoal = p.mem_ld_cycles + (p.uncoal_per_mw - 1) * p.departure_del_uncoal_cycles  # (10)
    mem_l_coal = p.mem_ld_cycles  # (11)
    w_uncoal = p.uncoal_mem_insts / mem_insts if mem_insts > 0 else 0.0  # (12)
    w_coal = p.coal_mem_insts / mem_insts if mem_insts > 0 else 0.0  # (13)
    mem_l = mem_l_uncoal * w_uncoal + mem_l_coal * w_coal  # (14)
    departure_delay = (
        p.departure_del_uncoal_cycles * p.uncoal_per_mw * w_uncoal
        + p.departure_del_coal_cycles * w_coal
    )  # (15)
    mwp_wo_bw_full = mem_l / departure_delay if departure_delay > 0 else math.inf  # (16)
    mwp_wo_bw = min(mwp_wo_bw_full, n)  # (17)
    bw_per_warp = p.freq_hz * p.load_bytes_per_warp / mem_l if mem_l > 0 else 0.0  # (7)
    mwp_peak_bw = (
        p.mem_bandwidth_bytes_per_s / (bw_per_warp * p.active_sms) if bw_per_warp > 0 else math.inf
    )  # (6)
    mwp = min(mwp_wo_bw, mwp_peak_bw, n)  # (5)
    mem_cycles = mem_l_uncoal * p.uncoal_mem_insts + mem_l_coal * p.coal_mem_insts  # (18)
    comp_cycles = p.issue_cycles * p.total_insts  # (19)
    cwp_full = (mem_cycles + comp_cycles) / comp_cycles if comp_cycles > 0 else math.inf  # (8)
    cwp = min(cwp_full, n)  # (8)
    rep = p.blocks / (p.active_blocks_per_sm * p.active_sms)  # (21)

    if mem_insts > 0 and mwp == n and cwp == n:
        case = "eq22"
        exec_cycles = (mem_cycles + comp_cycles + comp_cycles / mem_insts * (mwp - 1)) * rep  # (22)
    elif mem_insts > 0 and (cwp >= mwp or comp_cycles > mem_cycles):
        case = "eq23"
        exec_cycles = (mem_cycles * n / mwp + comp_cycles / mem_insts * (mwp - 1)) * rep  # (23)
    else:
        case = "eq24"
        exec_cycles = (mem_l + comp_cycles * n) * rep  # (24)
    synch_cost = (
        departure_delay * max(mwp - 1, 0.0) * p.synch_insts * p.active_blocks_per_sm * rep
    )  # (26)
    total = exec_cycles + synch_cost  # (27)
    cycles = total * p.launches
    if case == "eq22":
        bound: Bound = "memory" if mem_cycles >= comp_cycles else "compute"
    else:
        bound = "memory" if case == "eq23" and cwp >= mwp else "compute"
    return HongKimResult(
        inputs=p,
        mem_l_uncoal=mem_l_uncoal,
        mem_l_coal=mem_l_coal,
        w_uncoal=w_uncoal,
        w_coal=w_coal,
        mem_l=mem_l,
        departure_delay=departure_delay,
        mwp_without_bw_full=mwp_wo_bw_full,
        mwp_without_bw=mwp_wo_bw,
        bw_per_warp_gbps=bw_per_warp / 1e9,
        mwp_peak_bw=mwp_peak_bw,
        mwp=mwp,
        mem_cycles=mem_cycles,
        comp_cycles=comp_cycles,
        cwp_full=cwp_full,
        cwp=cwp,
        rep=rep,
        case=case,
        exec_cycles=exec_cycles,
        synch_cost=synch_cost,
        exec_with_synch=total,
        n_warps=n,
        b_blocks=p.active_blocks_per_sm,
        cycles=cycles,
        time_ms=cycles / p.freq_hz * 1e3,
        bound=bound,
    )


def hongkim_inputs(profile: KernelProfile, device: GPUDevice) -> HongKimInputs:
    """Map a profile and a device onto §3's parameters (see the module docstring)."""
    geo = launch_geometry(profile, device)
    sh = profile.shared
    stage_trans = max(device.warp_size * profile.bytes_per_access / device.l2_line_bytes, 1.0)
    coal_class = profile.coal.insts + profile.const.insts + sh.load_insts
    coal_trans = (
        profile.coal.insts * max(profile.coal.l2_trans_per_warp, 1.0)
        + profile.const.insts * max(profile.const.l2_trans_per_warp, 1.0)
        + sh.load_insts * stage_trans
    )
    trans_per_coal = coal_trans / coal_class if coal_class > 0 else 1.0
    uncoal_pw = profile.uncoal.l2_trans_per_warp or float(device.warp_size)
    return HongKimInputs(
        mem_ld_cycles=device.dram_miss_latency_cycles,
        departure_del_uncoal_cycles=device.dd_dram_cycles,
        departure_del_coal_cycles=device.dd_dram_cycles * trans_per_coal,
        uncoal_per_mw=uncoal_pw,
        uncoal_mem_insts=profile.uncoal.insts,
        coal_mem_insts=coal_class,
        comp_insts=profile.comp_insts + sh.transactions,
        synch_insts=profile.sync_insts,
        issue_cycles=device.inst_cycles_per_warp_inst,
        freq_hz=device.freq_hz,
        mem_bandwidth_bytes_per_s=device.dram_bandwidth_bytes_per_s,
        load_bytes_per_warp=float(device.warp_size * profile.bytes_per_access),
        active_sms=geo.active_sms,
        n_warps=geo.n_warps,
        active_blocks_per_sm=geo.b_blocks,
        blocks=max(profile.blocks, geo.b_blocks * geo.active_sms),
        launches=profile.launches,
    )


def predict_hongkim(profile: KernelProfile, device: GPUDevice) -> HongKimResult:
    """Predict with §3 on the parameters `hongkim_inputs` derives from profile and device."""
    return hongkim_raw(hongkim_inputs(profile, device))
