"""Predicted energy from a device file's [energy] table (cgpredict.energy)."""

from __future__ import annotations

import dataclasses

import pytest

from cgpredict.devices import EnergyTable, load_device
from cgpredict.energy import predict_energy
from cgpredict.profile import KernelProfile, PatternCounts, SharedMemoryCounts

# the GTX980 figures quoted in SPEC §6
TABLE = EnergyTable(fp32_op_nj=0.04, int32_op_nj=0.04, sfu_op_nj=0.16, fp64_op_nj=1.0,
                    dram_transaction_nj=62.9, l2_transaction_nj=15.5, smem_transaction_nj=4.6)


def _device(table=TABLE):
    return dataclasses.replace(load_device("tk1"), energy=table)


def _profile(**kw):
    base = {"name": "k", "threads_per_block": 256, "blocks": 4,  # 1024 threads, 32 warps
            "coal": PatternCounts(insts=2, l2_trans_per_warp=2, dram_trans_per_warp=1),
            "uncoal": PatternCounts(insts=1, l2_trans_per_warp=32, dram_trans_per_warp=8),
            "comp_insts": 10, "fp_insts": 4, "sfu_insts": 1}
    base.update(kw)
    return KernelProfile(**base)


def test_no_energy_table_gives_none():
    assert predict_energy(_profile(), load_device("tk1"), 1.0) is None


def test_hand_computed_energy():
    est = predict_energy(_profile(), _device(), time_ms=2.0)
    parts = dict(est.components)
    # per thread: 1 SFU, 4 - 1 = 3 FP32, 10 - 3 - 1 = 6 integer; 1024 threads
    assert parts["sfu"] == pytest.approx(1 * 1024 * 0.16e-6)
    assert parts["fp32"] == pytest.approx(3 * 1024 * 0.04e-6)
    assert parts["int32"] == pytest.approx(6 * 1024 * 0.04e-6)
    # DRAM: (1 * 2 + 8 * 1) per warp * 32 warps; L2: (2 * 2 + 32 * 1) * 32
    assert parts["dram"] == pytest.approx(10 * 32 * 62.9e-6)
    assert parts["l2"] == pytest.approx(36 * 32 * 15.5e-6)
    assert parts["smem"] == 0.0
    assert "static" not in parts and est.static_mj == 0.0
    assert est.total_mj == pytest.approx(sum(parts.values()))
    assert est.dynamic_mj == pytest.approx(est.total_mj)
    assert est.missing == ()


def test_shared_memory_and_launches():
    prof = _profile(shared=SharedMemoryCounts(insts_by_conflict=((1, 4), (16, 1))), launches=3)
    parts = dict(predict_energy(prof, _device(), 1.0).components)
    assert parts["smem"] == pytest.approx((4 + 16) * 32 * 3 * 4.6e-6)
    assert parts["sfu"] == pytest.approx(3 * 1024 * 0.16e-6)


def test_missing_figures_are_reported():
    est = predict_energy(_profile(), _device(EnergyTable(dram_transaction_nj=62.9)), 1.0)
    assert dict(est.components) == {"dram": pytest.approx(10 * 32 * 62.9e-6)}
    assert set(est.missing) == {"fp32", "int32", "sfu", "l2"}


def test_static_power_when_the_table_has_it():
    table = dataclasses.replace(TABLE, static_power_w=50.0)
    est = predict_energy(_profile(), _device(table), time_ms=2.0)
    assert est.static_mj == pytest.approx(100.0)  # 50 W * 2 ms
    without = predict_energy(_profile(), _device(), 2.0).total_mj
    assert est.total_mj == pytest.approx(100.0 + without)
