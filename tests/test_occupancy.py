"""Occupancy: hand-computed cases of the CUDA occupancy calculator arithmetic."""

from __future__ import annotations

import pytest

from cgpredict.devices import load_device
from cgpredict.occupancy import occupancy


@pytest.fixture(scope="module")
def tk1():
    return load_device("tk1")


def test_full_occupancy_256_threads(tk1) -> None:
    o = occupancy(tk1, 256, 32, 0)
    # 8 warps/block: warps 64/8 = 8; regs 32*32 = 1024/warp -> 16 warps per sub-partition * 4
    assert (o.blocks_per_sm, o.warps_per_sm, o.active_threads) == (8, 64, 2048)
    assert o.limiting_factors == ("warps", "registers") and o.limiting_factor == "warps"
    assert o.occupancy == 1.0


def test_1024_thread_blocks(tk1) -> None:
    o = occupancy(tk1, 1024, 32, 0)
    assert (o.blocks_per_sm, o.warps_per_sm) == (2, 64)


def test_register_limited(tk1) -> None:
    o = occupancy(tk1, 128, 64, 0)
    # 64*32 = 2048 regs/warp -> 8 warps per sub-partition -> 32 warps -> 32/4 = 8 blocks
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiting_factor) == (8, 32, "registers")
    assert o.occupancy == 0.5


def test_register_rounding_to_alloc_unit(tk1) -> None:
    o = occupancy(tk1, 256, 37, 0)
    # 37*32 = 1184 -> 1280 regs/warp; 16384 // 1280 = 12 warps/sub-partition -> 48 -> 6 blocks
    assert (o.blocks_per_sm, o.limit_registers, o.limiting_factor) == (6, 6, "registers")


def test_shared_memory_limited(tk1) -> None:
    o = occupancy(tk1, 256, 32, 12000)
    # 12000 -> 12032 (256-byte units); 49152 // 12032 = 4
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiting_factor) == (4, 32, "shared_memory")


def test_partial_warp_and_block_limit(tk1) -> None:
    o = occupancy(tk1, 96, 16, 0)
    # 3 warps/block: warps 64 // 3 = 21, blocks 16 -> block-limited
    assert (o.blocks_per_sm, o.warps_per_sm, o.active_threads) == (16, 48, 1536)
    assert o.limiting_factor == "blocks" and o.warps_per_block == 3


def test_zero_registers_is_no_limit(tk1) -> None:
    assert occupancy(tk1, 256, 0, 0).limiting_factors == ("warps",)


def test_h100_reserved_shared_memory() -> None:
    h100 = load_device("h100")
    assert occupancy(h100, 128, 32, 0).blocks_per_sm == 16  # 4 warps/block, 64 warps
    o = occupancy(h100, 128, 32, 48 * 1024)
    # (49152 + 1024 reserved) = 50176 bytes; 233472 // 50176 = 4
    assert (o.blocks_per_sm, o.limiting_factor) == (4, "shared_memory")


@pytest.mark.parametrize(
    ("threads", "regs", "smem"),
    [(0, 32, 0), (-32, 32, 0), (1025, 32, 0), (256, 256, 0), (256, 32, 49153), (256, -1, 0)],
)
def test_illegal_blocks(tk1, threads, regs, smem) -> None:
    with pytest.raises(ValueError):
        occupancy(tk1, threads, regs, smem)


def test_block_that_fits_no_sm(tk1) -> None:
    # 255 regs * 32 -> 8192 regs/warp, 32 warps need 262144 registers > 65536
    with pytest.raises(ValueError, match="does not fit"):
        occupancy(tk1, 1024, 255, 0)


@pytest.mark.parametrize("threads,regs,blocks", [
    (1024, 32, 2), (1024, 40, 1), (1024, 45, 1), (256, 32, 8), (256, 40, 6), (256, 45, 5)])
def test_h100_register_limits_match_ncu(threads, regs, blocks) -> None:
    """The H100 tiled ports' register limits as Nsight Compute reports them
    (launch__occupancy_limit_registers, validation/measured/h100-session-2026-11-26/
    measured-ncu/gemm_tiled-*.csv and syr-user-rerun/measured-syr-ncu/syr*k_tiled-*.csv):
    32 registers (GEMM tiled) 2 and 8 blocks, 40 (SYRK tiled) 1 and 6, 45 (SYR2K tiled) 1
    and 5. By hand: 45 x 32 = 1440 registers a warp, 1536 in units of 256; 16384 a
    scheduler hold 10 warps, 40 an SM: one block of 32 warps, five of 8."""
    occ = occupancy(load_device("h100"), threads, regs, 9216)
    assert occ.blocks_per_sm == blocks
    if blocks < 64 * 32 // threads:
        assert occ.limiting_factor == "registers"
