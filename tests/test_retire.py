"""Block-granular retirement, eq. (R1): order-statistic oracles and the (22) wave it lengthens."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from cgpredict.devices import load_device
from cgpredict.models import predict_cgpredict
from cgpredict.models.retire import dram_waits_per_warp, expected_max_normal, retire_cycles
from cgpredict.profile import KernelProfile, PatternCounts


def _stencil(threads_per_block: int = 1024, blocks: int = 16384, comp_insts: int = 30,
             uncoal: PatternCounts | None = None) -> KernelProfile:
    """A 2DCONV-like thread: one coalesced load of 4 sectors that misses the L2, eight
    more served by the L1 or the L2, one coalesced store."""
    return KernelProfile(
        name="stencil",
        threads_per_block=threads_per_block,
        blocks=blocks,
        coal=PatternCounts(insts=9, l2_trans_per_warp=4, dram_trans_per_warp=4 / 9 * 9 / 8,
                           l1_hit_fraction=1 / 9),
        uncoal=uncoal or PatternCounts(),
        comp_insts=comp_insts,
    )


def test_expected_max_normal_closed_forms() -> None:
    # E[max of 2] = 1/sqrt(pi), E[max of 3] = 3/(2 sqrt(pi)) (exact); 1 sample: its mean 0
    assert expected_max_normal(1) == 0.0
    assert expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-6)
    assert expected_max_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi), rel=1e-6)


@pytest.mark.parametrize("n", [8, 32])
def test_expected_max_normal_against_monte_carlo(n: int) -> None:
    rng = np.random.default_rng(1)
    sample = rng.standard_normal((200_000, n)).max(axis=1).mean()
    assert expected_max_normal(n) == pytest.approx(sample, abs=0.01)
    assert expected_max_normal(n) == pytest.approx({8: 1.4236, 32: 2.0697}[n], abs=1e-4)


def test_dram_waits_count_full_warp_loads() -> None:
    h100 = load_device("h100")
    p = _stencil()
    # DRAM sectors a warp: 9 x (1 - 1/9) x 0.5 = 4 sectors of 32 B = one 128-B warp load
    assert dram_waits_per_warp(p, h100) == pytest.approx(1.0)


def test_retire_cycles_by_block_shape() -> None:
    h100 = load_device("h100")
    rt = h100.l2_latency_cycles + h100.dram_latency_cycles
    big, small = _stencil(1024), _stencil(256, blocks=65536)
    assert retire_cycles(big, h100) == pytest.approx(2.0697 * 0.47 * rt, rel=1e-4)
    assert retire_cycles(small, h100) == pytest.approx(1.4236 * 0.47 * rt, rel=1e-4)
    assert retire_cycles(_stencil(32, blocks=1 << 19), h100) == 0.0  # one warp a block
    assert retire_cycles(big, dataclasses.replace(h100, dram_latency_cv=0.0)) == 0.0


def test_brute_force_block_retirement() -> None:
    """Oracle: warps with normal timelines (mean m, sd s), a block retires with its slowest;
    the mean block lifetime is m + z(W) s, which is what (R1) adds to the mean."""
    rng = np.random.default_rng(7)
    m, s = 1800.0, 330.0
    for w in (8, 32):
        life = rng.normal(m, s, size=(100_000, w)).max(axis=1).mean()
        assert life == pytest.approx(m + expected_max_normal(w) * s, rel=2e-3)


def test_eq22_wave_lengthened_by_retirement() -> None:
    h100 = load_device("h100")
    p = _stencil()
    with_r = predict_cgpredict(p, h100)
    without = predict_cgpredict(p, dataclasses.replace(h100, dram_latency_cv=0.0))
    assert with_r.case == without.case == "eq22"
    assert with_r.retire_cycles == pytest.approx(retire_cycles(p, h100))
    assert with_r.batch > 1  # 16384 blocks, 2 an SM on 132 SMs: 62.06 waves
    assert with_r.exec_cycles - without.exec_cycles == pytest.approx(
        with_r.retire_cycles * (with_r.batch - 1), rel=1e-9)
    one_wave = _stencil(blocks=132)  # one block an SM: no slot handed over, no (R1)
    assert predict_cgpredict(one_wave, h100).exec_cycles == pytest.approx(
        predict_cgpredict(one_wave, dataclasses.replace(h100, dram_latency_cv=0.0)).exec_cycles)
    paper = predict_cgpredict(p, h100, batch_mode="paper")  # the printed (16)/(17): no (R1)
    assert paper.retire_cycles == 0.0


@pytest.mark.parametrize("case, profile", [
    ("eq22", _stencil()),
    ("eq17", _stencil(comp_insts=3000)),  # compute-bound: CWP 5 < MWP = N
    ("eq16", _stencil(uncoal=PatternCounts(insts=8, l2_trans_per_warp=32,
                                           dram_trans_per_warp=32))),  # MWP 12.7 < N
])
def test_retirement_charged_whatever_case(case: str, profile: KernelProfile) -> None:
    """Eq. (R1w): the handovers cost (R1) each in (16), (17) and (22) alike, so the case a
    kernel falls in does not decide whether its waves wait for their blocks' slowest warps
    (the padded transpose tile, (22), was charged them and the 32-way conflicted one, (17),
    was not: test_advisor_legality.py::test_transpose_gets_the_padded_tile_instead)."""
    h100 = load_device("h100")
    with_r = predict_cgpredict(profile, h100)
    without = predict_cgpredict(profile, dataclasses.replace(h100, dram_latency_cv=0.0))
    assert with_r.case == without.case == case
    assert with_r.retire_cycles > 0
    assert with_r.retire_cycles == pytest.approx(retire_cycles(profile, h100))
    assert with_r.exec_cycles - without.exec_cycles == pytest.approx(
        with_r.retire_cycles * (with_r.batch - 1), rel=1e-9)
