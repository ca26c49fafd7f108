"""Tests of eq. (PH): a thread's phases (loops one after another in its mapped loop's body)
add their slowest paths (models/bounds.py phase_cycles, phase_costs; kernel/launch_phases.py).

Oracles: PhaseCosts chosen by hand (the sum of each phase's slowest path on paper, against
the slowest of the whole-launch sums), a loop table built by hand (which loops are phases),
one phase's L1 and L2 costs counted from its instructions (a 32-row load is 32 lines, a
strided store 32 partial sectors, each merged: two sector times), and softmax traced small,
whose three passes' instructions are counted from its C."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.kernel.launch_phases import phase_blocks
from cgpredict.models import launch_bounds, launch_geometry
from cgpredict.models.bounds import phase_costs, phase_cycles
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.profile import KernelProfile, PatternCounts, PhaseCosts, StoreCounts

ROOT = Path(__file__).resolve().parents[1]


def test_phases_add_their_slowest_paths_by_hand():
    # 512 warps on 128 SMs (4 an SM), the H100's 132 SMs serve the stores: per SM x4,
    # chip-wide x 512/132. Phase 1 holds the L1 (100 cycles a warp), phase 2 the L2's store
    # path (300): 400 + 300 x 512/132, where the whole launch's L1 sum gives 600 and its
    # L2 sum 320 x 512/132 = 1241
    dev = load_device("h100")
    p = KernelProfile("hand", 32, 512, phases=(PhaseCosts(100.0, 10.0, 20.0),
                                               PhaseCosts(50.0, 0.0, 300.0)))
    chip = 512 / 132
    want = 400.0 + 300.0 * chip
    assert phase_cycles(p, dev, 512.0, 128) == pytest.approx(want)
    assert want > max(150 * 4, 320 * chip)
    # the busiest SM's share (B1) scales the per-SM paths only
    shared = dataclasses.replace(p, sm_share=1.5)
    assert phase_cycles(shared, dev, 512.0, 128) == pytest.approx(600.0 + 300.0 * chip)


def test_one_phase_is_no_bound():
    dev = load_device("h100")
    p = KernelProfile("hand", 32, 512, phases=(PhaseCosts(100.0, 10.0, 20.0),))
    assert phase_cycles(p, dev, 512.0, 128) == 0.0
    assert launch_bounds(p, dev, launch_geometry(p, dev)).phase_cycles == 0.0


def test_phase_blocks_are_the_mapped_loops_children():
    # loop 0 mapped; 1 and 2 its children (1 holding 3, whose blocks 1 lists); 4 in region 1
    lp = SimpleNamespace
    loops = (lp(id=0, region=0, parent=-1, blocks=(1, 2, 3, 4, 5, 6)),
             lp(id=1, region=0, parent=0, blocks=(2, 3, 4)),
             lp(id=3, region=0, parent=1, blocks=(3,)),
             lp(id=2, region=0, parent=0, blocks=(5,)),
             lp(id=4, region=1, parent=0, blocks=(9,)))
    assert phase_blocks(loops, 0, [0]) == (frozenset({2, 3, 4}), frozenset({5}))
    assert phase_blocks(loops[:3], 0, [0]) == ()  # one child loop: one phase
    assert phase_blocks(loops, 0, []) == ()  # no mapped loop


def test_phase_costs_counted_from_the_instructions():
    # a read pass: 1024 loads a thread, each a word of 32 rows (32 lines, 32 sectors), 7 of
    # 8 L1 hits; a write pass: 1024 such stores, 32 partial sectors each
    dev = load_device("h100")
    rows = PatternCounts(1024, 32.0, 32.0, l1_hit_fraction=7 / 8, lines_per_warp=32.0)
    read = phase_costs(KernelProfile("r", 32, 1, uncoal=rows), dev)
    assert read.l1_cycles == pytest.approx(1024 * (32 * dev.l1_line_cycles
                                                   + dev.l1_request_cycles))
    assert read.l2_sm_cycles == pytest.approx(1024 / 8 * 32 * dev.dd_l2_cycles)
    store = PatternCounts(1024, 32.0, 0.0, lines_per_warp=32.0)
    write = phase_costs(KernelProfile("w", 32, 1, uncoal=store,
                                      stores=StoreCounts(uncoal=store)), dev)
    assert write.l2_chip_cycles == pytest.approx(1024 * (32 + 32) * dev.store_cycles)
    assert write.l1_cycles == pytest.approx(max(
        1024 * (32 * dev.l1_store_cycles + dev.l1_request_cycles),
        1024 * 32 * dev.store_cycles))


def test_softmax_has_three_phases_and_its_straight_line_code():
    """softmax at R = 256, C = 64 (traced whole): per thread 64 loads in each pass (63 + 1
    in the first, its in[i][0] before the loop outside every phase) and 64 stores in the
    third; one thread a row, so every warp instruction reads a word of 32 rows."""
    opts = RunOptions(device="h100", block=Block(32, 1), work_sizes={"R": 256, "C": 64},
                      trace_sizes={"R": 256, "C": 64})
    rep = predict_source(ROOT / "examples" / "user" / "softmax.c", opts)
    (k,) = rep.kernels
    ph = k.profile.phases
    assert len(ph) == 4  # the three passes, then the code outside them (in[i][0])
    dev = load_device("h100")
    req = dev.l1_request_cycles
    assert ph[0].l1_cycles == pytest.approx(63 * (32 + req))
    assert ph[1].l1_cycles == pytest.approx(64 * (32 + req))
    # the write pass: 64 loads, 64 stores of 32 partial sectors (two sector times each)
    assert ph[2].l2_chip_cycles == pytest.approx(64 * 64 * dev.store_cycles)
    assert ph[3].l1_cycles == pytest.approx(32 + req)
    b = k.result.bounds
    assert b.phase_cycles >= max(b.l1_cycles, b.l2_cycles) * (1 - 1e-9)
