"""Analytical models: the §3 worked example, hand-computed CGPredict cases, GPUPerf identities."""

from __future__ import annotations

import dataclasses
import math

import pytest

from cgpredict.devices import load_device
from cgpredict.models import (
    MODELS,
    HongKimInputs,
    ModelResult,
    hongkim_raw,
    launch_geometry,
    predict,
    predict_cgpredict,
    predict_gpuperf,
    predict_hongkim,
)
from cgpredict.models.hongkim import hongkim_inputs
from cgpredict.profile import KernelProfile, PatternCounts, SharedMemoryCounts, StagingCounts

#: the H100's staging issue rate (its device file): 195 instructions in 689 cycles, eq. (22d)
STAGING_ISSUE_RATE = 195.0 / 689.0


@pytest.fixture(scope="module")
def tk1():
    return load_device("tk1")


# ---- §3 worked example ---------------------------------------------------------------------

WORKED = HongKimInputs(
    mem_ld_cycles=420,
    departure_del_uncoal_cycles=10,
    departure_del_coal_cycles=4,
    uncoal_per_mw=32,
    uncoal_mem_insts=6,
    coal_mem_insts=0,
    comp_insts=27,
    synch_insts=6,
    issue_cycles=4,
    freq_hz=1e9,
    mem_bandwidth_bytes_per_s=80e9,
    load_bytes_per_warp=128,
    active_sms=16,
    n_warps=20,
    active_blocks_per_sm=5,
    blocks=80,
)


def _check_worked_example(r) -> None:
    assert r.mem_l == pytest.approx(730)
    assert r.departure_delay == pytest.approx(320)
    assert r.mwp_without_bw_full == pytest.approx(2.28125)
    assert r.bw_per_warp_gbps == pytest.approx(0.175, rel=2e-3)
    assert r.mwp_peak_bw == pytest.approx(28.52, rel=1e-3)
    assert r.mwp == pytest.approx(2.28125)
    assert r.comp_cycles == pytest.approx(132)
    assert r.mem_cycles == pytest.approx(4380)
    assert r.cwp_full == pytest.approx(34.18, rel=1e-3)
    assert r.cwp == 20
    assert r.rep == pytest.approx(1)
    assert r.case == "eq23" and r.bound == "memory"
    assert r.exec_cycles == pytest.approx(38428.1875)
    assert r.synch_cost == pytest.approx(12300)
    assert r.exec_with_synch == pytest.approx(50728.1875)
    # the paper's printed figures (MWP rounded to 2.28 before use) within 0.2 %
    assert r.exec_cycles == pytest.approx(38450, rel=2e-3)
    assert r.synch_cost == pytest.approx(12288, rel=2e-3)
    assert r.exec_with_synch == pytest.approx(50738, rel=2e-3)
    assert r.mwp_peak_bw == pytest.approx(28.57, rel=2e-3)


def test_hongkim_worked_example_raw() -> None:
    _check_worked_example(hongkim_raw(WORKED))


def test_hongkim_printed_rounding_reproduces_printed_figures() -> None:
    # Re-doing eqs. (23), (26) with MWP rounded to 2.28 gives the printed 38450 / 12288.
    mwp = 2.28
    exec_printed = 4380 * 20 / mwp + 132 / 6 * (mwp - 1)
    assert exec_printed == pytest.approx(38450, abs=1)
    assert 320 * (mwp - 1) * 6 * 5 == pytest.approx(12288)


def test_hongkim_worked_example_from_profile(tk1) -> None:
    device = dataclasses.replace(
        tk1,
        sm_count=16,
        clock_mhz=1000.0,
        l2_latency_cycles=100.0,
        dram_latency_cycles=320.0,
        dd_dram_cycles=10.0,
        inst_cycles_per_warp_inst=4.0,
        dram_bandwidth_gbps=80.0,
    )
    profile = KernelProfile(
        name="tiled_mm",
        threads_per_block=128,
        blocks=80,
        uncoal=PatternCounts(insts=6, l2_trans_per_warp=32, dram_trans_per_warp=32),
        comp_insts=27,
        sync_insts=6,
        shared=SharedMemoryCounts(bytes_per_block=9728),  # 49152 // 9728 = 5 blocks per SM
    )
    r = predict_hongkim(profile, device)
    assert (r.n_warps, r.b_blocks, r.inputs.active_sms) == (20, 5, 16)
    _check_worked_example(r)
    assert predict(profile, device, "hongkim").cycles == pytest.approx(50728.1875)


def test_hongkim_cases() -> None:
    # MWP = CWP = N -> eq. (22)
    few = dataclasses.replace(WORKED, n_warps=2, active_blocks_per_sm=1, blocks=16)
    r = hongkim_raw(few)
    assert r.case == "eq22"
    assert r.exec_cycles == pytest.approx((4380 + 132 + 132 / 6 * 1) * 1)
    # CWP < MWP and Comp <= Mem -> eq. (24)
    coal = dataclasses.replace(WORKED, uncoal_mem_insts=0, coal_mem_insts=1, comp_insts=2000)
    r = hongkim_raw(coal)
    assert r.cwp < r.mwp or r.comp_cycles > r.mem_cycles
    assert r.case == "eq23"  # comp > mem still uses eq. (23)
    coalesced = dataclasses.replace(WORKED, uncoal_mem_insts=0, coal_mem_insts=6, comp_insts=200)
    r = hongkim_raw(coalesced)
    assert (r.mem_l, r.departure_delay, r.mwp_without_bw) == (420, 4, 20)  # 105 bounded by N
    assert r.mwp == pytest.approx(80e9 / (1e9 * 128 / 420 * 16))  # eq. (6) binds: 16.41
    assert r.cwp < r.mwp and r.comp_cycles <= r.mem_cycles
    assert r.case == "eq24" and r.bound == "compute"
    assert r.exec_cycles == pytest.approx((r.mem_l + r.comp_cycles * r.n_warps) * r.rep)


# ---- CGPredict (§2.5), hand-computed on the TK1 ------------------------------------------


def _mem_bound_profile(blocks: int = 16) -> KernelProfile:
    return KernelProfile(
        name="membound",
        threads_per_block=256,
        blocks=blocks,
        coal=PatternCounts(insts=2, l2_trans_per_warp=2, dram_trans_per_warp=0.5),
        uncoal=PatternCounts(insts=1, l2_trans_per_warp=32, dram_trans_per_warp=8),
        comp_insts=5,
    )


def _compute_bound_profile() -> KernelProfile:
    return KernelProfile(
        name="compbound",
        threads_per_block=256,
        blocks=16,
        coal=PatternCounts(insts=1, l2_trans_per_warp=2, dram_trans_per_warp=0),
        comp_insts=400,
    )


def test_cgpredict_memory_bound_hand_computed(tk1) -> None:
    r = predict_cgpredict(_mem_bound_profile(), tk1)
    lat = r.latency
    assert lat.mem_l_coal == 166  # (1): 164 + (2-1)*2
    assert lat.dep_del_coal == 5  # (3): max(2*2, 0.5*10)
    assert lat.mem_l_uncoal == 566  # (2): 164 + 332 + (8-1)*10
    assert lat.dep_del_uncoal == 80  # (3): max(32*2, 8*10)
    assert r.mem_cycles == 898  # (6)
    assert r.mem_l == pytest.approx(898 / 3)  # (7)
    assert r.departure_delay == pytest.approx(30)  # (8)
    assert r.mwp == pytest.approx(898 / 90)  # (13)
    assert r.comp_cycles == 4  # (12): 0.5 * 8
    assert r.cwp == 64  # (14) bounded by N
    assert (r.n_warps, r.b_blocks, r.batch) == (64, 8, 2)
    assert r.mwp_peak_bw == pytest.approx(17e9 / (852e6 * 192 / (898 / 3)))
    assert r.case == "eq16" and r.bound == "memory"
    mem_term, comp_term = 5760.0, 4 / 3 * 898 / 90
    assert r.exec_cycles == pytest.approx((mem_term + comp_term) * 2)  # whole
    paper = predict_cgpredict(_mem_bound_profile(), tk1, batch_mode="paper")
    assert paper.exec_cycles == pytest.approx(mem_term + comp_term * 2)  # (16) as printed
    assert r.time_ms == pytest.approx(r.cycles / 852e6 * 1e3)  # (18)


def test_cgpredict_compute_bound_hand_computed(tk1) -> None:
    r = predict_cgpredict(_compute_bound_profile(), tk1)
    assert r.mem_l == 166 and r.departure_delay == 4
    assert r.mwp == pytest.approx(41.5)
    assert r.comp_cycles == pytest.approx(200.5)
    assert r.cwp == pytest.approx(366.5 / 200.5)
    assert r.case == "eq17" and r.bound == "compute"
    assert r.exec_cycles == pytest.approx((166 + 200.5 * 64) * 2)  # whole: 25996
    paper = predict_cgpredict(_compute_bound_profile(), tk1, batch_mode="paper")
    assert paper.exec_cycles == pytest.approx(166 + 200.5 * 64 * 2)  # (17) as printed: 25830


def test_whole_batch_scales_memory_time_with_work(tk1) -> None:
    small = predict_cgpredict(_mem_bound_profile(16), tk1)
    large = predict_cgpredict(_mem_bound_profile(32), tk1)
    assert large.cycles == pytest.approx(2 * small.cycles)
    small_p = predict_cgpredict(_mem_bound_profile(16), tk1, batch_mode="paper")
    large_p = predict_cgpredict(_mem_bound_profile(32), tk1, batch_mode="paper")
    assert large_p.cycles < 1.01 * small_p.cycles  # the printed reading barely grows


def test_bad_batch_mode(tk1) -> None:
    with pytest.raises(ValueError, match="batch_mode"):
        predict_cgpredict(_mem_bound_profile(), tk1, batch_mode="half")


def test_bandwidth_bound_binds_on_a_slow_dram(tk1) -> None:
    slow = dataclasses.replace(tk1, dram_bandwidth_gbps=0.5)
    r = predict_cgpredict(_mem_bound_profile(), slow)
    assert r.mwp == pytest.approx(r.mwp_peak_bw) and r.mwp < r.mwp_full
    off = predict_cgpredict(_mem_bound_profile(), slow, bandwidth_bound=False)
    assert off.mwp == pytest.approx(898 / 90)
    assert r.cycles > off.cycles


def test_shared_memory_terms(tk1) -> None:
    base = dataclasses.replace(_mem_bound_profile(), sync_insts=2)
    shared = dataclasses.replace(
        base,
        shared=SharedMemoryCounts(
            load_insts=2, insts_by_conflict=((1, 4), (16, 1)), bytes_per_block=8192
        ),
    )
    r0 = predict_cgpredict(base, tk1)
    r = predict_cgpredict(shared, tk1, smem_cost="latency")
    assert r.smem_load_cycles == 2 * 506  # (19)
    assert r.smem_cycles == 67 * (1 * 4 + 16 * 1)  # (20), the printed latency reading
    assert r.mem_cycles == r0.mem_cycles + 1012  # (21)
    assert r.comp_cycles == r0.comp_cycles + 1340  # (22)
    overlapping = dataclasses.replace(tk1, smem_overlaps_issue=True,
                                      staging_issue_rate=STAGING_ISSUE_RATE)
    issue = predict_cgpredict(shared, overlapping)  # default: issue cost, smem_issue_cycles = 1
    assert issue.smem_cycles == 1 * (1 * 4 + 16 * 1)
    # issue reading: the load/store pipe (20 shared transactions) works beside the dispatch
    # (4 issue cycles): the warp computes for the slower of the two, after its staging, issued
    # apart between the barriers: 2 LDG and 2 STS at 0.5 = 2 cycles (the STS among the 4)
    assert r0.comp_cycles == 4
    # less eq. (22d): 6 blocks of 8 warps resident, 2 a scheduler, so 1 - 2 x the staging
    # issue rate of the 2 staging cycles hide under the other blocks' shared loads
    hidden = (1 - 2 * STAGING_ISSUE_RATE) * 2
    # and plus eq. (22e): the hidden share (hidden / 2) of the staging's 2 + 2 passes (a
    # line each load, a pass each store) joins the shared loads on the pipe
    assert issue.comp_cycles == pytest.approx(2 + max(r0.comp_cycles - 1, 20) - hidden
                                              + hidden / 2 * 4)
    # the TK1's file: the dispatch does not overlap the shared path, (22s): the sum
    assert not tk1.smem_overlaps_issue
    serial = predict_cgpredict(shared, tk1)
    assert serial.smem_cycles == issue.smem_cycles
    assert serial.comp_cycles == 2 + (r0.comp_cycles - 1) + 20
    assert r.no_mem_insts == 5
    assert r.b_blocks == 6  # 49152 // 8192
    assert r.sync_cost == pytest.approx(
        r.departure_delay * (r.mwp - 1) * 2 * r.b_blocks * r.batch
    )  # (23)
    assert r.cycles == pytest.approx(r.exec_cycles + r.sync_cost)


def test_overlap_reading_takes_the_slower_of_issue_and_path_the_serial_one_their_sum() -> None:
    """_comp_cycles by hand, one warp, no staging: 40 instructions at 0.5 = 20 issue cycles;
    30 shared accesses, 10 of them 2-way conflicted: 40 passes at smem_issue_cycles 1.5 =
    60 path cycles. Overlapping (eq. (22)): max(20, 60) = 60; serial (eq. (22s)): 80; a
    kernel with no shared access and no L1-served load computes 20 either way."""
    from cgpredict.models.cgpredict_model import lsu_issue_cycles

    dev = dataclasses.replace(load_device("tk1"), inst_cycles_per_warp_inst=0.5,
                              smem_issue_cycles=1.5, pipes=None)  # fmt: skip
    prof = KernelProfile(
        "k", 256, 64, comp_insts=40,
        shared=SharedMemoryCounts(insts_by_conflict=((1.0, 20.0), (2.0, 10.0))),
    )  # fmt: skip
    over = predict_cgpredict(prof, dataclasses.replace(dev, smem_overlaps_issue=True))
    serial = predict_cgpredict(prof, dataclasses.replace(dev, smem_overlaps_issue=False))
    assert over.smem_cycles == serial.smem_cycles == pytest.approx(60.0)
    assert over.comp_cycles == pytest.approx(60.0)
    assert serial.comp_cycles == pytest.approx(80.0)
    plain = dataclasses.replace(prof, shared=SharedMemoryCounts())
    for flag in (True, False):
        r = predict_cgpredict(plain, dataclasses.replace(dev, smem_overlaps_issue=flag))
        assert r.comp_cycles == pytest.approx(20.0)
    assert lsu_issue_cycles(20.0, 60.0, dataclasses.replace(dev, smem_overlaps_issue=False)) == 80.0


def test_launches_multiply(tk1) -> None:
    one = predict_cgpredict(_mem_bound_profile(), tk1)
    three = predict_cgpredict(dataclasses.replace(_mem_bound_profile(), launches=3), tk1)
    assert three.cycles == pytest.approx(3 * one.cycles)


def test_multi_sm_waves() -> None:
    gtx = load_device("gtx980")
    geo = launch_geometry(dataclasses.replace(_mem_bound_profile(), blocks=20), gtx)
    assert (geo.active_sms, geo.b_blocks, geo.n_warps, geo.waves) == (16, 2, 16, 1.0)
    geo = launch_geometry(dataclasses.replace(_mem_bound_profile(), blocks=512), gtx)
    assert (geo.active_sms, geo.b_blocks, geo.waves) == (16, 8, 4.0)
    geo = launch_geometry(dataclasses.replace(_mem_bound_profile(), blocks=4), gtx)
    assert (geo.active_sms, geo.b_blocks, geo.waves) == (4, 1, 1.0)


# ---- degenerate profiles -------------------------------------------------------------------


@pytest.mark.parametrize("model", sorted(MODELS))
def test_zero_memory_instructions(tk1, model) -> None:
    p = KernelProfile(name="alu", threads_per_block=256, blocks=16, comp_insts=100, sync_insts=1)
    r = predict(p, tk1, model)
    assert math.isfinite(r.cycles) and r.cycles > 0
    assert r.bound == "compute"
    if model == "cgpredict":
        assert r.case == "eq17"
        assert r.cycles == pytest.approx(50 * 64 * 2)  # comp_cycles * N * batch


@pytest.mark.parametrize("model", sorted(MODELS))
def test_empty_profile(tk1, model) -> None:
    r = predict(KernelProfile(name="empty", threads_per_block=32, blocks=1), tk1, model)
    assert r.cycles == 0


@pytest.mark.parametrize("model", sorted(MODELS))
def test_memory_only_profile(tk1, model) -> None:
    p = KernelProfile(
        name="copy",
        threads_per_block=256,
        blocks=64,
        coal=PatternCounts(insts=2, l2_trans_per_warp=2, dram_trans_per_warp=2),
    )
    r = predict(p, tk1, model)
    assert math.isfinite(r.cycles) and r.cycles > 0 and r.bound == "memory"


# ---- GPUPerf --------------------------------------------------------------------------------


def _gpuperf_profile(**kw) -> KernelProfile:
    base = {
        "name": "gp",
        "threads_per_block": 64,
        "blocks": 8,
        "coal": PatternCounts(insts=4, l2_trans_per_warp=2, dram_trans_per_warp=1),
        "uncoal": PatternCounts(insts=2, l2_trans_per_warp=32, dram_trans_per_warp=16),
        "comp_insts": 60,
        "sfu_insts": 20,
        "fp_insts": 30,
        "sync_insts": 1,
        "shared": SharedMemoryCounts(insts_by_conflict=((1, 3), (4, 2)), bytes_per_block=1024),
    }
    base.update(kw)
    return KernelProfile(**base)


def _check_gpuperf_identities(r) -> None:
    assert r.b_itilp + r.b_serial + r.b_fp + r.t_fp == pytest.approx(r.t_comp)
    assert r.t_comp == pytest.approx(r.w_parallel + r.w_serial)
    assert r.w_serial == pytest.approx(r.o_sync + r.o_sfu + r.o_cfdiv + r.o_bank)
    assert r.t_exec == pytest.approx(r.t_comp + r.t_mem - r.t_overlap)
    assert r.t_mem_prime == pytest.approx(r.t_mem - r.t_overlap)
    assert r.b_memlp == pytest.approx(max(r.t_mem_prime - r.t_mem_min, 0))
    assert r.itilp <= r.itilp_max
    assert r.b_itilp >= 0 and r.b_serial >= 0 and r.b_memlp >= 0


@pytest.mark.parametrize("device_name", ["tk1", "gtx980", "jetson_xavier_nx", "h100"])
def test_gpuperf_benefits(device_name) -> None:
    # enough warps (and ILP) for ITILP to reach ITILP_max: then every benefit is >= 0
    d = load_device(device_name)
    r = predict_gpuperf(_gpuperf_profile(threads_per_block=256, blocks=1024, ilp=2.0), d)
    assert r.itilp == r.itilp_max
    _check_gpuperf_identities(r)
    for name in (
        "b_itilp",
        "b_serial",
        "b_fp",
        "b_memlp",
        "t_fp",
        "t_mem_min",
        "o_sync",
        "o_sfu",
        "o_bank",
        "t_overlap",
    ):
        assert getattr(r, name) >= 0, name


@pytest.mark.parametrize("device_name", ["tk1", "gtx980", "h100"])
def test_gpuperf_identities_at_low_itilp(device_name) -> None:
    # with few warps ITILP < ITILP_max; B_fp (defined by difference) may then be negative,
    # but the SPEC's decomposition still sums to T_comp
    r = predict_gpuperf(_gpuperf_profile(), load_device(device_name))
    assert r.itilp < r.itilp_max
    _check_gpuperf_identities(r)


def test_gpuperf_hand_computed_terms(tk1) -> None:
    p = _gpuperf_profile()
    r = predict_gpuperf(p, tk1)
    # 64 threads -> 2 warps/block; 8 blocks on 1 SM: B = 8, N = 16, 16 warps in all
    assert (r.n_warps, r.total_warps, r.active_sms) == (16, 16, 1)
    assert r.itilp_max == pytest.approx(9 / (32 / 192))  # 54
    assert r.itilp == 16  # ILP 1 * N
    # #insts: 6 memory + 60 compute + 5 shared-memory accesses (replays go to O_bank)
    assert r.w_parallel == pytest.approx(71 * 16 * 9 / 16)
    assert r.b_itilp == pytest.approx(71 * 16 * 9 / 16 - 71 * 16 * 9 / 54)
    assert r.f_sfu == pytest.approx(20 / 71 - 32 / 192)
    assert r.o_sfu == pytest.approx(20 * 16 * (32 / 32) * (20 / 71 - 32 / 192))
    trans = (4 * 2 + 2 * 32) / 6
    assert r.avg_dram_lat == pytest.approx(332 + (trans - 1) * 10)
    assert r.o_sync == pytest.approx(1 * 16 * 64 * r.avg_dram_lat * 6 / 71)
    assert r.o_bank == pytest.approx(3 * 2 * 16 * 67 / 16)
    assert r.miss_ratio == pytest.approx((4 * 1 + 2 * 16) / (4 * 2 + 2 * 32))
    assert r.amat == pytest.approx(r.avg_dram_lat * r.miss_ratio + 164)
    assert r.t_fp == pytest.approx(30 * 16 * 9 / 16)
    assert r.mwp_cp == pytest.approx(min(max(1, r.cwp - 1), r.mwp))


def test_gpuperf_more_ilp_reduces_b_itilp(tk1) -> None:
    lo = predict_gpuperf(_gpuperf_profile(), tk1)
    hi = predict_gpuperf(_gpuperf_profile(ilp=4.0), tk1)
    assert hi.b_itilp < lo.b_itilp and hi.t_comp < lo.t_comp


def test_gpuperf_rejects_bad_ilp(tk1) -> None:
    with pytest.raises(ValueError):
        predict_gpuperf(_gpuperf_profile(mlp=0.0), tk1)


# ---- dispatcher -----------------------------------------------------------------------------


def test_predict_dispatch(tk1) -> None:
    for name in MODELS:
        r = predict(_mem_bound_profile(), tk1, name)
        assert isinstance(r, ModelResult) and r.model == name
        assert r.cycles == r.details.cycles and r.time_ms > 0
        assert r.bound in ("memory", "compute")
        assert (r.n_warps, r.b_blocks) == (64, 8)
    r = predict(_mem_bound_profile(), tk1, batch_mode="paper")
    assert r.details.batch_mode == "paper"
    with pytest.raises(ValueError, match="unknown model"):
        predict(_mem_bound_profile(), tk1, "roofline")


@pytest.mark.parametrize("device_name", ["tk1", "gtx980", "jetson_xavier_nx", "h100"])
def test_every_model_on_every_device(device_name) -> None:
    d = load_device(device_name)
    for name in MODELS:
        r = predict(_gpuperf_profile(blocks=4096), d, name)
        assert math.isfinite(r.cycles) and r.cycles > 0


def test_l1_served_loads_cost_load_store_issue_cycles() -> None:
    """L1 hits use the shared-memory path: smem_issue_cycles per L1 line of each warp load
    (coalesced: 4 sectors of 32 B in one 128-B line; uncoalesced: a line per sector)."""
    from cgpredict.profile import KernelProfile, PatternCounts

    h100 = load_device("h100")
    prof = KernelProfile(
        "k", 256, 1000,
        coal=PatternCounts(100, 4, 0, l1_hit_fraction=0.5),
        uncoal=PatternCounts(10, 32, 0, l1_hit_fraction=1.0),
        const=PatternCounts(20, 1, 0, l1_hit_fraction=0.25),
        comp_insts=50,
    )
    r = predict_cgpredict(prof, h100)
    assert r.l1_cycles == pytest.approx(
        h100.smem_issue_cycles * (100 * 0.5 * 1 + 10 * 32 + 20 * 0.25))
    no_l1 = predict_cgpredict(dataclasses.replace(
        prof, coal=PatternCounts(100, 4, 0), uncoal=PatternCounts(10, 32, 0),
        const=PatternCounts(20, 1, 0)), h100)
    assert no_l1.l1_cycles == 0
    # the load/store pipe works beside the dispatch: the warp computes for the slower one
    assert no_l1.comp_cycles == pytest.approx(h100.inst_cycles_per_warp_inst * (130 + 50))
    assert r.comp_cycles == pytest.approx(max(no_l1.comp_cycles, r.l1_cycles))


# ---- too few warps; staging loads in Hong & Kim and GPUPerf -------------------------------


def test_single_warp_pays_its_own_serial_timeline(tk1) -> None:
    """One warp cannot hide its memory periods behind anyone: MWP = CWP = N = 1, and the time
    is its memory cycles plus its computation (§3 eq. 22), not eq. (16)'s one period of it."""
    p = KernelProfile(
        name="onewarp",
        threads_per_block=32,
        blocks=1,
        coal=PatternCounts(insts=10, l2_trans_per_warp=2, dram_trans_per_warp=2),
        comp_insts=20000,
    )
    r = predict_cgpredict(p, tk1)
    assert (r.geometry.n_warps, r.mwp, r.cwp, r.case) == (1, 1, 1, "eq22")
    comp = 0.5 * (20000 + 10)
    assert r.comp_cycles == pytest.approx(comp)
    assert r.exec_cycles == pytest.approx(r.mem_cycles + comp)  # + comp/10 * (MWP - 1) = 0
    assert r.exec_cycles > r.mem_cycles * 1 / 1 + comp / 10 * 1  # what eq. (16) would give
    assert r.bound == "compute"
    paper = predict_cgpredict(p, tk1, batch_mode="paper")
    assert paper.case == "eq16"  # the printed reading is kept as printed


def test_a_warp_alone_waits_for_its_own_dependent_computing(tk1) -> None:
    """eq. (22c): too few warps to hide anything, a warp's computing lasts at least its
    instructions' dependent latencies (profile.compute_chain_cycles), not only their issue;
    a chain shorter than the issue time changes nothing, and eq. (16)/(17) never read it."""
    base = KernelProfile(
        name="onewarp", threads_per_block=32, blocks=1,
        coal=PatternCounts(insts=10, l2_trans_per_warp=2, dram_trans_per_warp=2),
        comp_insts=2000,
    )  # fmt: skip
    issue = 0.5 * (2000 + 10)  # TK1: 0.5 cycles a warp instruction
    r0 = predict_cgpredict(base, tk1)
    chained = dataclasses.replace(base, compute_chain_cycles=3 * issue)
    r = predict_cgpredict(chained, tk1)
    assert r.case == r0.case == "eq22" and r.comp_cycles == pytest.approx(issue)
    assert r0.exec_cycles == pytest.approx(r0.mem_cycles + issue)
    assert r.exec_cycles == pytest.approx(r.mem_cycles + 3 * issue)  # N = MWP = 1
    assert r.own_comp_cycles == pytest.approx(3 * issue) and r0.own_comp_cycles == issue
    from cgpredict.models import bound_text

    assert "own computing 3015 cycles" in bound_text(predict(chained, tk1, "cgpredict"))
    assert "own computing" not in bound_text(predict(base, tk1, "cgpredict"))
    short = dataclasses.replace(base, compute_chain_cycles=issue / 2)
    assert predict_cgpredict(short, tk1).exec_cycles == pytest.approx(r0.exec_cycles)
    many = dataclasses.replace(chained, blocks=64, threads_per_block=256)
    plain = dataclasses.replace(many, compute_chain_cycles=0.0)
    rm = predict_cgpredict(many, tk1)
    if rm.case != "eq22":
        assert rm.exec_cycles == pytest.approx(predict_cgpredict(plain, tk1).exec_cycles)


def test_devices_without_measured_fp64_or_sfu_latency_use_the_fp_latency(tk1) -> None:
    lat = tk1.op_latencies
    assert (lat.fp64, lat.sfu, lat.fp32) == (tk1.fp_latency_cycles,) * 3
    h100 = load_device("h100").op_latencies
    assert (h100.fp64, h100.sfu) == (8.03, 17.0)  # calibrate, calibrated.raw.json


def _tiled_profile(**kw) -> KernelProfile:
    base = {
        "name": "tiled",
        "threads_per_block": 256,
        "blocks": 64,
        "coal": PatternCounts(insts=2, l2_trans_per_warp=2, dram_trans_per_warp=1),
        "comp_insts": 100,
        "sync_insts": 4,
        "shared": SharedMemoryCounts(load_insts=4, insts_by_conflict=((1, 60), (2, 4))),
    }
    base.update(kw)
    return KernelProfile(**base)


def test_hongkim_counts_staging_loads_as_coalesced_memory(tk1) -> None:
    inp = hongkim_inputs(_tiled_profile(), tk1)
    assert inp.coal_mem_insts == 2 + 4  # the C accesses and the 4 staging loads
    assert inp.uncoal_mem_insts == 0
    # staging loads: 32 threads * 4 B over 64-B lines = 2 transactions, like the C accesses
    assert inp.departure_del_coal_cycles == pytest.approx(10 * 2)
    assert inp.comp_insts == 100 + 60 + 2 * 4  # shared accesses, a 2-way conflict twice
    none = hongkim_inputs(_tiled_profile(shared=SharedMemoryCounts()), tk1)
    assert (none.coal_mem_insts, none.comp_insts) == (2, 100)


def test_gpuperf_counts_staging_loads(tk1) -> None:
    r = predict_gpuperf(_tiled_profile(), tk1)
    base = predict_gpuperf(_tiled_profile(shared=SharedMemoryCounts()), tk1)
    warps = r.total_warps / r.active_sms
    # #insts = 2 + 100 global-side, + 4 staging loads + 64 shared accesses
    assert r.w_parallel == pytest.approx(170 * warps * 9 / r.itilp)
    assert r.t_mem == pytest.approx((2 * r.amat + 4 * tk1.smem_load_cycles) * warps / r.itmlp)
    assert base.t_mem == pytest.approx(2 * base.amat * warps / base.itmlp)
    assert r.o_bank == pytest.approx(4 * warps * 67 / r.itilp)  # one replay per 2-way access


def test_l1_lines_ignore_roundoff_in_scaled_transactions() -> None:
    """Transactions per warp are averages scaled from the trace: 4 sectors plus roundoff is
    still one 128-B line, not two."""
    from cgpredict.models.cgpredict_model import _l1_cycles

    h100 = load_device("h100")

    def cycles(trans: float) -> float:
        p = KernelProfile(
            name="l1",
            threads_per_block=256,
            blocks=8,
            coal=PatternCounts(insts=10, l2_trans_per_warp=trans, l1_hit_fraction=0.5),
        )
        return _l1_cycles(p, h100)

    assert cycles(4.000000000000003) == cycles(4.0) == cycles(3.999999999999996)
    assert cycles(4.5) == 2 * cycles(4.0)  # a misaligned access does span two lines


def test_l1_lines_are_those_the_served_instructions_read() -> None:
    """A row walk (32 rows a warp instruction) whose few L1-missing instructions miss only 30
    of their 32 sectors still reads 32 lines per served instruction: 100 x 0.9 x 32 cycles,
    not 100 x 0.9 x 30. A coalesced load of 8 sectors (two lines) served: 2 lines, whatever
    its missing instances fetch. Without sectors_per_warp (hand-made or older profiles) the
    reaching instructions' transactions stand in, as before."""
    from cgpredict.models.cgpredict_model import _l1_cycles

    h100 = load_device("h100")

    def cycles(uncoal: PatternCounts, coal: PatternCounts = PatternCounts()) -> float:
        p = KernelProfile(name="walk", threads_per_block=256, blocks=16, coal=coal, uncoal=uncoal)
        return _l1_cycles(p, h100)

    walk = PatternCounts(insts=100, l2_trans_per_warp=30, l1_hit_fraction=0.9)
    assert cycles(dataclasses.replace(walk, sectors_per_warp=32)) == pytest.approx(
        h100.smem_issue_cycles * 100 * 0.9 * 32)
    assert cycles(walk) == pytest.approx(h100.smem_issue_cycles * 100 * 0.9 * 30)
    wide = PatternCounts(insts=10, l2_trans_per_warp=1, l1_hit_fraction=0.5, sectors_per_warp=8)
    assert cycles(PatternCounts(), wide) == pytest.approx(h100.smem_issue_cycles * 10 * 0.5 * 2)


def test_stores_leave_the_sectors_of_the_loads() -> None:
    """loads_only takes the stores' transactions out of sectors_per_warp as out of the L2
    counts: 10 loads of 32 sectors and 10 stores of 4 (all reaching the L2) issue
    (10 x 32 + 10 x 4) / 20 = 18 a warp instruction together, 32 for the loads alone."""
    from cgpredict.profile import StoreCounts

    both = PatternCounts(insts=20, l2_trans_per_warp=18, l1_hit_fraction=0.0, sectors_per_warp=18)
    st = PatternCounts(insts=10, l2_trans_per_warp=4)
    p = KernelProfile(name="s", threads_per_block=256, blocks=16, uncoal=both,
                      stores=StoreCounts(uncoal=st))
    assert p.loads_only().uncoal.sectors_per_warp == pytest.approx(32)
    assert p.loads_only().uncoal.l2_trans_per_warp == pytest.approx(32)


def _result(bound, comp, mem, n, mwp, binding="model"):
    """A ModelResult stand-in with the fields bound_text reads."""
    from types import SimpleNamespace

    details = SimpleNamespace(comp_cycles=comp, mem_cycles=mem, n_warps=n, mwp=mwp,
                              launches=1)
    return SimpleNamespace(bound=bound, binding=binding, details=details, model_cycles=1e6)


@pytest.mark.parametrize("comp, mem, n, mwp, expect", [
    (490.1, 11150.0, 64, 30.35, "compute"),  # CSR SpMV on the H100: 64 x 490 > 64 x 11150 / 30
    (86022.0, 2.8e6, 8, 8.0, "memory"),  # n-body: 8 warps, each waiting on 65536 loads
    (93.5, 36770.0, 64, 2.95, "memory"),  # CSR SpMV on the TK1
])
def test_bound_label_follows_the_sm_figures(comp, mem, n, mwp, expect):
    from cgpredict.models.cgpredict_model import bound_of, sm_figures

    c, m = sm_figures(comp, mem, n, mwp)
    assert bound_of(comp, mem, n, mwp) == expect == ("memory" if m >= c else "compute")


def test_bound_text_prints_the_figures_of_its_label():
    from cgpredict.models import bound_text

    spmv = bound_text(_result("compute", 490.1, 11150.0, 64, 30.35))
    assert spmv.startswith("compute-bound (per SM: compute 3.137e+04 = 64 warps x 490.1")
    assert "memory 2.351e+04 = 64 x 1.115e+04 / MWP 30.35" in spmv
    # every warp may wait at memory at once (MWP = N): latency, not DRAM traffic
    assert bound_text(_result("memory", 86022.0, 2.8e6, 8, 8.0)).startswith(
        "memory-latency-bound")
    assert bound_text(_result("memory", 93.5, 36770.0, 64, 2.95)).startswith("memory-bound (")
    assert bound_text(_result("memory", 1, 1, 1, 1, binding="dram")) == (
        "memory-bound (the dram bound sets the time)")


def _strip_profile(comp_insts: float) -> KernelProfile:
    """_mem_bound_profile with 8 tile strips (16 barriers) of 2 staging loads and 40
    conflict-free shared loads each (a tiled kernel; 6 blocks of 8 KB fit the TK1's SM)."""
    return dataclasses.replace(
        _mem_bound_profile(64), comp_insts=comp_insts, sync_insts=16,
        shared=SharedMemoryCounts(load_insts=16, insts_by_conflict=((1, 320),),
                                  bytes_per_block=8192),
    )


def test_tiled_sync_cost_is_the_same_on_both_sides_of_cwp_mwp(tk1) -> None:
    """With two or more blocks resident a tiled kernel's barriers cost the staging latency
    once a strip for the SM (8 strips x smem_load_cycles 506 per batch), in eq. (16) as in
    eq. (17): a kernel whose CWP crosses MWP keeps its barrier cost, and its time moves by
    the few cycles of computing that moved it, not by eq. (23)'s departure delay x (MWP - 1)
    x 16 barriers x B blocks (6.4x more here; the printed reading keeps it)."""
    cases = {}
    for comp in range(1000, 4000, 20):
        r = predict_cgpredict(_strip_profile(comp), tk1)
        assert r.b_blocks == 6 and r.batch == pytest.approx(64 / 6)
        assert r.sync_cost == pytest.approx(8 * 506 * 64 / 6)
        assert r.cycles == pytest.approx(r.exec_cycles + r.sync_cost)
        cases.setdefault(r.case, comp)
    assert set(cases) == {"eq16", "eq17"} and cases["eq16"] < cases["eq17"]
    r = predict_cgpredict(_strip_profile(1000), tk1)
    eq23 = r.departure_delay * (r.mwp - 1) * 16 * 6 * r.batch  # what the (16) side was charged
    assert r.case == "eq16" and eq23 > 6 * r.sync_cost


def test_tile_staging_is_issued_apart_from_the_shared_pipe(tk1) -> None:
    """A strip's staging (120 code + 16 STS + 16 LDG a warp) runs between barriers, while no
    shared load of the block is in flight: on the TK1 (0.5 issue cycles an instruction, one
    wavefront a cycle) a warp computes 0.5 x (120 + 2 x 16) = 76 cycles of staging, then the
    slower of the rest of its dispatch, 0.5 x (200 + 3) - 0.5 x 136 = 33.5, and its 320
    wavefronts: 396, not max(101.5, 320) = 320; every staging instruction more costs its
    issue cycle although the shared pipe binds the rest. With the TK1's own reading, the
    dispatch not overlapping the shared path (eq. (22s)), the two add: 76 + 33.5 + 320."""
    code = StagingCounts(integer=100, branch=8, other=12)
    over = dataclasses.replace(tk1, smem_overlaps_issue=True,
                               staging_issue_rate=STAGING_ISSUE_RATE)

    def tiled(extra: float) -> KernelProfile:
        return dataclasses.replace(
            _strip_profile(200 + extra),
            staging_code=dataclasses.replace(code, integer=code.integer + extra))

    # less eq. (22d): 8 warps a block (2 a scheduler), 6 blocks resident: the share
    # 1 - 2 x STAGING_ISSUE_RATE of the staging hides under the other blocks' shared loads
    kept = 2 * STAGING_ISSUE_RATE
    r = predict_cgpredict(tiled(0), over)
    assert r.smem_cycles == 320
    # plus eq. (22e): the hidden share 1 - kept of the 16 loads' and 16 stores' 32 passes
    assert r.comp_cycles == pytest.approx(76 * kept + 320 + (1 - kept) * 32)
    more = predict_cgpredict(tiled(40), over)
    assert more.comp_cycles == pytest.approx(r.comp_cycles + 0.5 * 40 * kept)
    plain = predict_cgpredict(dataclasses.replace(tiled(0), staging_code=StagingCounts(),
                                                  comp_insts=80), over)
    assert plain.comp_cycles == pytest.approx(0.5 * 16 * 2 * kept
                                              + max(0.5 * (80 + 3 - 16), 320)
                                              + (1 - kept) * 32)  # (22e) as above
    assert predict_cgpredict(tiled(0), tk1).comp_cycles == pytest.approx(76 + 33.5 + 320)
    # the printed reading sums issue and shared latency as before
    lat = predict_cgpredict(tiled(0), tk1, smem_cost="latency")
    assert lat.comp_cycles == pytest.approx(0.5 * 203 + 67 * 320)


def test_staging_hides_under_other_blocks_only_when_its_warps_leave_issue_slots(tk1) -> None:
    """eq. (22d) by hand: a block's staging warps issue at most STAGING_ISSUE_RATE (195
    instructions in 689 cycles) each; w of them on a scheduler leave 1 - w x rate of its
    slots to other blocks' shared loads. 8 warps a block (w = 2, 6 blocks resident): of 76
    staging cycles 76 x (1 - 390/689) = 32.98 hide, at most the shared pipe's slack over
    the rest of the issue (320 - 33.5, or 10 when the slack is 10); 32 warps (w = 8):
    nothing; one block resident or a dispatch that does not overlap the shared path: none."""
    from cgpredict.models.cgpredict_model import drift_cycles

    over = dataclasses.replace(tk1, smem_overlaps_issue=True,
                               staging_issue_rate=STAGING_ISSUE_RATE)
    p = _strip_profile(200)
    assert load_device("h100").staging_issue_rate == pytest.approx(195 / 689)
    assert drift_cycles(p, over, 76.0, 33.5, 320.0, 6) == pytest.approx(76 * (1 - 390 / 689))
    assert drift_cycles(p, over, 76.0, 310.0, 320.0, 6) == pytest.approx(10.0)
    big = dataclasses.replace(p, threads_per_block=1024)
    assert drift_cycles(big, over, 76.0, 33.5, 320.0, 2) == 0.0
    assert drift_cycles(p, over, 76.0, 33.5, 320.0, 1) == 0.0
    assert drift_cycles(p, tk1, 76.0, 33.5, 320.0, 6) == 0.0
    # a file without the rate: one instruction a cycle, so a staging block of 2 warps a
    # scheduler takes every slot and nothing hides (the TK1 file: no overlap at all anyway)
    assert tk1.staging_issue_rate is None
    bare = dataclasses.replace(over, staging_issue_rate=None)
    assert drift_cycles(p, bare, 76.0, 33.5, 320.0, 6) == 0.0
    one = dataclasses.replace(p, threads_per_block=128)  # 4 warps, 1 a scheduler: 1 - 1 x 1
    assert drift_cycles(one, bare, 76.0, 33.5, 320.0, 6) == 0.0


# ---- eq. (22m): a warp's own memory periods in flight ----------------------------------------


def test_own_overlap_is_the_threads_loads_bounded_by_the_sms_share() -> None:
    """min(loads in flight, MWP_(13) / N, MWP_peak_BW / N), at least 1: 8 warps, 8 loads a
    thread, an SM keeping 68 warp requests in flight (8.5 a warp) -> 8; 40 (5 a warp) -> 5;
    the bandwidth's 16 (2 a warp) -> 2; a plain port's 1 -> 1; never below 1."""
    from cgpredict.models.cgpredict_model import own_overlap

    assert own_overlap(8.0, 68.0, 563.0, 8) == 8.0
    assert own_overlap(8.0, 40.0, 563.0, 8) == 5.0
    assert own_overlap(8.0, 68.0, 16.0, 8) == 2.0
    assert own_overlap(1.0, 68.0, 563.0, 8) == 1.0
    assert own_overlap(8.0, 4.0, math.inf, 8) == 1.0
    assert own_overlap(8.0, math.inf, math.inf, 8) == 8.0


def test_too_few_warps_overlap_their_own_memory_periods(tk1) -> None:
    """eq. (22m): in (22) a warp's memory cycles are divided by its own_overlap: a thread
    keeping 4 loads in flight (an unrolled __restrict__ trip) on one warp of an SM with room
    for more saves 3/4 of them; 1 (a plain port's store order) is (22) unchanged; the SM's
    share (MWP_(13) / N) caps a thread that would keep more; eq. (16)/(17) never read it."""
    base = KernelProfile(
        name="onewarp", threads_per_block=32, blocks=1,
        coal=PatternCounts(insts=1000, l2_trans_per_warp=1, dram_trans_per_warp=1),
        comp_insts=2000,
    )  # fmt: skip
    r1 = predict_cgpredict(base, tk1)
    assert r1.case == "eq22" and r1.n_warps == 1
    k = min(4.0, r1.mwp_full, r1.mwp_peak_bw)
    assert k == 4.0  # one warp: the SM's whole MWP_(13) is its own
    r4 = predict_cgpredict(dataclasses.replace(base, loads_in_flight=4.0), tk1)
    assert r4.case == "eq22" and r4.mem_cycles == r1.mem_cycles
    assert r1.exec_cycles - r4.exec_cycles == pytest.approx(r1.mem_cycles * (1 - 1 / 4))
    assert (r4.own_overlap, r1.own_overlap) == (4.0, 1.0)
    from cgpredict.models import bound_text

    four = dataclasses.replace(base, loads_in_flight=4.0)
    assert "memory periods 4 in flight (22m)" in bound_text(predict(four, tk1, "cgpredict"))
    assert "(22m)" not in bound_text(predict(base, tk1, "cgpredict"))
    big = predict_cgpredict(dataclasses.replace(base, loads_in_flight=1e6), tk1)
    cap = min(r1.mwp_full, r1.mwp_peak_bw)
    assert r1.exec_cycles - big.exec_cycles == pytest.approx(r1.mem_cycles * (1 - 1 / cap))
    many = dataclasses.replace(base, blocks=64, threads_per_block=256)
    rm = predict_cgpredict(many, tk1)
    assert rm.case != "eq22"
    assert predict_cgpredict(dataclasses.replace(many, loads_in_flight=4.0),
                             tk1).exec_cycles == rm.exec_cycles


def test_overlapped_own_timeline_is_floored_by_the_sms_turns_and_capped_by_22() -> None:
    """(22m) by hand: N = MWP = CWP = 4, 10 memory instructions, mem 1000, comp 100: (22) is
    1000 + 100 + 100 / 10 x 3 = 1130; 10 periods in flight give 100 + 130 = 230, below the
    SM's issue of its 4 warps (4 x 100 = 400) or their load/store turns (4 x 150 = 600);
    one in flight is (22); a floor above (22) leaves (22)."""
    from cgpredict.models.cgpredict_model import _exec_cycles

    def t(overlap: float, lsu: float, comp: float = 100.0) -> float:
        case, cycles = _exec_cycles(True, 10, 4, 4, 4, 1000.0, comp, 50.0, 1.0, None,
                                    overlap, lsu)
        assert case == "eq22"
        return cycles

    assert t(1.0, 0.0) == pytest.approx(1130.0)
    assert t(10.0, 0.0) == pytest.approx(400.0)
    assert t(10.0, 150.0) == pytest.approx(600.0)
    assert t(2.0, 0.0) == pytest.approx(500.0 + 130.0)
    assert t(10.0, 400.0) == pytest.approx(1130.0)


def test_misses_in_step_floor_the_own_timeline_of_22() -> None:
    """(22l) by hand: the case of the test above, (22) 1130 cycles; 800 cycles of misses in
    step (lockstep_cycles) on top of the 4 warps' computing (4 x 100) give 1200, above (22);
    500 give 900, below it: (22) stands; none leaves (22) as it was."""
    from cgpredict.models.cgpredict_model import _exec_cycles

    def t(lockstep: float) -> float:
        case, cycles = _exec_cycles(True, 10, 4, 4, 4, 1000.0, 100.0, 50.0, 1.0, None,
                                    1.0, 0.0, 0.0, lockstep)
        assert case == "eq22"
        return cycles

    assert t(800.0) == pytest.approx(1200.0)
    assert t(500.0) == pytest.approx(1130.0)
    assert t(0.0) == pytest.approx(1130.0)


def test_lsu_cycles_charge_l1_line_cycles_per_global_line_and_issue_per_shared_way() -> None:
    """lsu_cycles by hand: 100 coalesced loads of 4 sectors (1 line each), 10 uncoalesced of
    32 sectors (a line per sector), 20 constant (1 line), hit or miss alike: 440 lines; 5
    shared accesses 2-way conflicted: 10 ways. At 1 cycle each: 450; at l1_line_cycles 1.5:
    1.5 x 440 + 10 = 670; smem_issue_cycles 2 doubles only the shared part: 440 + 20."""
    from cgpredict.models.cgpredict_model import lsu_cycles

    h100 = dataclasses.replace(load_device("h100"), l1_line_cycles=1.0, smem_issue_cycles=1.0,
                               l1_request_cycles=0.0)
    prof = KernelProfile(
        "k", 256, 1000,
        coal=PatternCounts(100, 4, 0, l1_hit_fraction=0.9),
        uncoal=PatternCounts(10, 32, 0),
        const=PatternCounts(20, 1, 0, l1_hit_fraction=1.0),
        shared=SharedMemoryCounts(insts_by_conflict=((2.0, 5.0),)),
        comp_insts=50,
    )  # fmt: skip
    assert lsu_cycles(prof, h100) == pytest.approx(450.0)
    assert lsu_cycles(prof, dataclasses.replace(h100, l1_line_cycles=1.5)) == pytest.approx(670.0)
    two = dataclasses.replace(h100, smem_issue_cycles=2.0)
    assert lsu_cycles(prof, two) == pytest.approx(460.0)
    # eq. (B2r): 130 global requests at 0.25 cycles add 32.5 to the 450 of the lines; the 5
    # shared accesses are not charged the request
    assert lsu_cycles(prof, dataclasses.replace(h100, l1_request_cycles=0.25)) == 482.5


def test_lsu_cycles_take_the_traced_l1_passes_where_known() -> None:
    """(22m) with (B2t): 10 uncoalesced loads of 32 sectors in 32 lines, each lane its own
    bank, traced at 8 passes a load (lines_per_warp; 32 lines / 4 a cycle), hold the path
    80 cycles, not 320 (a line per sector); 100 coalesced ones traced at 1: 100."""
    from cgpredict.models.cgpredict_model import lsu_cycles

    h100 = dataclasses.replace(load_device("h100"), l1_line_cycles=1.0, l1_request_cycles=0.0)
    prof = KernelProfile(
        "k", 256, 1000,
        coal=PatternCounts(100, 4, 0, l1_hit_fraction=0.9, lines_per_warp=1.0),
        uncoal=PatternCounts(10, 32, 0, lines_per_warp=8.0),
        comp_insts=50,
    )  # fmt: skip
    assert lsu_cycles(prof, h100) == pytest.approx(180.0)


def test_the_22m_floor_is_the_warps_l1_lines_at_l1_line_cycles() -> None:
    """(22m) on one warp of the H100 with 1000 coalesced loads (1000 lines) all in flight: its
    overlapped timeline is mem / own_overlap + comp; at l1_line_cycles 20 the SM's turns on
    the L1, 1 warp x 1000 lines x 20 = 20000 cycles, lie above it and set the time; at 1000
    they lie above (22) itself, mem + comp (MWP = N = 1), which caps them."""
    h100 = load_device("h100")
    base = KernelProfile(
        name="onewarp", threads_per_block=32, blocks=1,
        coal=PatternCounts(insts=1000, l2_trans_per_warp=4, dram_trans_per_warp=0),
        comp_insts=2000, loads_in_flight=1e6,
    )  # fmt: skip

    def run(x: float):
        return predict_cgpredict(base, dataclasses.replace(h100, l1_line_cycles=x,
                                                           l1_request_cycles=0.0))

    r1, r20, r1000 = run(1.0), run(20.0), run(1000.0)
    assert r1.case == r20.case == r1000.case == "eq22" and r1.n_warps == 1
    assert r1.own_overlap > 20  # overlapped: 1000 lines at 1 cycle do not bind
    assert r1.exec_cycles == pytest.approx(r1.mem_cycles / r1.own_overlap + r1.comp_cycles)
    assert r20.exec_cycles == pytest.approx(1000 * 20.0)
    assert r1000.exec_cycles == pytest.approx(r1000.mem_cycles + r1000.comp_cycles)


def test_l1_served_periods_stay_serial_when_a_warp_overlaps_the_rest() -> None:
    """(22m) on the H100: one warp, 1000 coalesced loads half served by the L1: memlat's mem
    cycles are 1000 x (0.5 x L1 latency + 0.5 x L2 latency); the L1 half (1000 x 0.5 x
    l1_latency_cycles) stays serial and only the rest is divided by the 4 loads in flight."""
    from cgpredict.models.cgpredict_model import l1_period_cycles

    h100 = load_device("h100")
    base = KernelProfile(
        name="onewarp", threads_per_block=32, blocks=1,
        coal=PatternCounts(insts=1000, l2_trans_per_warp=1, dram_trans_per_warp=0,
                           l1_hit_fraction=0.5),
        comp_insts=2000,
    )  # fmt: skip
    served = 1000 * 0.5 * h100.l1_latency_cycles
    assert l1_period_cycles(base, h100) == pytest.approx(served)
    r1 = predict_cgpredict(base, h100)
    assert r1.mem_cycles == pytest.approx(
        1000 * (0.5 * h100.l1_latency_cycles + 0.5 * h100.l2_latency_cycles))
    r4 = predict_cgpredict(dataclasses.replace(base, loads_in_flight=4.0), h100)
    assert r1.case == r4.case == "eq22" and r4.own_overlap == 4.0
    far = r1.mem_cycles - served
    assert r1.exec_cycles - r4.exec_cycles == pytest.approx(far * (1 - 1 / 4))


def _row_walk(hit: float, blocks: int = 1, threads: int = 256) -> KernelProfile:
    """DCT-1D's plain port on the H100 in miniature: each thread walks its own row of floats
    (1024 uncoalesced warp loads, 32 sectors each), the L1 serving 7 of every 8 (a 32-byte
    sector holds 8 floats), every miss read from DRAM; 2 loads in flight an iteration."""
    return KernelProfile(
        name="rowwalk", threads_per_block=threads, blocks=blocks,
        uncoal=PatternCounts(insts=1024, l2_trans_per_warp=32, dram_trans_per_warp=32,
                             l1_hit_fraction=hit),
        comp_insts=1686, mlp=2.0,
    )  # fmt: skip


def test_lockstep_misses_expose_their_latency_less_the_other_warps_period() -> None:
    """eq. (17l) by hand: 8 warps, 128 L1 misses a warp (1024 x 1/8), each waits the L2 plus
    DRAM latency (369.2 + 315.9 = 685.1 cycles, SPEC (2)) less one memory period's computing
    of the 7 other warps (29680 cycles / 2048 loads x 2 loads a period x 7 = 202.890625)."""
    from cgpredict.models.cgpredict_model import lockstep_cycles

    h100 = load_device("h100")
    p = _row_walk(0.875)
    assert lockstep_cycles(p, h100, 8, 29680.0, 2048.0) == pytest.approx(
        128 * (685.1 - 202.890625))
    # 64 warps: the others' period (63 x 28.98 = 1826) covers the 685.1 cycles
    assert lockstep_cycles(p, h100, 64, 29680.0, 2048.0) == 0.0
    # no L1 between the warps' loads and the L2: nothing runs in step, (17) as printed
    assert lockstep_cycles(_row_walk(0.0), h100, 8, 29680.0, 2048.0) == 0.0


def test_compute_bound_row_walk_pays_its_lockstep_misses() -> None:
    """(17l) in the model: a compute-bound row walk of 8 warps costs (17)'s N x comp plus its
    exposed misses (lockstep_cycles of its own comp and loads) instead of one mem_l; the
    result and its bound text name them."""
    from cgpredict.models import bound_text
    from cgpredict.models.cgpredict_model import lockstep_cycles

    h100 = load_device("h100")
    r = predict_cgpredict(_row_walk(0.875), h100)
    assert r.case == "eq17" and r.n_warps == 8
    exposed = lockstep_cycles(_row_walk(0.875), h100, 8, r.comp_cycles, r.no_mem_insts)
    assert exposed > r.mem_l > 0
    assert r.exec_cycles == pytest.approx(exposed + 8 * r.comp_cycles)
    assert r.lockstep_cycles == pytest.approx(exposed)
    assert "in step" in bound_text(predict(_row_walk(0.875), h100))
    assert predict_cgpredict(_row_walk(0.0), h100).lockstep_cycles == 0.0


def test_dram_share_of_a_partial_launch_by_hand():
    """Eq. (3a): a launch on 64 of the H100's 132 SMs sends an SM's DRAM transactions
    2.701 x 64 / 132 = 1.3096 cycles apart (the bandwidth is shared by the SMs that use it);
    a launch on every SM keeps the device as it is. Its MWP of eq. (13), a streaming warp's
    latency over its departure delay, grows in the same ratio."""
    from cgpredict.models.memlat import dram_share, memory_latency

    dev = load_device("h100")
    stream = KernelProfile("s", threads_per_block=1024, blocks=64,
                           coal=PatternCounts(4, 4.0, 4.0), comp_insts=8)
    geo = launch_geometry(stream, dev)
    assert geo.active_sms == 64
    part = dram_share(dev, geo.active_sms)
    assert part.dd_dram_cycles == pytest.approx(2.701 * 64 / 132)
    full = dataclasses.replace(stream, blocks=264)
    assert dram_share(dev, launch_geometry(full, dev).active_sms) is dev
    lat_all, lat_part = memory_latency(stream, dev), memory_latency(stream, part)
    # 4 DRAM sectors a warp instruction: departure 4 x dd_dram (3), latency 685.1 + 3 x dd_dram (2)
    assert lat_all.departure_delay == pytest.approx(4 * 2.701)
    assert lat_part.departure_delay == pytest.approx(4 * 2.701 * 64 / 132)
    assert lat_part.mem_l == pytest.approx(369.2 + 315.9 + 3 * 2.701 * 64 / 132)
