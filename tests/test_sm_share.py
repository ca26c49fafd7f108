"""Tests of cgpredict.sm_share: the busiest SM's share of a launch of few unequal blocks.

Oracles: a triangular loop's work counted by hand (thread t of a traced 128 making 128 - t
events: CORR's symmat kernel), the busiest block of four; the same launch over more blocks
than SMs (1: an SM that finishes takes the next block); and the throughput bounds scaled by
the share while the DRAM bound, the critical path and the L2's store side are not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cgpredict import sm_share
from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.models import launch_bounds, launch_geometry
from cgpredict.profile import KernelProfile, PatternCounts, StoreCounts
from cgpredict.sm_share import block_share, busiest_sm_share, events_per_thread
from cgpredict.warp_order import order_events, thread_events
from cgpredict.warps import WarpTrace

TRIANGLE = np.arange(128, 0, -1)  # traced thread t: 128 - t events


def test_triangle_over_four_blocks_by_hand():
    """1024 work threads in blocks of 256: block b stands for traced threads 32b..32b+31,
    whose mean events are 128 - (32b + 15.5): 112.5, 80.5, 48.5, 16.5 (mean 64.5)."""
    got = block_share(TRIANGLE, (128, 1), (1024, 1), Block(256))
    assert got == pytest.approx(112.5 / 64.5)


def test_a_partial_last_block_counts_its_threads_inside_the_grid():
    """1023 threads (corr_corr at M=1024): the last block holds 255 of its 256 threads; the
    busiest block over a whole block of the mean thread's work (eq. (B1w))."""
    got = block_share(TRIANGLE, (128, 1), (1023, 1), Block(256))
    work = np.array([112.5 * 256, 80.5 * 256, 48.5 * 256, 16.5 * 255])
    assert got == pytest.approx(work.max() / (work.sum() / 1023 * 256))


@pytest.mark.parametrize("threads", [1025, 1030, 1100, 1536, 2047, 2048])
def test_equal_threads_with_a_short_last_block_share_one(threads):
    """Eq. (B1w): wavefront's anti-diagonal of 1025-2048 equal cells in blocks of 1024 puts
    one block on each of two SMs; the bounds count both blocks whole (64 warps over 2 SMs),
    so the busiest SM's 32 warps are a share of 1 whatever the second block holds (the
    mean block's work gave 2048 / threads: 1.99 at 1030)."""
    assert block_share(np.full(128, 5), (128, 1), (threads, 1), Block(1024)) == \
        pytest.approx(1.0)


def test_equal_threads_share_one():
    assert block_share(np.full(128, 7), (128, 1), (4096, 1), Block(256)) == pytest.approx(1.0)


def test_two_dimensional_blocks():
    """A 4x4 traced grid whose row y makes 4 - y events each; an 8x8 work grid in 4x4 blocks:
    the top blocks stand for rows 0-1 (mean 3.5), the bottom ones rows 2-3 (mean 1.5)."""
    ev = np.repeat(np.arange(4, 0, -1), 4)  # index y * 4 + x
    assert block_share(ev, (4, 4), (8, 8), Block(4, 4)) == pytest.approx(3.5 / 2.5)


def _triangle_trace() -> WarpTrace:
    """The TRIANGLE events in a traced 1-D grid of 128 threads, blocks of 128."""
    tx = np.repeat(np.arange(128), TRIANGLE)
    ty = np.zeros_like(tx)
    sid = np.zeros(len(tx), np.uint16)
    addr = (tx * 4096 + 4 * np.concatenate([np.arange(n) for n in TRIANGLE])).astype(np.uint64)
    o = order_events(tx, ty, sid, addr, 128, 1, Block(128), thread_events(tx, ty, 128, 1))
    return WarpTrace(1, Block(128), 128, 1, o.addr, o.lane, o.inst_start, o.inst_warp,
                     o.inst_k, o.inst_sid, o.n_threads, o.n_warps, o.divergent, 0, None)


def test_from_a_trace_and_only_for_one_block_an_sm():
    wt = _triangle_trace()
    assert busiest_sm_share(wt, (1024, 1), Block(256), 132) == pytest.approx(112.5 / 64.5)
    # 64 blocks of 256 on 8 SMs: more blocks than SMs, the SMs even out
    assert busiest_sm_share(wt, (16384, 1), Block(256), 8) == 1.0


def test_events_per_thread_found_once_for_every_work_grid(monkeypatch):
    """The traced threads' events are TRIANGLE (counted by hand), found from the warps once
    per trace: the launches of a host loop ask for many work grids (GRAMSCHMIDT's gs_k3),
    each answer the same as with them found afresh."""
    wt = _triangle_trace()
    assert events_per_thread(wt).tolist() == TRIANGLE.tolist()
    grids = [(1024.0 - 8 * i, 1.0) for i in range(6)]
    fresh = [busiest_sm_share(_triangle_trace(), g, Block(256), 132) for g in grids]
    calls = []
    real = sm_share.events_per_thread
    monkeypatch.setattr(sm_share, "events_per_thread", lambda w: calls.append(1) or real(w))
    assert [busiest_sm_share(wt, g, Block(256), 132) for g in grids] == fresh
    assert len(calls) == 1


def test_share_scales_the_throughput_bounds_only():
    dev = load_device("h100")
    p = KernelProfile("tri", threads_per_block=256, blocks=4,
                      coal=PatternCounts(2, 4.0, 0.0), uncoal=PatternCounts(1, 32.0, 0.0),
                      comp_insts=10, stores=StoreCounts(uncoal=PatternCounts(1, 32.0, 0.0)),
                      chain_cycles=500.0)
    geo = launch_geometry(p, dev)
    even = launch_bounds(p, dev, geo)
    busy = launch_bounds(dataclasses.replace(p, sm_share=1.75), dev, geo)
    assert busy.l1_cycles == pytest.approx(1.75 * even.l1_cycles)
    assert busy.issue_cycles == pytest.approx(1.75 * even.issue_cycles)
    assert busy.pipe_cycles == pytest.approx(1.75 * even.pipe_cycles)
    assert busy.dram_cycles == even.dram_cycles and busy.chain_cycles == even.chain_cycles


def test_the_l2_store_side_is_the_chips():
    """4 blocks of 8 warps, each warp 10 full coalesced stores (4 sectors): 32 x 40 store
    sectors at dd_store_cycles over the H100's 132 SMs, not the 4 the launch uses, and
    the busiest SM's share does not change it (the L2's slices serve every SM)."""
    dev = load_device("h100")
    p = KernelProfile("st", threads_per_block=256, blocks=4, coal=PatternCounts(10, 4.0, 0.0),
                      stores=StoreCounts(coal=PatternCounts(10, 4.0, 0.0)))
    geo = launch_geometry(p, dev)
    want = 32 * 40 * dev.store_cycles / 132
    assert launch_bounds(p, dev, geo).l2_cycles == pytest.approx(want)
    busy = launch_bounds(dataclasses.replace(p, sm_share=2.0), dev, geo)
    assert busy.l2_cycles == pytest.approx(want)
