"""GPUPerf extensions of MWP-CWP and its benefit metrics (Sim et al., PPoPP 2012; SPEC §4).

Inputs: the profile's per-thread counts (#insts = total_insts, #mem_insts, #SFU_insts,
#FP_insts, #sync_insts, ILP, MLP), the device, the launch geometry, and MWP, CWP, N and
MWP_peak_bw from the CGPredict model (which computes them from the cache-aware latencies
of SPEC §2.3 and the bandwidth bound, like GPUPerf's own AMAT).

Choices the SPEC leaves open, documented here:
* avg_inst_lat = inst_latency_cycles, FP_lat = fp_latency_cycles, SFU_width = sfu_per_sm,
  SIMD_width = simd_width, DRAM_lat = dram_latency_cycles, hit_lat = l2_latency_cycles,
  Δ = dd_dram_cycles, Γ = 64;
* avg_trans_warp = L2 transactions per warp memory instruction; miss_ratio = DRAM
  transactions / L2 transactions (both from the profile's PatternCounts);
* O_CFdiv = 0 (the profile carries no divergence count); O_bank = the bank-conflict replays
  (X - 1 per access with an X-way conflict) * warps per SM * shared_latency_cycles / ITILP;
* size_of_data (T_mem_min) = the DRAM transactions per SM (transactions per thread-warp *
  warps per SM); with no DRAM traffic or no bandwidth bound, T_mem_min = 0.
* tiled kernels (§2.6): the global->shared staging loads are memory instructions (in
  #mem_insts and #insts) whose AMAT is smem_load_cycles (SPEC eq. 19's cost of one); the
  shared-memory accesses are instructions (#insts), their replays O_bank. T_mem_min counts the
  global pattern instructions' DRAM traffic only, so B_memlp is an upper bound for them.
* bound: "memory" when T'_mem > T_comp (the benefit chart's diagonal), else "compute".
Limits: a profile with no instructions gives zero times; no memory instructions give T_mem = 0.
B_fp can be negative when FP_lat exceeds avg_inst_lat (it is defined by difference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cgpredict.devices import GPUDevice
from cgpredict.models.base import Bound, launch_geometry
from cgpredict.models.cgpredict_model import predict_cgpredict
from cgpredict.profile import KernelProfile

__all__ = ["GAMMA_SYNC", "GPUPerfResult", "predict_gpuperf"]

GAMMA_SYNC = 64.0  # Γ of O_sync


@dataclass(frozen=True)
class GPUPerfResult:
    """Every term of SPEC §4, in cycles; cycles and time include all launches."""

    n_warps: int
    b_blocks: int
    total_warps: int
    active_sms: int
    mwp: float
    cwp: float
    mwp_peak_bw: float
    itilp: float
    itilp_max: float
    itmlp: float
    mwp_cp: float
    w_parallel: float
    o_sync: float
    o_sfu: float
    f_sfu: float
    o_cfdiv: float
    o_bank: float
    w_serial: float
    t_comp: float
    avg_dram_lat: float
    amat: float
    miss_ratio: float
    t_mem: float
    f_overlap: float
    t_overlap: float
    t_mem_prime: float
    t_exec: float
    t_fp: float
    t_mem_min: float
    b_itilp: float
    b_serial: float
    b_fp: float
    b_memlp: float
    case: str
    cycles: float
    time_ms: float
    bound: Bound


def _itilp(profile: KernelProfile, device: GPUDevice, n: float) -> tuple[float, float]:
    """(ITILP_max, ITILP): the instruction-level parallelism of the SM's warps, capped."""
    avg_lat = device.inst_latency_cycles
    itilp_max = avg_lat / (device.warp_size / device.simd_width)  # ITILP_max
    itilp = min(profile.ilp * n, itilp_max)  # ITILP
    return itilp_max, itilp


def _avg_dram_lat(device: GPUDevice, lat) -> float:
    """avg_DRAM_lat: a warp's DRAM latency, each transaction after the first departing later."""
    avg_dram_lat = (
        device.dram_latency_cycles + max(lat.trans_per_warp - 1, 0.0) * device.dd_dram_cycles
    )  # avg_DRAM_lat
    return avg_dram_lat


def _serial_overheads(profile: KernelProfile, device: GPUDevice, insts: float,
                      mem_insts: float, warps_per_sm: float, avg_dram_lat: float,
                      itilp: float) -> tuple[float, float, float, float, float]:
    """(O_sync, O_SFU, F_SFU, O_CFdiv, O_bank): the serial overheads W_serial adds up."""
    mem_share = mem_insts / insts if insts > 0 else 0.0
    o_sync = profile.sync_insts * warps_per_sm * GAMMA_SYNC * avg_dram_lat * mem_share  # O_sync
    sfu_share = profile.sfu_insts / insts if insts > 0 else 0.0
    f_sfu = min(max(sfu_share - device.sfu_per_sm / device.simd_width, 0.0), 1.0)  # F_SFU
    o_sfu = (
        profile.sfu_insts * warps_per_sm * (device.warp_size / device.sfu_per_sm) * f_sfu
    )  # O_SFU
    o_cfdiv = 0.0
    replays = sum((x - 1) * k for x, k in profile.shared.insts_by_conflict if x > 1)
    o_bank = replays * warps_per_sm * device.shared_latency_cycles / itilp
    return o_sync, o_sfu, f_sfu, o_cfdiv, o_bank


def _memory_time(profile: KernelProfile, device: GPUDevice, miss_ratio: float,
                 avg_dram_lat: float, cwp: float, mwp: float, mwp_peak: float,
                 warps_per_sm: float) -> tuple[float, float, float, float]:
    """(AMAT, MWP_cp, ITMLP, T_mem): the SM's memory time, its accesses overlapped ITMLP at
    a time."""
    sh = profile.shared
    amat = avg_dram_lat * miss_ratio + device.l2_latency_cycles  # AMAT
    mwp_cp = min(max(1.0, cwp - 1), mwp)  # MWP_cp
    itmlp = min(profile.mlp * mwp_cp, mwp_peak)  # ITMLP
    t_mem = (
        (profile.mem_insts * amat + sh.load_insts * device.smem_load_cycles) * warps_per_sm / itmlp
    )  # T_mem (global accesses at AMAT, staging loads at eq. 19's cost)
    return amat, mwp_cp, itmlp, t_mem


def _floors(profile: KernelProfile, device: GPUDevice, geo, lat, itilp: float,
            warps_per_sm: float, avg_dram_lat: float, mwp_peak: float) -> tuple[float, float]:
    """(T_fp, T_mem_min): the floating-point time and the memory time at peak bandwidth, the
    floors the benefit metrics are measured from."""
    t_fp = (
        profile.fp_insts * geo.total_warps * device.fp_latency_cycles / (geo.active_sms * itilp)
    )  # T_fp
    dram_trans_per_sm = (
        lat.load_bytes_per_warp / device.l2_sector_bytes * profile.mem_insts * warps_per_sm
    )
    t_mem_min = (
        dram_trans_per_sm * avg_dram_lat / mwp_peak if math.isfinite(mwp_peak) else 0.0
    )  # T_mem_min
    return t_fp, t_mem_min


def predict_gpuperf(
    profile: KernelProfile, device: GPUDevice, *, bandwidth_bound: bool = True
) -> GPUPerfResult:
    """Predict with GPUPerf (SPEC §4) and compute its benefit metrics."""
    if profile.ilp <= 0 or profile.mlp <= 0:
        raise ValueError(f"{profile.name}: ilp and mlp must be positive")
    geo = launch_geometry(profile, device)
    cg = predict_cgpredict(profile, device, geometry=geo, bandwidth_bound=bandwidth_bound)
    n, mwp, cwp = geo.n_warps, cg.mwp, cg.cwp
    mwp_peak = cg.mwp_peak_bw if bandwidth_bound else math.inf
    lat = cg.latency
    sh = profile.shared
    insts = profile.total_insts + sh.load_insts + sh.accesses  # replays: O_bank
    mem_insts = profile.mem_insts + sh.load_insts
    warps_per_sm = geo.total_warps / geo.active_sms
    avg_lat = device.inst_latency_cycles

    itilp_max, itilp = _itilp(profile, device, n)
    w_parallel = insts * warps_per_sm * avg_lat / itilp  # W_parallel
    avg_dram_lat = _avg_dram_lat(device, lat)
    o_sync, o_sfu, f_sfu, o_cfdiv, o_bank = _serial_overheads(profile, device, insts, mem_insts,
                                                              warps_per_sm, avg_dram_lat, itilp)
    w_serial = o_sync + o_sfu + o_cfdiv + o_bank  # W_serial
    t_comp = w_parallel + w_serial  # T_comp

    amat, mwp_cp, itmlp, t_mem = _memory_time(profile, device, lat.miss_ratio, avg_dram_lat,
                                              cwp, mwp, mwp_peak, warps_per_sm)
    zeta = 1.0 if cwp <= mwp else 0.0  # ζ
    f_overlap = (n - zeta) / n  # F_overlap
    t_overlap = min(t_comp * f_overlap, t_mem)  # T_overlap
    t_exec = t_comp + t_mem - t_overlap  # T_exec
    t_mem_prime = t_mem - t_overlap  # T'_mem

    t_fp, t_mem_min = _floors(profile, device, geo, lat, itilp, warps_per_sm, avg_dram_lat,
                              mwp_peak)
    b_itilp = w_parallel - insts * warps_per_sm * avg_lat / itilp_max  # B_itilp
    b_serial = w_serial  # B_serial
    b_fp = t_comp - t_fp - b_itilp - b_serial  # B_fp
    b_memlp = max(t_mem_prime - t_mem_min, 0.0)  # B_memlp

    cycles = t_exec * profile.launches
    return GPUPerfResult(
        n_warps=n,
        b_blocks=geo.b_blocks,
        total_warps=geo.total_warps,
        active_sms=geo.active_sms,
        mwp=mwp,
        cwp=cwp,
        mwp_peak_bw=mwp_peak,
        itilp=itilp,
        itilp_max=itilp_max,
        itmlp=itmlp,
        mwp_cp=mwp_cp,
        w_parallel=w_parallel,
        o_sync=o_sync,
        o_sfu=o_sfu,
        f_sfu=f_sfu,
        o_cfdiv=o_cfdiv,
        o_bank=o_bank,
        w_serial=w_serial,
        t_comp=t_comp,
        avg_dram_lat=avg_dram_lat,
        amat=amat,
        miss_ratio=lat.miss_ratio,
        t_mem=t_mem,
        f_overlap=f_overlap,
        t_overlap=t_overlap,
        t_mem_prime=t_mem_prime,
        t_exec=t_exec,
        t_fp=t_fp,
        t_mem_min=t_mem_min,
        b_itilp=b_itilp,
        b_serial=b_serial,
        b_fp=b_fp,
        b_memlp=b_memlp,
        case="cwp<=mwp" if zeta else "cwp>mwp",
        cycles=cycles,
        time_ms=device.cycles_to_ms(cycles),
        bound="memory" if t_mem_prime > t_comp else "compute",
    )
