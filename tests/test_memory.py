"""Tests of cgpredict.memory.transactions (SPEC §2.3): classification of warp memory
instructions, L2 transactions per warp instruction, GPU issue order, cache hits (exact and
scaled to the work size), and the whole analysis on traced GEMM and SYRK.

Hand oracles: a warp of 32 lanes reading 4-byte words with stride s bytes touches
ceil((31 s + 4) / 64) 64-byte lines when aligned (stride 4: 2 lines, misaligned by 4: 3,
stride 64: 32); stride 0 is constant, stride <= the access size coalesced, else uncoalesced."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from fake_traces import make_wt, strided

from cgpredict.block import Block
from cgpredict.frontend.tracer import TraceOptions, trace_program
from cgpredict.memory.issue import issue_order, issued_transactions, transactions
from cgpredict.memory.lru import CacheConfig
from cgpredict.memory.reuse import CacheScale
from cgpredict.memory.transactions import (
    COAL,
    CONST,
    UNCOAL,
    L1Config,
    analyze_memory,
    classify,
)
from cgpredict.warps import EVENT_DTYPE, WarpTrace, form_warps

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


FOUR = np.array([4, 4, 4, 8])  # access bytes per sid; sid 3 is a double


# --------------------------------------------------------------------------- classify


@pytest.mark.parametrize("stride, sid, expected", [
    (0, 0, CONST), (4, 0, COAL), (-4, 0, COAL), (8, 0, UNCOAL), (64, 0, UNCOAL),
    (256, 0, UNCOAL), (8, 3, COAL), (16, 3, UNCOAL), (0, 3, CONST)])
def test_classify_by_stride(stride, sid, expected):
    wt = make_wt([(0, 0, sid, strided(4096, stride))])
    assert list(classify(wt, FOUR)) == [expected]


def test_classify_max_stride_and_partial_warp():
    mixed = [4096] * 16 + strided(4096, 4, 16)  # half the lanes broadcast, then stride 4
    gap = strided(4096, 4, 16) + strided(4096 + 4 * 64, 4, 16)  # one jump of 196 bytes
    wt = make_wt([(0, 0, 0, mixed), (0, 1, 0, gap), (1, 0, 0, strided(0, 4, 7)),
                  (1, 1, 0, [128] * 5)])
    assert list(classify(wt, FOUR)) == [COAL, UNCOAL, COAL, CONST]


def _classify_reference(wt, access_bytes):
    """The vectorised numpy statement of SPEC §2.3's rule (classify's former body): the oracle
    for the one-pass numba kernel."""
    ev = wt.events
    n = len(ev)
    addr = ev["addr"].astype(np.int64)
    lane = ev["lane"].astype(np.int64)
    wpb = max(-(-wt.block.threads // 32), 1)
    row = ((ev["warp"].astype(np.int64) % wpb) * 32 + lane) // max(wt.block.x, 1)
    first = np.zeros(n, bool)
    first[wt.inst_start] = True
    diff = np.abs(np.diff(addr, prepend=addr[0]))
    gap = np.maximum(np.diff(lane, prepend=lane[0]), 1)
    neighbours = ~first & (row == np.concatenate(([-1], row[:-1])))
    stride = np.maximum.reduceat(np.where(neighbours, diff // gap, 0), wt.inst_start)
    has_row = np.add.reduceat(neighbours.astype(np.int64), wt.inst_start) > 0
    across = np.maximum.reduceat(np.where(first, 0, diff), wt.inst_start)
    stride = np.where(has_row, stride, across)
    size = access_bytes[ev["sid"][wt.inst_start]]
    return np.where(stride == 0, CONST, np.where(stride <= size, COAL, UNCOAL)).astype(np.int8)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("block", [Block(32, 8), Block(16, 16), Block(8, 4), Block(1, 64),
                                   Block(256, 1)])
def test_classify_matches_the_reference_on_random_warps(seed, block):
    rng = np.random.default_rng(seed)
    rows = []
    for w in range(6):
        for k in range(8):
            lanes = int(rng.integers(1, 33))
            kind = rng.integers(0, 4)
            base = int(rng.integers(0, 1 << 20)) * 4
            if kind == 0:
                addrs = [base] * lanes
            elif kind == 1:
                addrs = strided(base, int(rng.choice([4, 8, 12, 64, 4096])), lanes)
            elif kind == 2:
                addrs = [int(a) for a in rng.integers(0, 1 << 16, lanes) * 4]
            else:
                addrs = strided(base, 4, lanes // 2) + strided(base + 4096, 4, lanes - lanes // 2)
            rows.append((w, k, int(rng.integers(0, 4)), addrs))
    wt = dataclasses.replace(make_wt(rows), block=block)
    # masked lanes: drop a random subset of events, keeping each instruction's first
    keep = rng.random(len(wt.events)) < 0.8
    keep[wt.inst_start] = True
    ev = wt.events[keep]
    starts = np.flatnonzero(np.isin(np.flatnonzero(keep), wt.inst_start))
    wt = WarpTrace.from_records(wt.grid_dims, wt.block, wt.grid_x, wt.grid_y, ev, starts,
                                wt.n_threads, wt.n_warps)
    assert np.array_equal(classify(wt, FOUR), _classify_reference(wt, FOUR))


def test_classify_compares_neighbours_in_a_block_row():
    """Block 16x16 over a 64-float-wide row-major array: lanes 0-15 read row y, lanes 16-31
    row y+1 (256 bytes on). Neighbours along x stride 4 bytes: coalesced (SPEC §2.3), though
    lanes 15 and 16 are 196 bytes apart. A column access A[j][i] strides a row per x step."""
    row = strided(0, 4, 16) + strided(256, 4, 16)
    col = strided(0, 256, 16) + strided(4, 256, 16)
    wt = dataclasses.replace(make_wt([(0, 0, 0, row), (0, 1, 0, col)]), block=Block(16, 16))
    assert list(classify(wt, FOUR)) == [COAL, UNCOAL]
    # a block one thread wide has no neighbours in a row: consecutive lanes are compared
    wt1 = dataclasses.replace(make_wt([(0, 0, 0, strided(0, 256)), (0, 1, 0, [64] * 32)]),
                              block=Block(1, 32))
    assert list(classify(wt1, FOUR)) == [UNCOAL, CONST]


def test_classify_masked_lanes_stride_per_lane():
    """A masked (divergent) instruction of lanes 0, 3, 6, ... reading x[i]: 12 bytes between
    active lanes is 4 bytes per thread, a coalesced access."""
    rows = [(0, 0, lane, 0, lane, 4 * lane) for lane in range(0, 32, 3)]
    ev = np.array(rows, EVENT_DTYPE)
    wt = WarpTrace.from_records(1, Block(32), 32, 1, ev, np.array([0]), 11, 1, 1)
    assert list(classify(wt, FOUR)) == [COAL]


def test_classify_empty():
    wt = make_wt([(0, 0, 0, [0])])
    empty = WarpTrace.from_records(1, Block(32), 0, 1, wt.events[:0], np.zeros(0, np.int64), 0, 0)
    assert len(classify(empty, FOUR)) == 0


# --------------------------------------------------------------------------- transactions


@pytest.mark.parametrize("base, stride, lines", [
    (0, 4, 2), (4, 4, 3), (60, 4, 3), (0, 64, 32), (0, 0, 1), (0, 8, 4), (0, 128, 32),
    (0, 2, 1)])
def test_transactions_per_warp_instruction(base, stride, lines):
    wt = make_wt([(0, 0, 0, strided(1 << 20 | base, stride))])
    line, inst = transactions(wt, 64)
    assert len(line) == lines and set(inst) == {0}
    expect = sorted({(1 << 20 | base + stride * t) // 64 for t in range(32)})
    assert list(line) == expect


def test_transactions_line_size_and_instruction_index():
    wt = make_wt([(0, 0, 0, strided(0, 4)), (0, 1, 0, strided(0, 64)), (1, 0, 0, [0] * 32)])
    line, inst = transactions(wt, 64)
    assert np.bincount(inst).tolist() == [2, 32, 1]
    line128, inst128 = transactions(wt, 128)
    assert np.bincount(inst128).tolist() == [1, 16, 1]  # derived for 128-byte lines


# --------------------------------------------------------------------------- issue order


def test_issue_order_batch_then_k_then_warp():
    insts = [(w, k, 0, [1000 * w + 100 * k]) for w in range(4) for k in range(2)]
    wt = make_wt(insts)
    _, inst = transactions(wt, 64)
    order = issue_order(wt, inst, warps_per_batch=2)
    ev = wt.events[wt.inst_start]
    got = [(int(ev["warp"][inst[o]]), int(ev["k"][inst[o]])) for o in order]
    assert got == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (3, 0), (2, 1), (3, 1)]
    # one batch holding every warp: instruction by instruction across all warps
    order = issue_order(wt, inst, warps_per_batch=64)
    got = [(int(ev["warp"][inst[o]]), int(ev["k"][inst[o]])) for o in order]
    assert got == [(w, k) for k in range(2) for w in range(4)]


# --------------------------------------------------------------------------- analyze_memory


def test_analyze_memory_hand():
    """Warp 0: k0 coalesced over lines 0-1, k1 the same lines again (hits); warp 1: k0
    uncoalesced stride 64 (32 lines), k1 constant on line 0 (hit)."""
    wt = make_wt([(0, 0, 0, strided(0, 4)), (0, 1, 1, strided(0, 4)),
                  (1, 0, 2, strided(4096, 64)), (1, 1, 1, [0] * 32)])
    cache = CacheConfig(64, 128, 16)
    m = analyze_memory(wt, FOUR, cache, warps_per_batch=64)
    by = m.by_sid()
    assert by[0].warp_insts == (1, 0, 0) and by[0].l2_trans == (2, 0, 0)
    assert by[0].dram_trans == (2, 0, 0)
    assert by[2].warp_insts == (0, 1, 0) and by[2].l2_trans == (0, 32, 0)
    assert by[2].dram_trans == (0, 32, 0) and by[2].pattern == "uncoalesced"
    # issue order: (w0,k0) (w1,k0) (w0,k1) (w1,k1): sid 1 hits both times
    assert by[1].warp_insts == (1, 0, 1) and by[1].l2_trans == (2, 0, 1)
    assert by[1].dram_trans == (0, 0, 0) and by[1].l2_hit_rate == 1.0
    assert m.l2_accesses == 2 + 2 + 32 + 1 and m.l2_hits == 3
    assert m.l2_hit_rate == pytest.approx(3 / 37)
    # first-touch misses: every miss here is one (no line is evicted and missed again)
    assert [by[s].cold for s in (0, 1, 2)] == [(2, 0, 0), (0, 0, 0), (0, 32, 0)]
    # a store's misses are not counted: an earlier launch's data serves loads
    stores = analyze_memory(wt, FOUR, cache, 64, is_store=np.array([False, False, True, False]))
    assert stores.by_sid()[2].cold == (0, 0, 0) and stores.by_sid()[0].cold == (2, 0, 0)


def test_l1_served_instructions_keep_the_sectors_they_read():
    """A row walk through a sectored L1 (128-B lines of 32-B sectors): each lane reads its own
    row, rows 4224 B apart (33 lines: distinct sets of a 64-set L1). k = 0..9 step 4 B: k0 and
    k8 each miss 32 sectors, k1-k7 and k9 hit all 32 (8 served). Then sid 1: lanes 0-1 read
    rows 0-1 in sector 1 (fetched at k8), lanes 2-31 rows 64-93 (new): 30 misses, not served.
    Every warp instruction still issues 32 sectors (``issued``), served or not."""
    rows = 4224
    walk = [(0, k, 0, [r * rows + 4 * k for r in range(32)]) for k in range(10)]
    mixed = (0, 10, 1, [r * rows + 32 for r in (0, 1)] + [r * rows for r in range(64, 94)])
    wt = make_wt(walk + [mixed])
    l1 = L1Config(CacheConfig(128, 64, 4), 32, sms=1, warps_per_block=1)
    m = analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32, l1=l1)
    by = m.by_sid()
    assert by[0].warp_insts == (0, 10, 0) and by[0].l1_served == (0, 8, 0)
    assert by[0].l2_trans == (0, 64, 0) and by[0].issued == (0, 320, 0)
    assert by[1].warp_insts == (0, 1, 0) and by[1].l1_served == (0, 0, 0)
    assert by[1].l2_trans == (0, 30, 0) and by[1].issued == (0, 32, 0)
    # without an L1 every issued transaction reaches the L2
    bare = analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32).by_sid()
    assert bare[0].issued == bare[0].l2_trans == (0, 320, 0)


def _trace(tmp_path_factory, name, sizes):
    d = tmp_path_factory.mktemp(Path(name).stem)
    return trace_program(POLYBENCH / name, d / "t.cgptrace",
                         TraceOptions(macros={k: str(v) for k, v in sizes.items()}))


def _analyze(tr, block=Block(32, 32)):
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    wt = form_warps(tr, 0, 0, 2, block, is_store)
    access = np.array([m.bytes for m in tr.header.mem])
    mem = analyze_memory(wt, access, CacheConfig(64, 128, 16), warps_per_batch=64)
    return wt, {tr.header.mem[s.sid].base + ":" + tr.header.mem[s.sid].kind: s
                for s in mem.instrs}, mem


@pytest.fixture(scope="module")
def gemm32(tmp_path_factory, compiler):
    return _trace(tmp_path_factory, "gemm.c", {"NI": 32, "NJ": 32, "NK": 32})


def test_gemm_patterns(gemm32):
    """Warp = 32 consecutive j of one i: A[i][k] is one word (constant, 1 transaction), B[k][j]
    32 consecutive words (coalesced, 2 lines), C[i][j] likewise; nothing uncoalesced."""
    wt, by, mem = _analyze(gemm32)
    assert set(by) == {"A[i][k]:load", "B[k][j]:load", "C[i][j]:load", "C[i][j]:store"}
    a, b = by["A[i][k]:load"], by["B[k][j]:load"]
    assert a.warp_insts == (0, 0, 32 * 32) and a.l2_trans == (0, 0, 32 * 32)
    assert b.warp_insts == (32 * 32, 0, 0) and b.l2_trans == (2 * 32 * 32, 0, 0)
    for s in mem.instrs:
        assert s.warp_insts[UNCOAL] == 0
    assert by["C[i][j]:load"].pattern == "coalesced"
    # 3 arrays of 32 x 32 floats = 3 * 64 lines, all fit the 128-KB L2: compulsory misses only
    assert sum(sum(s.dram_trans) for s in mem.instrs) == 3 * 64
    assert a.dram_trans == (0, 0, 64) and b.dram_trans == (64, 0, 0)
    assert by["C[i][j]:store"].dram_trans == (0, 0, 0)


@pytest.fixture(scope="module")
def syrk32(tmp_path_factory, compiler):
    return _trace(tmp_path_factory, "syrk.c", {"NI": 32, "NJ": 32})


def test_syrk_patterns(syrk32):
    """A[j][k]: adjacent threads (j, j+1) read words one row (128 B) apart: uncoalesced, 32
    lines per warp instruction; A[i][k]: constant."""
    _, by, _ = _analyze(syrk32)
    uncoal = [(k, s) for k, s in by.items() if s.pattern == "uncoalesced"]
    assert len(uncoal) == 1
    key, s = uncoal[0]
    assert key == "A[j][k]:load"
    assert s.warp_insts == (0, 32 * 32, 0) and s.l2_trans == (0, 32 * 32 * 32, 0)
    assert by["A[i][k]:load"].pattern == "constant"


def test_analyze_memory_does_not_mutate(gemm32):
    is_store = np.array([m.kind == "store" for m in gemm32.header.mem])
    wt = form_warps(gemm32, 0, 0, 2, Block(32, 32), is_store)
    before = wt.events.copy()
    analyze_memory(wt, np.array([4] * len(gemm32.header.mem)), CacheConfig(64, 128, 16), 64,
                   CacheScale(4.0, 2.0, 1))
    assert np.array_equal(wt.events, before)


@pytest.mark.parametrize("block", [Block(32, 32), Block(16, 16), Block(32, 8)])
def test_classify_matches_the_reference_on_real_traces(gemm32, syrk32, block):
    for tr in (gemm32, syrk32):
        is_store = np.array([m.kind == "store" for m in tr.header.mem])
        wt = form_warps(tr, 0, 0, 2, block, is_store)
        access = np.array([m.bytes for m in tr.header.mem])
        assert np.array_equal(classify(wt, access), _classify_reference(wt, access))


@pytest.mark.parametrize("seed", range(4))
def test_issue_order_counting_sort_equals_lexsort(seed):
    """The O(n) issue order equals the three-key sort it replaces, on warps of uneven length,
    and for events that are not in (warp, k) order (the fallback)."""
    rng = np.random.default_rng(seed)
    insts = [(w, k, 0, [int(a) for a in rng.integers(0, 4096, 1 + (w + k) % 3) * 4])
             for w in range(int(rng.integers(3, 40))) for k in range(int(rng.integers(1, 6)))]
    wt = make_wt(insts)
    bounds = np.r_[wt.inst_start, len(wt.events)]
    back = [wt.events[bounds[i]:bounds[i + 1]] for i in range(wt.n_insts)][::-1]
    reversed_wt = WarpTrace.from_records(
        wt.grid_dims, wt.block, wt.grid_x, wt.grid_y, np.concatenate(back),
        np.r_[0, np.cumsum([len(b) for b in back])[:-1]].astype(np.int64), wt.n_threads,
        wt.n_warps,
    )
    for w in (wt, reversed_wt):
        _, inst = transactions(w, 32)
        ev = w.events[w.inst_start]
        warp, k = ev["warp"][inst].astype(np.int64), ev["k"][inst].astype(np.int64)
        for wpb in (1, 3, 64):
            want = np.lexsort((warp, k, warp // wpb))
            assert issue_order(w, inst, wpb).tolist() == want.tolist()
            # the analysis builds the same sequence directly, instructions first
            lines, inst_all = transactions(w, 32)
            got_lines, got_inst = issued_transactions(w, 32, wpb)
            assert got_lines.tolist() == lines[want].tolist()
            assert got_inst.tolist() == inst_all[want].tolist()


def _analyses(wt, tr, cache=CacheConfig(64, 128, 16)):
    access = np.array([m.bytes for m in tr.header.mem])
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    return [analyze_memory(wt, access, cache, wpb, CacheScale(4.0, 2.0, 1), is_store=is_store)
            for wpb in (8, 64)]


@pytest.fixture(scope="module")
def gemm_wide(tmp_path_factory, compiler):
    """A grid 96 threads wide and 40 high: warps numbered differently by every shape."""
    return _trace(tmp_path_factory, "gemm.c", {"NI": 40, "NJ": 96, "NK": 8})


@pytest.mark.parametrize("primed", [True, False])
@pytest.mark.parametrize("block", [Block(32, 8), Block(64, 4), Block(128, 1)])
def test_regrouped_warps_analyse_as_warps_formed_anew(gemm_wide, syrk32, block, primed):
    """A block shape formed by regrouping the first shape's warps (warps.Origin: patterns
    and transactions taken from it) gives the memory analysis of warps formed from scratch,
    whether the first shape was analysed before or not."""
    from cgpredict.warps import form_warps as fw

    for tr in (gemm_wide, syrk32):
        is_store = np.array([m.kind == "store" for m in tr.header.mem])
        cache: dict = {}
        first = fw(tr, 0, 0, 2, Block(32, 32), is_store, cache)
        if primed:
            _analyses(first, tr)
        derived = fw(tr, 0, 0, 2, block, is_store, cache)
        assert derived.origin is not None and derived.origin.trace is first
        if tr is gemm_wide:  # the warps were renumbered
            assert not np.array_equal(derived.origin.inst, np.arange(derived.n_insts))
        fresh = fw(tr, 0, 0, 2, block, is_store)
        assert fresh.origin is None
        assert _analyses(derived, tr) == _analyses(fresh, tr)


@pytest.mark.parametrize("primed", [True, False])
def test_transposed_warps_analyse_as_addresses_given_anew(syrk32, primed):
    """A transposed array's instructions are classified and split in lines anew, the others'
    results taken from the untransposed trace (Origin.moved): the same analysis as the
    transposed addresses with no origin."""
    from cgpredict.memory.shared import ArrayLayout
    from cgpredict.memory.transpose import transposed_addresses
    from cgpredict.warps import Origin

    tr = syrk32
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    wt = form_warps(tr, 0, 0, 2, Block(32, 8), is_store)
    if primed:
        _analyses(wt, tr)
    sids = [m.id for m in tr.header.mem if m.base.startswith("A")]
    moves = [(sids, int(wt.addr.min()), ArrayLayout((32, 32), 4))]
    addr = transposed_addresses(wt, moves)
    derived = dataclasses.replace(wt, addr=addr, origin=Origin(wt, None, frozenset(sids)))
    fresh = dataclasses.replace(wt, addr=addr.copy(), origin=None)
    got, want = _analyses(derived, tr), _analyses(fresh, tr)
    assert got == want
    assert got != _analyses(wt, tr)  # the transposition changed something


def test_regrouped_patterns_follow_their_instructions():
    """Random addresses (patterns that differ from warp to warp): each regrouped
    instruction takes the pattern of its source instruction, which equals classifying the
    regrouped warps directly."""
    from cgpredict.memory.transactions import _patterns
    from cgpredict.warp_order import order_events, thread_events
    from cgpredict.warp_regroup import regroup_warps
    from cgpredict.warps import Origin

    rng = np.random.default_rng(5)
    gx, gy, per = 96, 6, 4
    tx = np.repeat(np.tile(np.arange(gx), gy), per)
    ty = np.repeat(np.repeat(np.arange(gy), gx), per)
    sid = np.tile(np.arange(per), gx * gy).astype(np.uint16)
    mult = rng.choice([0, 4, 512], size=(gy, gx // 32))  # per warp: constant, coalesced or not
    addr = (mult[ty, tx // 32] * tx + 1024 * sid).astype(np.uint64)
    threads = thread_events(tx, ty, gx, gy)

    def wt_of(o, block, origin=None):
        return WarpTrace(2, block, gx, gy, o.addr, o.lane, o.inst_start, o.inst_warp, o.inst_k,
                         o.inst_sid, o.n_threads, o.n_warps, o.divergent, 0, None, origin)

    old = wt_of(order_events(tx, ty, sid, addr, gx, gy, Block(32, 4), threads), Block(32, 4))
    moved, src = regroup_warps(old.ordered, gx, gy, Block(32, 4), Block(64, 2))
    derived = wt_of(moved, Block(64, 2), Origin(old, src))
    ab = np.array([4, 4, 4, 4])
    got = _patterns(derived, ab)
    assert len(set(classify(old, ab).tolist())) > 1
    assert got.tolist() == classify(derived, ab).tolist()
    assert got.tolist() != classify(old, ab).tolist()  # instructions did move


def test_fresh_stores_are_those_without_a_loaded_copy():
    """An array of 24-byte structs, 32 lanes: sid 0 loads vx (offset 12) of each lane's struct
    (768 B: 24 sectors), sid 2 then stores x (offset 0) of the same structs: every sector it
    writes was loaded and is held, none fresh. Sid 2 again, on another 32 structs nobody
    loaded: 24 sectors, all fresh. With an L2 of one 128-B line, the first store finds the
    loaded sectors evicted: fresh again."""
    structs = strided(0, 24)
    other = strided(1 << 20, 24)
    wt = make_wt([(0, 0, 0, [a + 12 for a in structs]), (0, 1, 2, structs), (0, 2, 2, other)])
    is_store = np.array([False, False, True, False])
    big = analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32,
                         is_store=is_store).by_sid()
    assert big[2].l2_trans == (0, 48, 0) and big[2].fresh == (0, 24, 0)
    assert big[0].fresh == (0, 0, 0)  # loads are never fresh stores
    tiny = analyze_memory(wt, FOUR, CacheConfig(128, 1, 1), 64, sector_bytes=32,
                          is_store=is_store).by_sid()
    assert tiny[2].fresh == (0, 48, 0)


def test_analysis_is_kept_with_its_warps_under_all_its_arguments():
    """The fresh-store launch above analysed twice with the same arguments: the second is
    the first's result (kept with the warps); another cache or other stores are analysed
    anew, and equal what a trace with nothing kept gives (sid 2's stores: fresh in a
    one-line L2, none of them a store when is_store says so)."""
    structs = strided(0, 24)
    insts = [(0, 0, 0, [a + 12 for a in structs]), (0, 1, 2, structs),
             (0, 2, 2, strided(1 << 20, 24))]
    wt = make_wt(insts)
    is_store = np.array([False, False, True, False])
    big, tiny = CacheConfig(128, 64, 16), CacheConfig(128, 1, 1)
    first = analyze_memory(wt, FOUR, big, 64, sector_bytes=32, is_store=is_store)
    assert analyze_memory(wt, FOUR, big, 64, sector_bytes=32, is_store=is_store) is first
    other = analyze_memory(wt, FOUR, tiny, 64, sector_bytes=32, is_store=is_store)
    assert other.by_sid()[2].fresh == (0, 48, 0) and first.by_sid()[2].fresh == (0, 24, 0)
    loads = analyze_memory(wt, FOUR, tiny, 64, sector_bytes=32, is_store=np.zeros(4, bool))
    assert loads.by_sid()[2].fresh == (0, 0, 0)
    for cache, st, got in ((big, is_store, first), (tiny, is_store, other)):
        assert analyze_memory(make_wt(insts), FOUR, cache, 64, sector_bytes=32,
                              is_store=st) == got


def test_fill_is_the_share_of_a_warps_lanes_active():
    """Hand count: a 32-lane store, then the same store with lanes 16..31 masked off (a
    triangular loop's short threads): 48 active lanes over 2 warp instructions of 32."""
    wt = make_wt([(0, 0, 2, strided(0, 1024)), (0, 1, 2, strided(4, 1024, lanes=16))])
    is_store = np.array([False, False, True, False])
    s = analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32,
                       is_store=is_store).by_sid()[2]
    assert s.warp_insts == (0, 2, 0) and s.l2_trans == (0, 48, 0)
    assert s.fill == (1.0, 48 / 64, 1.0)


def test_l1_lines_are_the_distinct_cache_lines_a_warp_touches():
    """Hand count, 128-byte lines of 32-byte sectors: 32 lanes reading 4-byte fields of
    24-byte structs span 768 bytes: 24 sectors in 6 lines; 32 lanes a row of 1024 bytes
    apart: 32 sectors in 32 lines; 32 consecutive words: 4 sectors in 1 line."""
    wt = make_wt([(0, 0, 0, strided(0, 24)), (0, 1, 1, strided(1 << 20, 1024)),
                  (0, 2, 2, strided(1 << 24, 4))])
    got = analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32).by_sid()
    assert got[0].issued == (0, 24, 0) and got[0].l1_lines == (0, 6, 0)
    assert got[1].issued == (0, 32, 0) and got[1].l1_lines == (0, 32, 0)
    assert got[2].issued == (4, 0, 0) and got[2].l1_lines == (1, 0, 0)
    # the same lines are the L2 requests (eqs. (B2q), (LM)); with an L1 that caches the
    # loads the L1 units become the data stage's wavefronts (B2w), the requests stay the
    # lines of the sectors it misses: every one, cold
    assert [g.l2_requests for g in (got[0], got[1], got[2])] == [(0, 6, 0), (0, 32, 0), (1, 0, 0)]
    l1 = L1Config(CacheConfig(128, 64, 4), 32, sms=1, warps_per_block=1)
    with_l1 = analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32,
                             l1=l1).by_sid()
    assert [with_l1[s].l2_requests for s in (0, 1, 2)] == [(0, 6, 0), (0, 32, 0), (1, 0, 0)]


def test_line_counts_match_a_brute_force_count_grouped_or_not():
    """line_counts (eq. (B2)'s lines a warp instruction touches): the pass over grouped runs
    and the sort it falls back on both give, per (static instruction, pattern), the distinct
    lines each warp instruction touches, as a set per instruction counts them."""
    from cgpredict.memory.line_counts import line_counts
    rng = np.random.default_rng(3)
    n_inst, n_sids = 300, 5
    per = rng.integers(1, 33, n_inst)
    inst = np.repeat(rng.permutation(n_inst), per).astype(np.int64)
    units = rng.integers(0, 64, len(inst)).astype(np.uint64)
    sid, pattern = rng.integers(0, n_sids, n_inst), rng.integers(0, 3, n_inst)
    want = np.zeros((n_sids, 3), np.int64)
    for i in range(n_inst):
        want[sid[i], pattern[i]] += len({int(u) // 4 for u in units[inst == i]})
    assert (line_counts(units, inst, 4, sid, pattern, n_sids) == want).all()
    shuffled = rng.permutation(len(inst))
    got = line_counts(units[shuffled], inst[shuffled], 4, sid, pattern, n_sids)
    assert (got == want).all()
