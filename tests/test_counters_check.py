"""validation/counters_check.py: the ncu reader on a committed CSV, the model's figures of a
small kernel against counts derived by hand, and the table's flags."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import counters_check as cc  # noqa: E402

SAXPY_CSV = cc.COUNTERS / "user-ncu" / "saxpy-256x1.csv"
GEMVER_CSV = cc.COUNTERS / "plain-ncu" / "gemver-256x1.csv"


def test_read_ncu_saxpy_counts_by_hand():
    """saxpy at N = 2^24, 256x1: 2^19 warps, two loads and one store each, 4 sectors apiece
    (32 lanes x 4 B, aligned), read once: no L1 hit; every load sector read from the L2."""
    launches = cc.read_ncu(SAXPY_CSV)
    assert [name for name, _ in launches] == ["saxpy"]
    f = cc.ncu_figures(launches[0][1])
    warps = 2**24 // 32
    assert f.ld_requests == 2 * warps
    assert f.st_requests == warps
    assert f.l1_sectors == 8 * warps
    assert f.l1_hit_pct == 0.0
    assert f.l2_read_sectors == 8 * warps
    assert f.l2_write_sectors == 4 * warps
    assert f.registers == 16
    assert f.dram_read_bytes == pytest.approx(2 * 4 * 2**24, rel=0.01)  # x and y, cold
    assert 0 < f.active_warps <= cc.MAX_WARPS_PER_SM


def test_read_ncu_keeps_launch_order_and_thousands():
    """gemver's three launches, named without their signature, '1,234' read as 1234."""
    launches = cc.read_ncu(GEMVER_CSV)
    assert [n for n, _ in launches] == ["gemver_k1", "gemver_k2", "gemver_k3"]
    assert launches[0][1]["smsp__inst_executed.sum"] == 4_587_520
    assert launches[1][1]["launch__grid_size"] == 8


@pytest.fixture(scope="module")
def saxpy_report():
    import cgpredict

    return cgpredict.predict(ROOT / "examples" / "user" / "saxpy.c", block="256x1",
                             device="h100", sizes={"N": 8192}, trace_sizes={"N": 8192})


def test_model_figures_saxpy_by_hand(saxpy_report):
    """N = 8192: 256 warps; per warp 2 load and 1 store instructions, 4 sectors each; the
    loads' 8 sectors reach the L2 (nothing is read twice), x and y are read from DRAM once
    (2 x 8192 x 4 B) and y is written back once (8192 x 4 B)."""
    k = saxpy_report.kernels[0]
    f = cc.model_figures(k, 32)
    warps = 8192 // 32
    assert f.ld_requests == pytest.approx(2 * warps)
    assert f.st_requests == pytest.approx(warps)
    assert f.l1_sectors == pytest.approx(8 * warps)
    assert f.l1_hit_pct == pytest.approx(0.0)
    assert f.l2_read_sectors == pytest.approx(8 * warps)
    assert f.l2_write_sectors == pytest.approx(4 * warps)
    assert f.dram_read_bytes == pytest.approx(2 * 8192 * 4)
    assert f.dram_write_bytes == pytest.approx(8192 * 4)
    assert f.registers == k.profile.registers_per_thread
    # no shared memory: the issued count is the issue bound's (which adds wavefronts)
    assert f.warp_insts + f.shared_wavefronts == pytest.approx(k.result.bounds.warp_insts)
    assert f.shared_wavefronts == 0.0


def test_launch_checks_match_kernel_names(saxpy_report):
    """The small prediction against the committed CSV: one check, the saxpy launch, off by
    the size ratio (2^24 / 8192) in every count."""
    checks = cc.launch_checks("user", "saxpy", "256x1", saxpy_report, SAXPY_CSV, 32)
    assert [c.kernel for c in checks] == ["saxpy"]
    c = checks[0]
    assert cc.ratio(c.model.st_requests, c.ncu.st_requests) == pytest.approx(8192 / 2**24)
    text = cc.to_markdown(checks)
    assert "| st_requests | 0/1 | user/saxpy 256x1 saxpy" in text
    assert "| l1_hit_pct | 1/1 |" in text
    assert cc.compared(40.0, 55.0, "l1_hit_pct") == -15.0 and cc.off(40.0, 55.0, "l1_hit_pct")
    assert cc.from_json(cc.to_json(checks)) == checks


def test_ratio_and_off():
    assert cc.ratio(0, 0) == 1.0
    assert math.isinf(cc.ratio(1, 0))
    assert cc.ratio(3, 2) == 1.5
    assert not cc.off(1.09, 1.0)
    assert cc.off(1.11, 1.0)
    assert cc.off(0.89, 1.0)
    assert not cc.off(5.0, math.nan)
    assert not cc.off(0.0, 9.0, "l1_hit_pct")


def test_pair_launches_by_name_base_name_and_order():
    """Same name; the port's ``_kernel`` suffix; a templated kernel launched for several C
    kernels, in launch order; a kernel launched twice keeps its first launch."""
    a, b, c = {"x": 1.0}, {"x": 2.0}, {"x": 3.0}
    assert cc.pair_launches(["k1", "k2"], [("k1", a), ("k2", b), ("k1", c)]) == {
        "k1": a, "k2": b}
    assert cc.pair_launches(["gemm"], [("gemm_kernel", a)]) == {"gemm": a}
    tiled = [("void mm_tiled<8, 8, 8>", a), ("void mm_tiled<8, 8, 8>", b)]
    assert cc.pair_launches(["mm2_k1_tiled", "mm2_k2_tiled"], tiled) == {
        "mm2_k1_tiled": a, "mm2_k2_tiled": b}
    assert cc.pair_launches(["conv2d"], [("conv2d_kernel", a)]) == {"conv2d": a}
    assert cc.pair_launches(["p", "q"], [("r", a), ("s", b)]) == {}


def test_worst_rows_lists_the_flagged_quantities():
    """A row at +12 % with one launch whose L2 writes are twice ncu's; a row at +2 % left
    out."""
    ncu = cc.LaunchFigures(*([100.0] * len(cc.QUANTITIES)))
    model = cc.dataclasses.replace(ncu, l2_write_sectors=200.0)
    checks = [cc.LaunchCheck("user", "p", "256x1", "k", model, ncu, 12.0),
              cc.LaunchCheck("user", "q", "256x1", "k", ncu, ncu, 2.0)]
    lines = cc.worst_rows(checks)
    assert lines[2:] == ["| user | p | 256x1 | +12.0 | k l2_write_sectors 2 |"]


GEMM_TILED = {blk: cc.COUNTERS / "plain-ncu" / f"gemm_tiled-{blk}.csv" for blk in ("32x32", "32x8")}


@pytest.mark.parametrize("block, staged_a, staged_b", [("32x32", 1, 1), ("32x8", 1, 4)])
def test_gemm_tiled_ncu_counts_every_lds_and_staging_ldg(block, staged_a, staged_b):
    """GEMM tiled, N = 1024, 32-wide k strips: 32 strips a thread. A strip issues, per warp,
    32 k steps of ``sA[ty][k]`` (ptxas packs 4 of them into one LDS.128: 8) and
    ``sB[k][tx]`` (32): 40 LDS; a staging LDG and an STS per element a thread copies (A's
    tile by x 32 over the block's threads, B's 32 x bx); plus C's one load and one store.
    What ``smsp__inst_executed`` holds beyond the model's ``total_insts``."""
    m = cc.read_ncu(GEMM_TILED[block])[0][1]
    warps = m["launch__grid_size"] * m["launch__block_size"] / 32
    strips = 1024 // 32
    per_warp = {k: m[f"smsp__inst_executed_op_{k}.sum"] / warps
                for k in ("shared_ld", "shared_st", "global_ld", "global_st")}
    assert per_warp["shared_ld"] == strips * (32 // 4 + 32)
    assert per_warp["shared_st"] == strips * (staged_a + staged_b)
    assert per_warp["global_ld"] == strips * (staged_a + staged_b) + 1
    assert per_warp["global_st"] == 1


def test_issued_insts_adds_shared_loads_once_and_staging_loads():
    """A thread with 100 memory+compute instructions, 40 shared loads of which 8 are 2-way
    conflicted (48 wavefronts) and 5 staging loads issues 145 warp instructions: ncu counts
    a conflicted LDS once (its wavefronts are the L1's, not the scheduler's)."""
    from cgpredict.profile import KernelProfile, SharedMemoryCounts

    shared = SharedMemoryCounts(load_insts=5.0, insts_by_conflict=((1.0, 32.0), (2.0, 8.0)))
    prof = KernelProfile("k", 256, 1, comp_insts=100.0, shared=shared)
    assert shared.transactions == 48.0
    assert cc.issued_insts(prof) == 145.0
