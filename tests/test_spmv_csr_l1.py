"""validation/spmv_csr_l1.py: the sm_90 body it replays reads every val, col and x word of a
row once, and its L1 keeps by hand-countable rules (no room: nothing is kept but what a
pending miss merges; room for everything: 14 of a row's 16 val/col reads hit)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import spmv_csr_l1 as sim  # noqa: E402


def test_body_reads_each_word_of_a_row_once():
    """16 col, 16 val and 16 x loads, col and val words 0..15 each once (nvdisasm's body)."""
    body = sim.program()
    loads = [ins for ins in body if ins[0] == "ld"]
    assert len(loads) == 48
    for arr in (sim.VAL, sim.COL):
        assert sorted(ins[4] for ins in loads if ins[3] == arr) == list(range(16))
    assert sum(ins[3] == sim.X for ins in loads) == 16


def test_room_for_everything_keeps_14_of_16():
    """An L1 that never evicts: a row's two 32-B sectors miss once each, the other 14 reads
    hit (at the miss or at the reply alike), so val and col keep 14/16 = 0.875, the C-order
    figure of eq. (L1a)."""
    for at_fill in (False, True):
        r = sim.simulate(128, 1 << 24, at_fill=at_fill, blocks=4)
        assert abs(r[sim.VAL] - 14 / 16) < 1e-12
        assert abs(r[sim.COL] - 14 / 16) < 1e-12


def test_one_sector_of_room_keeps_only_merged_reads():
    """An L1 of one sector, allocated at the miss: a read hits only while its sector is the
    last one allocated, so the kept share falls far below 14/16."""
    r = sim.simulate(32, 1, blocks=2)
    assert r[sim.VAL] < 0.5 and r[sim.COL] < 0.5
