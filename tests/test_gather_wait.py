"""Eq. (GW): streamed sectors re-read across a warp's gather wait (memory/gather_wait.py).

The count is checked against a brute force of the sm_90 SASS's own load order (spmv_csr's
16-iteration pass, nvdisasm of nvcc 13.0 -O3 -arch=sm_90, validation/spmv_csr_l1.py): one
re-fetch a pass for each streamed load, the rule the model applies to the traced C order.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from cgpredict.memory.gather_wait import queue_turns_l1, refetch_misses, reread_position

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

# the loads of spmv_csr's unrolled pass in issue order and what waits on them (R14: &col[k0 + 2],
# R12: &val[k0 + 2]; an IMAD forms x's address from a col word; an FFMA adds val x x), as the
# validation script that first read them keeps them
from spmv_csr_l1 import SASS  # noqa: E402


def _sass_refetches(words_a_sector: int = 8) -> dict[str, int]:
    """Brute force of one warp's pass in the SASS's order: an instruction that uses a load
    issued since the last wait waits (a new epoch: everything issued before that load is
    back); a sector fetched in epoch f is complete and unprotected from epoch f + 2 on (a
    whole wait after the one its fill ends in), so a read there re-fetches it. Per array,
    the re-fetches of its streamed sectors."""
    epoch, issued, fetched = 0, {}, {}
    out = {"col": 0, "val": 0}
    for ins in (s.strip() for s in SASS.replace("\n", " ").split(";")):
        op, dst, *src = ins.split()
        if op != "LDG":
            if any(issued.get(r) == epoch for r in src):
                epoch += 1  # waits on a load of the current epoch
            issued.pop(dst, None)
            continue
        m = re.match(r"\[(R\d+)([+-]0x[0-9a-f]+)?\]", src[0])
        if m.group(1) in ("R14", "R12"):
            arr = "col" if m.group(1) == "R14" else "val"
            key = (arr, (int(m.group(2) or "0", 16) // 4 + 2) // words_a_sector)
            if key not in fetched or epoch >= fetched[key] + 2:
                out[arr] += key in fetched
                fetched[key] = epoch
        issued[dst] = epoch
    return out


def test_sass_order_refetches_one_sector_a_streamed_load_a_pass():
    """The SASS's pass re-fetches val's first sector (val[k5] after the wait on x[k0]) and
    col's second (col[k10]); the runs begun after the wait stay pending: 1 a load, (GW)."""
    assert _sass_refetches() == {"col": 1, "val": 1}


def test_refetch_misses_by_hand():
    """A warp's lane-per-row walk of 16 floats a row (two sectors, w = 8) in a pass of 16:
    the C-order LRU misses executions 0 and 8 and hits 14; (GW) makes execution 5 a miss
    too (13 hits), and leaves a coalesced walk (w = 1) and another load alone."""
    ordinal = np.tile(np.arange(16), 2)  # two rows a lane, one transaction an execution
    sid = np.zeros(32, np.int64)
    hits = (ordinal % 8) != 0
    loads = np.ones(32, bool)
    runs = np.array([8])
    out = refetch_misses(sid, ordinal, loads, hits, ((0, 16),), runs)
    assert reread_position(16) == 5
    assert int(out.sum()) == 2 * 13
    assert not out[5] and not out[21] and out[4] and out[6]
    assert (refetch_misses(sid, ordinal, loads, hits, ((0, 16),), np.array([1])) == hits).all()
    assert (refetch_misses(sid, ordinal, loads, hits, ((1, 16),), np.array([8, 8])) == hits).all()


def test_unrolled_by_four_refetches_twice_a_run():
    """A pass of 4 (nvcc's unroll alone): a run of 8 spans two passes, each with its wait,
    so it is re-fetched w / U = 2 times; not unrolled, every read but the first (w - 1)."""
    ordinal = np.arange(8)
    hits = ordinal != 0
    one = np.zeros(8, np.int64)
    got4 = refetch_misses(one, ordinal, np.ones(8, bool), hits, ((0, 4),), np.array([8]))
    got1 = refetch_misses(one, ordinal, np.ones(8, bool), hits, ((0, 1),), np.array([8]))
    assert reread_position(4) == 2 and int(hits.sum() - got4.sum()) == 2
    assert reread_position(1) == 0 and int(got1.sum()) == 0


def test_queue_turns_l1_by_hand():
    """spmv_csr 256x1: 63 other warps x 32 lanes x 16 gathers a pass = 32,256 sectors over
    the 7168 of a 224-KB L1; at 32x1 (32 warps) 15,872; one warp alone turns nothing over."""
    assert queue_turns_l1(64, 16, 1, 7168) and queue_turns_l1(32, 16, 1, 7168)
    assert not queue_turns_l1(1, 16, 1, 7168)
    assert not queue_turns_l1(8, 1, 1, 7168)  # 7 x 32 = 224
