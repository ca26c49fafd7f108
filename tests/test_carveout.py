"""The L1 a launch sees (carveout.py, eq. (SC1)-(SC3)): the H100's 256 KB array less the
shared carve-out the driver picked, as Nsight Compute's launch__shared_mem_config_size
recorded it (validation/carveout_table.py lists every committed launch)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cgpredict import devices
from cgpredict.carveout import launch_carveout
from cgpredict.devices import DeviceError, load_device

H100 = load_device("h100")
KB = 1024


# (threads a block, registers a thread, shared bytes a block, ncu's carve-out in KB, a launch)
MEASURED = [
    (32, 16, 0, 32, "spmv_csr 32x1, h100-worst-2026-11-27/user-ncu"),
    (128, 32, 0, 32, "spmv_csr 128x1, h100-worst-2026-11-27/user-ncu"),
    (256, 32, 0, 32, "spmv_csr 256x1, h100-worst-2026-11-27/user-ncu"),
    (256, 60, 0, 32, "nbody_f64 256x1, h100-session-2026-11-26/measured-user-ncu"),
    (1024, 26, 0, 8, "spmv_ell 1024x1, h100-worst-2026-11-27/blind-ncu"),
    (1024, 16, 0, 8, "strided 1024x1, h100-worst-2026-11-27/blind-ncu"),
    (1024, 32, 8192, 32, "gemm_tiled 32x32, h100-session-2026-11-27b/counters/plain-ncu"),
    (1024, 40, 8192, 16, "syrk_tiled 32x32, h100-session-2026-11-27b/counters/plain-ncu"),
    (1024, 45, 16384, 32, "syr2k_tiled 32x32, h100-session-2026-11-27b/counters/plain-ncu"),
]


@pytest.mark.parametrize(("threads", "regs", "smem", "kb", "where"), MEASURED)
def test_h100_carveout_as_ncu_measured(threads: int, regs: int, smem: int, kb: int,
                                       where: str) -> None:
    c = launch_carveout(H100, threads, regs, smem)
    assert c.shared_bytes == kb * KB, where
    assert c.l1_bytes == 256 * KB - kb * KB


def test_no_shared_memory_hand_count() -> None:
    """(SC1): 1 KB a block for 4 x the blocks the 64-warp limit admits, at most 32: 256
    threads = 8 warps, 8 blocks by warps, 32 provisioned, 32 KB; 1024 threads, 2 and 8."""
    assert launch_carveout(H100, 256, 32).provisioned_blocks == 32
    assert launch_carveout(H100, 1024, 32).provisioned_blocks == 8
    assert launch_carveout(H100, 512, 32).shared_bytes == 16 * KB  # not measured


def test_tiled_32x8_known_miss() -> None:
    """(SC1s) sizes a shared-memory launch for its occupancy: 8 blocks of 5 KB + 1 KB = 48 KB
    -> 64 KB. ncu measured 100 KB for gemm_tiled 32x8 (the driver provisions more than the
    occupancy at 256 threads; docs/models.md): the rule is kept, the miss documented."""
    c = launch_carveout(H100, 256, 32, 5120)
    assert c.provisioned_blocks == 8 and c.shared_bytes == 64 * KB


def test_carveout_is_smallest_that_holds_and_largest_when_none() -> None:
    """(SC2) against a brute force over the capacities, and a block too big for all but
    the largest."""
    sizes = [k * KB for k in H100.shared_carveouts_kb]
    for smem in range(0, 200 * KB, 3 * KB + 512):
        c = launch_carveout(H100, 1024, 32, smem)
        need = c.provisioned_blocks * (-(-(smem + 1024) // 128) * 128)
        fits = [s for s in sizes if s >= need]
        assert c.shared_bytes == (min(fits) if fits else sizes[-1])


def test_device_without_carveouts_keeps_its_l1() -> None:
    tk1 = load_device("tk1")
    assert launch_carveout(tk1, 256, 32).l1_bytes == tk1.l1_bytes
    plain = dataclasses.replace(H100, shared_carveouts_kb=())
    assert launch_carveout(plain, 256, 32).l1_bytes == 256 * KB


def test_factor_zero_uses_the_occupancy() -> None:
    """carveout_blocks_factor 0: a launch without shared memory is sized for its occupancy's
    blocks too (8 at 256 threads and 32 registers: 8 KB)."""
    d = dataclasses.replace(H100, carveout_blocks_factor=0)
    assert launch_carveout(d, 256, 32).shared_bytes == 8 * KB


def test_carveouts_must_ascend_and_leave_an_l1(tmp_path: Path) -> None:
    text = (devices.bundled_dir() / "h100.toml").read_text()
    line = "shared_carveouts_kb = [0, 8, 16, 32, 64, 100, 132, 164, 196, 228]"
    assert line in text
    for bad in ("[8, 0]", "[0, 256]", "[0, 8.5]"):
        path = tmp_path / "bad.toml"
        path.write_text(text.replace(line, f"shared_carveouts_kb = {bad}"))
        with pytest.raises(DeviceError, match="shared_carveouts_kb"):
            load_device(str(path))
