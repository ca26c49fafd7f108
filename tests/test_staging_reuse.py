"""The staging analysis of regrouped warps read from the trace they came from
(memory/staging_reuse.py, eqs. (RS1), (RS2)): the same answers as staging the regrouped warps'
own events, or warps formed anew for that block shape, with none of their events copied."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.memory.shared import ArrayLayout, block_footprints, staged_accesses
from cgpredict.memory.staging import _distinct_sectors, fresh_sectors
from cgpredict.memory.staging_code import lane_shape
from cgpredict.memory.staging_reuse import event_source, footprints, reused
from cgpredict.warp_order import order_events, thread_events
from cgpredict.warp_regroup import MovedEvents, regroup_lazily
from cgpredict.warps import Origin, WarpTrace

GX, GY, PER = 96, 6, 4
TEXTS = {0: "A[i][k]", 1: "A[k][j]", 2: "B[i][k]", 3: "C[i][j]"}
HINTS = (("A", 32, 32), ("B", 32, 32))
LAYOUTS = {"A": ArrayLayout((128, 128), 4), "B": ArrayLayout((128, 128), 4)}


def _events():
    """Per pseudo-thread four accesses: A at random, A along the thread's row (unit steps
    between threads), B at random, C: addresses that differ from warp to warp."""
    rng = np.random.default_rng(11)
    tx = np.repeat(np.tile(np.arange(GX), GY), PER)
    ty = np.repeat(np.repeat(np.arange(GY), GX), PER)
    sid = np.tile(np.arange(PER), GX * GY).astype(np.uint16)
    rand = rng.integers(0, 128 * 128, len(tx))
    elem = np.select([sid == 0, sid == 1, sid == 2], [rand, ty * 128 + tx % 128, rand], rand)
    base = np.array([0, 0, 1 << 20, 1 << 21], np.int64)[sid]
    addr = (base + 4 * elem).astype(np.uint64)
    return tx, ty, sid, addr, thread_events(tx, ty, GX, GY)


def _wt(o, block, origin=None) -> WarpTrace:
    return WarpTrace(2, block, GX, GY, o.addr, o.lane, o.inst_start, o.inst_warp, o.inst_k,
                     o.inst_sid, o.n_threads, o.n_warps, o.divergent, 0, None, origin)


@pytest.fixture
def traces():
    """The warps of blocks 32x4, those regrouped (lazily) for 64x2, and those regrouped
    again from a copy of these for 128x3, and the warps formed anew for those two shapes."""
    tx, ty, sid, addr, threads = _events()
    first = _wt(order_events(tx, ty, sid, addr, GX, GY, Block(32, 4), threads), Block(32, 4))
    lazy, src = regroup_lazily(first.ordered, GX, GY, Block(32, 4), Block(64, 2))
    second = _wt(lazy, Block(64, 2), Origin(first, src))
    lazy, src = regroup_lazily(first.ordered, GX, GY, Block(32, 4), Block(64, 2))
    via = _wt(lazy, Block(64, 2), Origin(first, src))  # its events copied to regroup it
    lazy2, src2 = regroup_lazily(via.ordered, GX, GY, Block(64, 2), Block(128, 3))
    third = _wt(lazy2, Block(128, 3), Origin(via, src2))
    anew = {b: _wt(order_events(tx, ty, sid, addr, GX, GY, b, threads), b)
            for b in (Block(64, 2), Block(128, 3))}
    return first, second, third, anew


def test_event_source_composes_the_instruction_maps(traces):
    """A trace regrouped twice finds the first one, each of its instructions at the index
    whose events are its own (their addresses, lane by lane, equal)."""
    first, second, third, _ = traces
    assert event_source(first) == (first, None)
    src, idx = event_source(third)
    assert src is first
    b0, b1 = np.r_[first.inst_start, first.n_events], np.r_[third.inst_start, third.n_events]
    for i in range(0, third.n_insts, 97):
        j = idx[i]
        assert np.array_equal(third.addr[b1[i]:b1[i + 1]], first.addr[b0[j]:b0[j + 1]])


def test_a_trace_with_moved_addresses_is_its_own_source(traces):
    first = traces[0]
    moved = _wt(first.ordered, first.block, Origin(first, None, frozenset({0})))
    assert event_source(moved) == (moved, None)


@pytest.mark.parametrize("phase_bytes", [0, 32])
def test_staged_accesses_are_those_of_the_source(traces, phase_bytes):
    """(RS1): the bank conflicts, vector width, broadcast and phased passes of every staged
    access are the same on the source, the regrouped warps and the warps formed anew."""
    first, _, _, anew = traces
    want = staged_accesses(first, TEXTS, HINTS, LAYOUTS, 32, 4, None, phase_bytes)
    assert {a.sid for a in want} == {0, 1, 2}
    assert len({a.mean_degree for a in want}) > 1  # the accesses differ
    for wt in anew.values():
        assert staged_accesses(wt, TEXTS, HINTS, LAYOUTS, 32, 4, None, phase_bytes) == want


def test_lane_shapes_and_sectors_are_those_of_the_source(traces):
    first, _, _, anew = traces
    for wt in anew.values():
        for sid in range(PER):
            assert lane_shape(wt, [sid], 4) == lane_shape(first, [sid], 4)
        assert _distinct_sectors(wt, [0, 1, 2], 32) == _distinct_sectors(first, [0, 1, 2], 32)
    # the sectors by a set: sid 1's row walk, 96 threads of 4 bytes a row, 6 rows
    ev = first.addr[np.repeat(first.inst_sid == 1, np.diff(np.r_[first.inst_start,
                                                                 first.n_events]))]
    assert _distinct_sectors(first, [1], 32) == len(set((ev // 32).tolist())) == 6 * 12


def test_footprints_of_regrouped_warps_copy_no_event(traces):
    """(RS2): each block's footprint counted over the source's events with the new warp
    numbers equals block_footprints of the warps formed anew; the regrouped events stay
    uncopied, and the regrouped trace's fresh sectors read none either."""
    first, second, third, anew = traces
    sids, elem = {"A": [0, 1], "B": [2]}, {"A": 4, "B": 4}
    for wt in (second, third):
        assert isinstance(wt.__dict__["_addr_column"], MovedEvents)
        got = footprints(wt, sids, elem)
        assert got == block_footprints(anew[wt.block], sids, elem)
        assert fresh_sectors(wt, [0, 1, 2], 32) == fresh_sectors(anew[wt.block], [0, 1, 2], 32)
        assert isinstance(wt.__dict__["_addr_column"], MovedEvents)  # still not copied
        assert wt.__dict__["_addr_column"]._moved is None
    assert footprints(first, sids, elem) == block_footprints(first, sids, elem)


def test_reused_computes_once_per_source(traces):
    first, second, third, _ = traces
    calls = []

    def count(w):
        calls.append(w)
        return w.n_insts

    assert reused(second, ("probe", 1), count) == reused(third, ("probe", 1), count)
    assert calls == [first]  # found once, on the source, for both shapes
