"""validation/ncu_1024.py: the 1024x1 rows' counters beside a smaller block's.

Oracles by hand from the committed spmv_csr profiles (h100-worst-2026-11-27/user-ncu): the
1024x1 launch's duration 176,128 ns, elapsed 286,206.38 cycles, 25,159,428 L2 read sectors,
an 8 KB carve-out; its elapsed cycles over 256x1's (265,748.91) and its L2 sectors over the
L2's throughput (27,747,243 / 26,060,084 sectors at 91.35 / 92.46 % of peak)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import ncu_1024  # noqa: E402
from ncu_csv import read_ncu  # noqa: E402


def _spmv(block: str) -> ncu_1024.Counters:
    path = ncu_1024.W1 / f"user-ncu/spmv_csr-{block}.csv"
    (launch,) = read_ncu(path)
    return ncu_1024.counters(launch)


def test_counters_of_one_launch():
    c = _spmv("1024x1")
    assert c.block == "1024x1" and c.kernel == "spmv"
    assert c.us == pytest.approx(176.128)
    assert c.elapsed == pytest.approx(286206.38)
    assert c.busy == pytest.approx(267120.71 / 286206.38)
    assert c.l2_read_m == pytest.approx(25.159428)
    assert c.carveout_kb == 8.0
    assert _spmv("256x1").carveout_kb == 32.0


def test_ratios_by_hand():
    elapsed, l2 = ncu_1024.ratios(_spmv("256x1"), _spmv("1024x1"))
    assert elapsed == pytest.approx(286206.38 / 265748.91)
    assert l2 == pytest.approx((27747243 / 26060084) / (91.35 / 92.46))
    # the L2 sets spmv_csr's time at both blocks: the two ratios agree within 0.2 %
    assert l2 == pytest.approx(elapsed, rel=2e-3)


def test_every_pair_is_committed_and_paired_by_launch():
    got = ncu_1024.rows()
    assert {n for n, _, _ in got} == {p[0] for p in ncu_1024.PAIRS}
    parts = [(a.kernel, b.kernel) for n, a, b in got if n == "particles"]
    assert parts == [("step_soa", "step_soa"), ("step_aos", "step_aos")]
    assert all(b.block == "1024x1" and a.block != "1024x1" for _, a, b in got)
