"""validation/softmax_passes.py: softmax's rows dealt to SMs by hand, and the committed ncu
counters it reads (three passes of 4-KB rows: 16,384 x 1024 x 3 / 8 sectors missed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import softmax_passes as sp  # noqa: E402


@pytest.mark.parametrize(("threads", "sms", "warps"),
                         [(32, 132, 512 / 132), (128, 128, 4.0), (256, 64, 8.0), (1024, 16, 32.0)])
def test_placement_by_hand(threads, sms, warps):
    """16,384 rows in blocks of ``threads``: 512, 128, 64 and 16 blocks, one an SM round robin
    while there are SMs left, the 512 warps spread over those in use."""
    got = sp.placement(threads)
    assert got[0] == sms and got[1] == pytest.approx(warps)


def test_read_requests_are_each_sector_once_a_pass():
    """At 4 warps an SM every row's 128 sectors miss the L1 once a pass: 16,384 x 128 x 3 =
    6.29 M L2 read requests, one sector each; the L1's data stage takes 32 wavefronts a warp
    instruction (4096 of them a warp: 3072 loads, 1024 stores), 4 warps on each of 128 SMs."""
    f = sp.figures("128x1")
    assert f["l2_read_req_M"] == pytest.approx(16384 * 128 * 3 / 1e6, rel=2e-3)
    assert f["wavefronts_sm"] == pytest.approx(4 * 4096 * 32, rel=2e-3)
    assert f["l1_share"] < 0.8
