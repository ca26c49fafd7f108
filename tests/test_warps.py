"""Tests of cgpredict.warps (SPEC §2.2): pseudo-threads -> blocks -> pseudo-warps -> warp
memory instructions.

Oracles are computed by hand (or by a plain Python loop over the iteration space): thread id
= y * grid_x + x, block = (x // bx, y // by) in row-major order, thread-in-block = (y % by) * bx
+ x % bx, warp = block * warps_per_block + tib // 32, lane = tib % 32, and k = the rank of an
event among its thread's events in program order."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest
from cgpredict.instrument.memtrace import LoopInfo

from cgpredict.block import Block, MappingError
from cgpredict.frontend.tracefile import TAG_BEGIN, TAG_END, TAG_EXIT, TAG_LOOP
from cgpredict.frontend.tracer import TraceOptions, trace_program
from cgpredict.memory.issue import transactions
from cgpredict.memory.transactions import COAL, CONST, UNCOAL, classify
from cgpredict.warp_masked import sid_ranks, sid_ranks_sorted
from cgpredict.warps import (
    WARP_SIZE,
    form_warps,
    form_warps_auto,
    perfectly_nested,
)

# --------------------------------------------------------------------------- Block.parse


@pytest.mark.parametrize(
    "text, x, y",
    [("32x8", 32, 8), ("256", 256, 1), ("16X16", 16, 16), ("1x1", 1, 1), ("1024x1", 1024, 1)],
)
def test_block_parse(text, x, y):
    b = Block.parse(text)
    assert (b.x, b.y, b.threads) == (x, y, x * y)
    assert str(b) == f"{x}x{y}"
    assert Block.parse(str(b)) == b


@pytest.mark.parametrize(
    "text", ["", "x", "axb", "32x", "x8", "0x8", "32x0", "-32x8", "32x8x2", "3.5x2", "32*8"]
)
def test_block_parse_rejects(text):
    with pytest.raises(MappingError, match="block shape"):
        Block.parse(text)


# --------------------------------------------------------------------------- synthetic traces


@dataclass(frozen=True)
class _Header:
    loops: tuple
    function_kernel: bool = False  # a kernel given by --function (RegionInfo.line == 0)

    def region(self, index: int) -> SimpleNamespace:
        return SimpleNamespace(line=0 if self.function_kernel else 1)


@dataclass(frozen=True)
class FakeTrace:
    """The part of a Trace that warp formation reads: loops and one launch's events."""

    header: _Header
    events: np.ndarray = field(repr=False)

    def launch_events(self, k: int) -> np.ndarray:
        assert k == 0
        return self.events


def _loop(lid, depth, parent):
    return LoopInfo(
        id=lid,
        region=0,
        function="main",
        header=f"l{lid}",
        parent=parent,
        depth=depth,
        line=10 + lid,
        rotated=True,
    )


def _mark(loop, idx):
    return (TAG_LOOP << 48) | (loop << 32) | idx


def _exit(loop):
    return (TAG_EXIT << 48) | (loop << 32)


def _mem(sid, addr):
    return (sid << 48) | addr


A_BASE, B_BASE = 0x10000, 0x20000


def nest_trace(ny: int, nx: int, hoisted: bool = False) -> FakeTrace:
    """for i < ny { [load X[i]] for j < nx { load A[i][j]; store B[i][j] } } (sids 0, 1, 2)."""
    ev = [(TAG_BEGIN << 48)]
    for i in range(ny):
        ev.append(_mark(0, i))
        if hoisted:
            ev.append(_mem(2, 0x30000 + 4 * i))
        for j in range(nx):
            ev.append(_mark(1, j))
            ev.append(_mem(0, A_BASE + 4 * (i * nx + j)))
            ev.append(_mem(1, B_BASE + 4 * (i * nx + j)))
        ev.append(_exit(1))
    ev.append(_exit(0))
    ev.append(TAG_END << 48)
    return FakeTrace(_Header((_loop(0, 1, -1), _loop(1, 2, 0))), np.array(ev, np.uint64))


IS_STORE = np.array([False, True, False])


def expected_events(ny, nx, block: Block):
    """Brute-force warp order of nest_trace: (warp, k, lane, sid, thread, addr) sorted."""
    nbx = -(-nx // block.x)
    wpb = -(-block.threads // WARP_SIZE)
    rows = []
    for i in range(ny):
        for j in range(nx):
            tib = (i % block.y) * block.x + j % block.x
            blk = (i // block.y) * nbx + j // block.x
            warp = blk * wpb + tib // WARP_SIZE
            for k, (sid, base) in enumerate(((0, A_BASE), (1, B_BASE))):
                rows.append((warp, k, tib % WARP_SIZE, sid, i * nx + j, base + 4 * (i * nx + j)))
    return sorted(rows)


@pytest.mark.parametrize(
    "ny, nx, block",
    [
        (4, 64, Block(32, 2)),
        (8, 64, Block(32, 8)),
        (4, 64, Block(16, 4)),
        (3, 40, Block(32, 2)),
        (2, 64, Block(64, 1)),
    ],
)
def test_form_warps_2d_matches_brute_force(ny, nx, block):
    tr = nest_trace(ny, nx)
    wt = form_warps(tr, 0, 0, 2, block, IS_STORE)
    got = [
        tuple(int(e[n]) for n in ("warp", "k", "lane", "sid", "thread", "addr")) for e in wt.events
    ]
    assert got == expected_events(ny, nx, block)
    assert (wt.grid_dims, wt.grid_x, wt.grid_y, wt.block) == (2, nx, ny, block)
    assert wt.n_threads == nx * ny
    assert wt.n_warps == len({r[0] for r in got})
    assert wt.n_insts == 2 * wt.n_warps  # two memory events per thread
    assert wt.blocks == -(-nx // block.x) * -(-ny // block.y)
    assert (wt.divergent_insts, wt.unmapped_events, wt.dependence) == (0, 0, None)
    # inst_start marks the first event of every (warp, k)
    w, k = wt.events["warp"], wt.events["k"]
    first = np.r_[True, (w[1:] != w[:-1]) | (k[1:] != k[:-1])]
    assert np.array_equal(wt.inst_start, np.flatnonzero(first))


def test_form_warps_2d_hand_ids():
    """4 x 64 nest, block 32x2: block (bx, by) = (j // 32, i // 2), 2 warps per block; thread
    (i=1, j=40) is block 1 (bx=1, by=0), thread-in-block 32 + 8 = 40: warp 1*2 + 1 = 3, lane 8."""
    wt = form_warps(nest_trace(4, 64), 0, 0, 2, Block(32, 2), IS_STORE)
    ev = wt.events
    t = ev[ev["thread"] == 1 * 64 + 40]
    assert list(t["warp"]) == [3, 3] and list(t["lane"]) == [8, 8] and list(t["k"]) == [0, 1]
    assert list(t["sid"]) == [0, 1]
    # thread (i=2, j=5): block (0, 1) = block id 2, warp 4, lane 5
    t = ev[ev["thread"] == 2 * 64 + 5]
    assert set(t["warp"]) == {4} and set(t["lane"]) == {5}
    # warp 0 = row 0, columns 0..31 (x fastest); warp 1 = row 1, columns 0..31
    w0 = ev[(ev["warp"] == 0) & (ev["k"] == 0)]
    assert list(w0["thread"]) == list(range(32))
    w1 = ev[(ev["warp"] == 1) & (ev["k"] == 0)]
    assert list(w1["thread"]) == list(range(64, 96))
    assert wt.n_warps == 8 and wt.blocks == 4


def test_form_warps_block_16x16_warp_spans_two_rows():
    """A 16-wide block: a warp is rows y, y+1 of 16 threads each (x fastest)."""
    wt = form_warps(nest_trace(4, 64), 0, 0, 2, Block(16, 16), IS_STORE)
    ev = wt.events
    w0 = ev[(ev["warp"] == 0) & (ev["k"] == 0)]
    assert list(w0["thread"]) == list(range(16)) + list(range(64, 80))
    assert list(w0["lane"]) == list(range(32))


def test_form_warps_1d():
    """1-D grid: the outer loop is x; each thread runs the whole inner loop: 2 * nx events."""
    nx = 64
    wt = form_warps(nest_trace(4, nx), 0, 0, 1, Block(256), IS_STORE)
    assert (wt.grid_dims, wt.grid_x, wt.grid_y) == (1, 4, 1)
    assert wt.n_threads == 4 and wt.n_warps == 1 and wt.n_insts == 2 * nx
    ev = wt.events
    assert set(ev["warp"]) == {0}
    for i in range(4):
        t = ev[ev["thread"] == i]
        assert set(t["lane"]) == {i}
        assert list(t["k"]) == list(range(2 * nx))
        # program order kept: load A[i][j], store B[i][j], j = 0, 1, ...
        assert list(t["sid"]) == [0, 1] * nx
        assert list(t["addr"][0::2]) == [A_BASE + 4 * (i * nx + j) for j in range(nx)]


def test_hoisted_events_are_unmapped_in_2d_only():
    tr = nest_trace(4, 64, hoisted=True)
    is_store = np.array([False, True, False])
    wt2 = form_warps(tr, 0, 0, 2, Block(32, 2), is_store)
    assert wt2.unmapped_events == 4
    assert 2 not in set(wt2.events["sid"])
    assert perfectly_nested(tr, 0, 0, is_store)  # a hoisted load does not prevent 2-D
    wt1 = form_warps(tr, 0, 0, 1, Block(256), is_store)
    assert wt1.unmapped_events == 0
    assert int((wt1.events["sid"] == 2).sum()) == 4
    # a store outside the x loop does
    assert not perfectly_nested(tr, 0, 0, np.array([False, True, True]))


def test_form_warps_does_not_mutate_trace():
    tr = nest_trace(4, 64)
    before = tr.events.copy()
    form_warps(tr, 0, 0, 2, Block(32, 2), IS_STORE)
    assert np.array_equal(tr.events, before)


def test_mapping_errors():
    one_loop = FakeTrace(
        _Header((_loop(0, 1, -1),)), np.array([_mark(0, 0), _mem(0, A_BASE), _exit(0)], np.uint64)
    )
    with pytest.raises(MappingError, match="2-D grid needs two nested loops"):
        form_warps(one_loop, 0, 0, 2, Block(32, 8), IS_STORE)
    no_loop = FakeTrace(_Header(()), np.array([_mem(0, A_BASE)], np.uint64))
    with pytest.raises(MappingError, match="no loop"):
        form_warps(no_loop, 0, 0, 1, Block(256), IS_STORE)


def test_a_function_kernel_without_a_loop_is_one_thread():
    events = np.array([_mem(0, A_BASE), _mem(0, A_BASE + 4), _mem(0, A_BASE + 8)], np.uint64)
    wt = form_warps(FakeTrace(_Header((), function_kernel=True), events), 0, 0, 2, Block(32, 8),
                    IS_STORE)
    # every access belongs to thread 0 of a 1 x 1 grid: one warp, three warp instructions
    assert (wt.grid_dims, wt.grid_x, wt.grid_y, wt.n_threads, wt.n_warps) == (1, 1, 1, 1, 1)
    assert wt.n_insts == 3 and wt.unmapped_events == 0


def test_synthetic_dependence_and_auto_fallback():
    """Thread (i, j) reads A[i][nx-1-j], which thread (i, nx-1-j) writes: a 2-D dependence,
    absent in 1-D (each row is one thread)."""
    ny, nx = 2, 64
    ev = []
    for i in range(ny):
        ev.append(_mark(0, i))
        for j in range(nx):
            ev.append(_mark(1, j))
            ev.append(_mem(0, A_BASE + 4 * (i * nx + nx - 1 - j)))
            ev.append(_mem(1, A_BASE + 4 * (i * nx + j)))
        ev.append(_exit(1))
    tr = FakeTrace(_Header((_loop(0, 1, -1), _loop(1, 2, 0))), np.array(ev, np.uint64))
    wt2 = form_warps(tr, 0, 0, 2, Block(32, 2), IS_STORE)
    assert wt2.dependence is not None
    assert wt2.dependence.addresses == ny * nx
    assert wt2.dependence.store_ids == (1,) and wt2.dependence.other_ids == (0,)
    auto = form_warps_auto(tr, 0, 0, Block(32, 2), Block(256), IS_STORE)
    assert auto.grid_dims == 1 and auto.dependence is None and auto.block == Block(256)


# --------------------------------------------------------------------------- divergence
#
# A GPU runs a divergent warp as masked instructions: a warp instruction is the r-th execution
# of static instruction s by the lanes of the warp that execute it, and a warp issues its
# instructions in program order, each once its last lane has reached it (reconvergence).

X_BASE, Y_BASE = 0x30000, 0x40000
N_DIV = 100  # threads of the 1-D divergence kernels: warps of 32, 32, 32 and 4 lanes
STORE4 = np.array([False, False, True, True])


def one_d_trace(bodies) -> FakeTrace:
    """1-D kernel `for i { for j < len(inner) { inner } after }`: bodies[i] = (inner, after),
    inner a list (one per j) of lists of (sid, addr), after a list of (sid, addr)."""
    ev = [TAG_BEGIN << 48]
    for i, (inner, after) in enumerate(bodies):
        ev.append(_mark(0, i))
        for j, mems in enumerate(inner):
            ev.append(_mark(1, j))
            ev += [_mem(s, a) for s, a in mems]
        if inner:
            ev.append(_exit(1))
        ev += [_mem(s, a) for s, a in after]
    ev += [_exit(0), TAG_END << 48]
    return FakeTrace(_Header((_loop(0, 1, -1), _loop(1, 2, 0))), np.array(ev, np.uint64))


def tri_trace(n=N_DIV):
    """tri: for i { s = 0; for j <= i: s += A[i][j] * x[j]; y[i] = s } (A: n x n floats).
    sids: 0 load A[i][j], 1 load x[j], 2 store y[i]."""
    return one_d_trace(
        [
            (
                [[(0, A_BASE + 4 * (n * i + j)), (1, X_BASE + 4 * j)] for j in range(i + 1)],
                [(2, Y_BASE + 4 * i)],
            )
            for i in range(n)
        ]
    )


def br_trace(n=N_DIV):
    """br: if (i % 3 == 0) y[i] = x[i] * 2; else x[i] = A[i][0];
    sids: 0 load x[i], 1 load A[i][0], 2 store y[i], 3 store x[i]."""
    return one_d_trace(
        [
            (
                [],
                [(0, X_BASE + 4 * i), (2, Y_BASE + 4 * i)]
                if i % 3 == 0
                else [(1, A_BASE + 4 * n * i), (3, X_BASE + 4 * i)],
            )
            for i in range(n)
        ]
    )


def _insts(wt):
    """[(warp, k, sid, [lanes], [addrs])] of every warp instruction, in event order."""
    ev, b = wt.events, np.r_[wt.inst_start, len(wt.events)]
    out = []
    for lo, hi in zip(b[:-1], b[1:]):
        e = ev[lo:hi]
        assert len(set(e["warp"])) == 1 and len(set(e["k"])) == 1 and len(set(e["sid"])) == 1
        out.append(
            (
                int(e["warp"][0]),
                int(e["k"][0]),
                int(e["sid"][0]),
                [int(x) for x in e["lane"]],
                [int(x) for x in e["addr"]],
            )
        )
    return out


def _per_sid(wt, line_bytes=64):
    """{sid: ([coal, uncoal, const] warp instructions, L2 transactions)}."""
    pat = classify(wt, np.full(4, 4))
    _, inst = transactions(wt, line_bytes)
    sids = wt.events["sid"][wt.inst_start]
    out = {}
    for s in sorted(set(int(x) for x in sids)):
        counts = [int(((sids == s) & (pat == p)).sum()) for p in (COAL, UNCOAL, CONST)]
        out[s] = (counts, int((sids[inst] == s).sum()))
    return out


@pytest.mark.slow
def test_triangular_loop_masked_instructions():
    """tri (hand oracle). Warp w holds i = 32w .. 32w+31 (4 lanes in warp 3); lane i runs
    i + 1 iterations. Instruction (A, r) is run by the lanes with i >= r: warps have 32, 64, 96
    and 100 of them, 292 in all. The one with a single lane (r = the warp's largest i) is
    'constant', the other 288 uncoalesced (rows 400 B apart: one 64-B line per lane, 5050
    lines). x[j] is one address per instruction: 292 constant, one line each. The store of
    y[i] is one full coalesced instruction per warp, issued after the loop (its last lane gets
    there last): 2 + 2 + 2 + 1 = 7 lines, 1.75 per warp. Old k-th-event alignment merged the
    y[i] stores of short lanes with A/x loads of long lanes."""
    wt = form_warps(tri_trace(), 0, 0, 1, Block(256), STORE4)
    assert (wt.n_warps, wt.n_threads, wt.n_insts) == (4, 100, 2 * 292 + 4)
    per = _per_sid(wt)
    assert per[2] == ([4, 0, 0], 7)
    assert per[0] == ([0, 288, 4], 5050)
    assert per[1] == ([0, 0, 292], 292)
    # divergent: (A, r) and (x, r) with fewer lanes than the warp's: r >= 1 in warp 0,
    # r >= 33 / 65 in warps 1 / 2, r >= 97 in warp 3 (4 lanes): 31 + 31 + 31 + 3 per sid
    assert wt.divergent_insts == 2 * 96
    insts = _insts(wt)
    for w in range(4):
        lanes_in = 32 if w < 3 else 4
        mine = [x for x in insts if x[0] == w]
        top = 32 * w + lanes_in  # 1 + the warp's largest i: its trip count
        assert [x[1] for x in mine] == list(range(2 * top + 1))
        for r in range(top):
            active = [ln for ln in range(lanes_in) if 32 * w + ln >= r]
            assert mine[2 * r][2:4] == (0, active)
            assert mine[2 * r][4] == [A_BASE + 4 * (N_DIV * (32 * w + ln) + r) for ln in active]
            assert mine[2 * r + 1][2:] == (1, active, [X_BASE + 4 * r] * len(active))
        assert mine[-1][2:] == (
            2,
            list(range(lanes_in)),
            [Y_BASE + 4 * (32 * w + ln) for ln in range(lanes_in)],
        )


def test_branch_masked_instructions():
    """br (hand oracle). Each warp runs four masked instructions, none mixing static
    instructions: load x[i] and store y[i] by the lanes with i % 3 == 0 (lines 2, 2, 2, 1:
    7), load A[i][0] (one line per lane: 21, 21, 22, 2 = 66) and store x[i] (7) by the others.
    Issue order: the two k = 0 loads (by sid), then the two stores. All 16 diverge. (The old
    k-th-event alignment gave x[i] 2 instructions and 26 lines, A[i][0] 2 and 47.)"""
    wt = form_warps(br_trace(), 0, 0, 1, Block(256), STORE4)
    assert (wt.n_warps, wt.n_insts, wt.divergent_insts) == (4, 16, 16)
    per = _per_sid(wt)
    assert [per[s][1] for s in range(4)] == [7, 66, 7, 7]
    assert [sum(per[s][0]) for s in range(4)] == [4, 4, 4, 4]
    # masked lanes 3 apart (or 1-2 apart) stride 4 bytes per lane: coalesced; rows: not
    assert [per[s][0] for s in range(4)] == [[4, 0, 0], [0, 4, 0], [4, 0, 0], [4, 0, 0]]
    for w, k, sid, lanes, addrs in _insts(wt):
        assert sid == (0, 1, 2, 3)[k]
        thirds = [ln for ln in range(32 if w < 3 else 4) if (32 * w + ln) % 3 == 0]
        others = [ln for ln in range(32 if w < 3 else 4) if (32 * w + ln) % 3]
        assert lanes == (thirds if sid in (0, 2) else others)
        base = (X_BASE, A_BASE, Y_BASE, X_BASE)[sid]
        assert addrs == [base + (4 * N_DIV if sid == 1 else 4) * (32 * w + ln) for ln in lanes]


def test_uniform_prefix_divergence_counts_masked_lanes():
    """for i < 40 { for j < i % 4: load A[i][j] }: every lane runs the same sequence cut short
    (no static instructions mixed), yet instruction r is masked to the lanes with i % 4 > r.
    Warp 0: 24, 16, 8 of 32 lanes; warp 1 (8 lanes in the grid, i = 32..39): 6, 4, 2. All
    six diverge; threads with no event (i % 4 == 0) are not counted as threads."""
    tr = one_d_trace(
        [([[(0, A_BASE + 4 * (16 * i + j))] for j in range(i % 4)], []) for i in range(40)]
    )
    wt = form_warps(tr, 0, 0, 1, Block(64), STORE4)
    got = [(w, k, len(lanes)) for w, k, _, lanes, _ in _insts(wt)]
    assert got == [(0, 0, 24), (0, 1, 16), (0, 2, 8), (1, 0, 6), (1, 1, 4), (1, 2, 2)]
    assert (wt.divergent_insts, wt.n_threads, wt.n_warps) == (6, 30, 2)


def test_masked_lanes_in_order_with_noncontiguous_threads():
    """A forced 2-D grid over `for i < 2 { for j < 4: load (j even ? A : C)[i][j];
    for j < 4: store B[i][j] }`: a thread's events are far apart in the trace (the rank
    fallback sorts them). Per row (one warp of 4 lanes): load A by lanes 0, 2 and load C by
    lanes 1, 3 (both k 0, divergent), then the store by all 4 lanes."""
    c_base = 0x50000
    ev = []
    for i in range(2):
        ev.append(_mark(0, i))
        for j in range(4):
            ev.append(_mark(1, j))
            ev.append(
                _mem(0, A_BASE + 4 * (4 * i + j))
                if j % 2 == 0
                else _mem(2, c_base + 4 * (4 * i + j))
            )
        ev.append(_exit(1))
        for j in range(4):
            ev.append(_mark(2, j))
            ev.append(_mem(1, B_BASE + 4 * (4 * i + j)))
        ev.append(_exit(2))
    tr = FakeTrace(
        _Header((_loop(0, 1, -1), _loop(1, 2, 0), _loop(2, 2, 0))), np.array(ev, np.uint64)
    )
    wt = form_warps(tr, 0, 0, 2, Block(32, 1), IS_STORE)
    got = [(w, k, sid, lanes) for w, k, sid, lanes, _ in _insts(wt)]
    assert got == [
        (w, k, sid, lanes)
        for w in range(2)
        for k, sid, lanes in ((0, 0, [0, 2]), (1, 2, [1, 3]), (2, 1, [0, 1, 2, 3]))
    ]
    assert wt.divergent_insts == 4 and wt.n_threads == 8


def _brute_ranks(thread, sid):
    out, seen = np.empty(len(thread), np.int64), {}
    for t, key in enumerate(zip(thread.tolist(), sid.tolist())):
        out[t] = seen.get(key, 0)
        seen[key] = out[t] + 1
    return out


def test_sid_ranks_fast_and_sorted_agree():
    rng = np.random.default_rng(3)
    thread = np.repeat(np.arange(50), rng.integers(1, 30, 50))
    sid = rng.integers(0, 5, len(thread)).astype(np.uint16)
    r, ok = sid_ranks(thread, sid, 50, 5)
    assert ok and np.array_equal(r, _brute_ranks(thread, sid))
    assert np.array_equal(sid_ranks_sorted(thread, sid), _brute_ranks(thread, sid))
    # threads that reappear later: the O(n) pass gives up, the sort does not
    thread2, sid2 = np.r_[thread, thread[:40]], np.r_[sid, sid[:40]]
    assert not sid_ranks(thread2, sid2, 50, 5)[1]
    assert np.array_equal(sid_ranks_sorted(thread2, sid2), _brute_ranks(thread2, sid2))


@pytest.mark.parametrize("seed", range(6))
def test_random_divergent_kernels_match_brute_force(seed):
    """Random per-thread sequences of 4 static instructions (random lengths): the events in
    (warp, k, lane) order equal a plain-Python grouping by (warp, sid, r), each warp's groups
    issued by (largest k of their lanes, sid, r)."""
    rng = np.random.default_rng(seed)
    n, block = int(rng.integers(20, 140)), Block(int(rng.choice([32, 64, 96])))
    seqs = [list(rng.integers(0, 4, int(rng.integers(0, 7)))) for _ in range(n)]
    tr = one_d_trace(
        [
            ([], [(int(s), 0x1000 * int(s) + 64 * i + 4 * q) for q, s in enumerate(seq)])
            for i, seq in enumerate(seqs)
        ]
    )
    wt = form_warps(tr, 0, 0, 1, block, STORE4)
    groups = {}
    for i, seq in enumerate(seqs):
        cnt = {}
        for kk, s in enumerate(seq):
            r = cnt.get(s, 0)
            cnt[s] = r + 1
            g = groups.setdefault((i // 32, int(s), r), [kk, []])
            g[0] = max(g[0], kk)
            g[1].append((i % 32, i, 0x1000 * int(s) + 64 * i + 4 * kk))
    rows, div = [], 0
    for w in sorted({w for w, _, _ in groups}):
        mine = sorted(
            (last, s, r, lanes) for (ww, s, r), (last, lanes) in groups.items() if ww == w
        )
        in_grid = min(32, n - 32 * w)
        for slot, (_, s, _, lanes) in enumerate(mine):
            rows += [(w, slot, ln, s, th, a) for ln, th, a in sorted(lanes)]
            div += len(lanes) < in_grid
    got = [
        tuple(int(e[c]) for c in ("warp", "k", "lane", "sid", "thread", "addr")) for e in wt.events
    ]
    assert got == rows
    assert wt.divergent_insts == div
    assert wt.n_threads == sum(1 for s in seqs if s)


# --------------------------------------------------------------------------- traced C

KERNELS_C = r"""
#include <stdio.h>
#define N 8
#define M 64
static float A[N][M];
static float B[N][M];
static float C[N][M];
static float D[N][M];
static float s[N];
static float x[N];

int main(void) {
  for (int i = 0; i < N; i++) {
    x[i] = i;
    for (int j = 0; j < M; j++) { A[i][j] = i + j; D[i][j] = i - j; }
  }
#pragma cgp kernel copy
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      B[i][j] = A[i][j] * 2.0f;
#pragma cgp kernel mirror
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      D[i][j] = D[i][M - 1 - j] + 1.0f;
#pragma cgp kernel reduce
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      s[i] += A[i][j];
#pragma cgp kernel branchy
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      if (j % 2)
        B[i][j] = A[i][j];
      else
        C[i][j] = 1.0f;
    }
#pragma cgp kernel hoist
  for (int i = 0; i < N; i++) {
    float t = x[i];
    for (int j = 0; j < M; j++)
      C[i][j] = t;
  }
#pragma cgp kernel carried
  for (int i = 0; i < N; i++)
    for (int j = 1; j < M; j++)
      A[i][j] = A[i][j - 1] + 1.0f;
  printf("%f %f %f %f %f\n", A[1][5], B[2][3], C[1][2], D[3][4], s[3]);
  return 0;
}
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory, compiler):
    d = tmp_path_factory.mktemp("warps")
    src = d / "kernels.c"
    src.write_text(KERNELS_C)
    tr = trace_program(src, d / "kernels.cgptrace", TraceOptions())
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    return tr, is_store


def _region(tr, name):
    r = tr.header.region(name)
    launch = int(np.flatnonzero(tr.launches["region"] == r.index)[0])
    return r.index, launch


B2, B1 = Block(32, 8), Block(256)


def test_traced_copy_kernel(traced):
    tr, is_store = traced
    region, launch = _region(tr, "copy")
    wt = form_warps_auto(tr, region, launch, B2, B1, is_store)
    assert (wt.grid_dims, wt.grid_x, wt.grid_y) == (2, 64, 8)
    assert wt.n_threads == 512 and wt.n_warps == 16 and wt.n_insts == 32
    assert (wt.divergent_insts, wt.unmapped_events, wt.dependence) == (0, 0, None)
    ev = wt.events
    # thread (i, j) = i * 64 + j; block 32x8: block bx = j // 32, warp = bx * 8 + i
    assert np.array_equal(ev["thread"] % 64 % 32, ev["lane"])
    assert np.array_equal((ev["thread"] % 64 // 32) * 8 + ev["thread"] // 64, ev["warp"])
    # every thread: k 0 = load A[i][j], k 1 = store B[i][j]
    kinds = {m.id: m.kind for m in tr.header.mem}
    assert {kinds[int(s)] for s in ev["sid"][ev["k"] == 0]} == {"load"}
    assert {kinds[int(s)] for s in ev["sid"][ev["k"] == 1]} == {"store"}
    a = tr.header.globals["A"]
    loads = ev[ev["k"] == 0]
    assert np.array_equal(loads["addr"], a + 4 * loads["thread"])


def test_traced_dependence_is_reported_and_grid_falls_back(traced):
    tr, is_store = traced
    region, launch = _region(tr, "mirror")
    wt2 = form_warps(tr, region, launch, 2, B2, is_store)
    assert wt2.dependence is not None
    assert wt2.dependence.addresses == 8 * 64
    texts = {tr.header.mem[s].base for s in wt2.dependence.store_ids + wt2.dependence.other_ids}
    assert any(t.startswith("D[i][j]") for t in texts)
    auto = form_warps_auto(tr, region, launch, B2, B1, is_store)
    assert auto.grid_dims == 1 and auto.dependence is None


def test_traced_reduction_is_1d(traced):
    tr, is_store = traced
    region, launch = _region(tr, "reduce")
    auto = form_warps_auto(tr, region, launch, B2, B1, is_store)
    assert auto.grid_dims == 1 and auto.n_threads == 8 and auto.block == B1


def test_traced_loop_carried_dependence_is_reported(traced):
    tr, is_store = traced
    region, launch = _region(tr, "carried")
    auto = form_warps_auto(tr, region, launch, B2, B1, is_store)
    wt2 = form_warps(tr, region, launch, 2, B2, is_store)
    assert wt2.dependence is not None
    assert auto.grid_dims == 1


def test_traced_divergence(traced):
    """Odd j loads A and stores B, even j stores C. The compiler sinks both stores into one
    store after the branch, so lanes run different sequences: odd lanes (load A, store),
    even lanes (store). Every warp runs two warp instructions: the load, masked to the 16 odd
    lanes (divergent), then the store by all 32 lanes, issued where the odd lanes reach it
    (k = 1) although the even lanes run it as their first event. The k-th events of a warp
    (load for odd lanes, store for even lanes) are never merged."""
    tr, is_store = traced
    region, launch = _region(tr, "branchy")
    wt = form_warps(tr, region, launch, 2, B2, is_store)
    assert wt.n_warps == 16 and wt.n_insts == 32
    assert wt.divergent_insts == 16
    ev = wt.events
    bounds = np.r_[wt.inst_start, len(ev)]
    kinds = {m.id: m.kind for m in tr.header.mem}
    a, b, c = (tr.header.globals[x] for x in "ABC")
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        inst = ev[lo:hi]
        assert len(set(inst["sid"])) == 1 and len(set(inst["warp"])) == 1
        assert list(inst["lane"]) == sorted(inst["lane"])
        assert int(inst["k"][0]) == i % 2
        cell = inst["thread"].astype(np.int64) * 4
        if i % 2 == 0:  # load A[i][j], odd lanes only
            assert kinds[int(inst["sid"][0])] == "load"
            assert list(inst["lane"]) == list(range(1, 32, 2))
            assert np.array_equal(inst["addr"].astype(np.int64), a + cell)
        else:  # the sunk store: C[i][j] for even lanes, B[i][j] for odd ones
            assert kinds[int(inst["sid"][0])] == "store"
            assert list(inst["lane"]) == list(range(32))
            odd = inst["lane"] % 2 == 1
            assert np.array_equal(inst["addr"][odd].astype(np.int64), b + cell[odd])
            assert np.array_equal(inst["addr"][~odd].astype(np.int64), c + cell[~odd])


def test_traced_hoisted_load_unmapped(traced):
    tr, is_store = traced
    region, launch = _region(tr, "hoist")
    wt = form_warps_auto(tr, region, launch, B2, B1, is_store)
    assert wt.grid_dims == 2
    assert wt.unmapped_events == 8  # x[i], once per row, outside the x loop
    assert wt.n_threads == 512 and wt.n_insts == 16


def test_two_x_loops_interleave_into_one_thread():
    """A forced 2-D grid over `for i { for j < 4: load A[i][j]; for j < 4: store B[i][j] }`:
    both depth-2 loops map to x, so thread (i, j) runs load A[i][j] (k 0) then store B[i][j]
    (k 1), although its two events are far apart in the trace."""
    ny, nx = 2, 4
    ev = []
    for i in range(ny):
        ev.append(_mark(0, i))
        for lp, sid, base in ((1, 0, A_BASE), (2, 1, B_BASE)):
            for j in range(nx):
                ev.append(_mark(lp, j))
                ev.append(_mem(sid, base + 4 * (i * nx + j)))
            ev.append(_exit(lp))
    loops = (_loop(0, 1, -1), _loop(1, 2, 0), _loop(2, 2, 0))
    tr = FakeTrace(_Header(loops), np.array(ev, np.uint64))
    assert not perfectly_nested(tr, 0, 0, IS_STORE)  # two x loops: not automatic 2-D
    wt = form_warps(tr, 0, 0, 2, Block(32, 1), IS_STORE)
    got = [
        tuple(int(e[n]) for n in ("warp", "k", "lane", "sid", "thread", "addr")) for e in wt.events
    ]
    assert got == expected_events(ny, nx, Block(32, 1))
    assert wt.divergent_insts == 0 and wt.n_threads == ny * nx


@pytest.mark.parametrize("seed", range(8))
def test_dependence_matches_a_dictionary_reference(seed):
    """Shared written addresses and the instructions touching them, against a brute force:
    per address, the threads that touch it, kept when it is written and spans two threads.
    Seeds 6 and 7 write tens of thousands of distinct addresses (the table grows)."""
    from cgpredict.warps import EVENT_DTYPE, _dependence

    rng = np.random.default_rng(seed)
    n, n_sids = (4000, 5) if seed < 6 else (60000, 5)
    ev = np.zeros(n, EVENT_DTYPE)  # the thread given as (x, y) = (thread % 7, thread // 7)
    ev["addr"] = rng.integers(0, 300 + 400 * seed if seed < 6 else 200000, n) * 4
    ev["thread"] = rng.integers(0, 40, n) if seed % 2 else np.arange(n) // 8
    ev["sid"] = rng.integers(0, n_sids, n)
    is_store = np.array([False, True, False, True, False])
    threads: dict[int, set[int]] = {}
    written = set()
    for a, t, s in zip(ev["addr"].tolist(), ev["thread"].tolist(), ev["sid"].tolist()):
        threads.setdefault(a, set()).add(t)
        if is_store[s]:
            written.add(a)
    shared = {a for a in written if len(threads[a]) > 1}
    sids = {s for a, s in zip(ev["addr"].tolist(), ev["sid"].tolist()) if a in shared}
    th = ev["thread"].astype(np.int64)
    dep = _dependence(ev["addr"], th % 7, th // 7, 7, ev["sid"], is_store)
    if not shared:
        assert dep is None
        return
    assert dep.addresses == len(shared)
    assert dep.store_ids == tuple(sorted(s for s in sids if is_store[s]))
    assert dep.other_ids == tuple(sorted(s for s in sids if not is_store[s]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("block", [Block(32, 4), Block(16, 16), Block(64, 2), Block(8, 1)])
def test_gather_and_scatter_give_the_same_warps(seed, block):
    """Threads of contiguous events with random lengths (cut-short sequences of one static
    instruction order): the lane-by-lane gather (starts known) and the counting-sort scatter
    (starts unknown) write the same events and instruction starts, on grids with edges."""
    from cgpredict.warp_order import ThreadEvents, order_events, thread_events

    rng = np.random.default_rng(seed)
    gx, gy = int(rng.integers(20, 90)), int(rng.integers(1, 9))
    seq = rng.integers(0, 5, 12).astype(np.uint16)  # every thread runs a prefix of it
    tx, ty, sid, addr = [], [], [], []
    for y in range(gy):
        for x in range(gx):
            c = int(rng.integers(0, 13))
            tx += [x] * c
            ty += [y] * c
            sid += list(seq[:c])
            addr += list(rng.integers(0, 1 << 20, c))
    tx, ty = np.array(tx, np.int64), np.array(ty, np.int64)
    sid, addr = np.array(sid, np.uint16), np.array(addr, np.uint64)
    threads = thread_events(tx, ty, gx, gy)
    assert threads.starts is not None
    gathered = order_events(tx, ty, sid, addr, gx, gy, block, threads)
    scattered = order_events(tx, ty, sid, addr, gx, gy, block,
                             ThreadEvents(threads.counts, None))
    for col in ("addr", "lane", "inst_start", "inst_warp", "inst_k", "inst_sid"):
        assert np.array_equal(getattr(gathered, col), getattr(scattered, col)), col
    assert (gathered.n_threads, gathered.n_warps, gathered.divergent) == (
        scattered.n_threads, scattered.n_warps, scattered.divergent)


def test_thread_events_finds_split_threads():
    from cgpredict.warp_order import thread_events

    tx, ty = np.array([0, 1, 0], np.int64), np.zeros(3, np.int64)
    t = thread_events(tx, ty, 2, 1)
    assert t.counts.tolist() == [2, 1] and t.starts is None
    t = thread_events(np.array([0, 0, 1]), np.zeros(3, np.int64), 2, 1)
    assert t.starts.tolist() == [0, 2]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("old, new", [(Block(32, 8), Block(64, 2)), (Block(128, 1), Block(32, 4)),
                                      (Block(32, 32), Block(32, 1)), (Block(64, 4), Block(64, 4))])
def test_regrouped_warps_equal_warps_formed_anew(seed, old, new):
    """Blocks a multiple of 32 wide: the warps of one shape regrouped for another (no new
    gather) equal the warps formed for it from the events, on grids with ragged edges and with
    divergent lanes (threads of different lengths and instruction orders)."""
    from cgpredict.warp_order import order_events, thread_events
    from cgpredict.warp_regroup import regroup_warps

    rng = np.random.default_rng(seed)
    gx, gy = int(rng.integers(20, 150)), int(rng.integers(1, 12))
    tx, ty, sid, addr = [], [], [], []
    for y in range(gy):
        for x in range(gx):
            c = int(rng.integers(0, 9))
            seq = rng.integers(0, 4, c) if seed % 2 else np.arange(c) % 3
            tx += [x] * c
            ty += [y] * c
            sid += list(seq)
            addr += list(rng.integers(0, 1 << 20, c))
    tx, ty = np.array(tx, np.int64), np.array(ty, np.int64)
    sid, addr = np.array(sid, np.uint16), np.array(addr, np.uint64)
    threads = thread_events(tx, ty, gx, gy)
    want = order_events(tx, ty, sid, addr, gx, gy, new, threads)
    before = order_events(tx, ty, sid, addr, gx, gy, old, threads)
    got, src = regroup_warps(before, gx, gy, old, new)
    for col in ("addr", "lane", "inst_start", "inst_warp", "inst_k", "inst_sid"):
        assert np.array_equal(getattr(got, col), getattr(want, col)), col
    # src: each instruction's index before, with its static id, k and events
    assert np.array_equal(before.inst_sid[src], got.inst_sid)
    assert np.array_equal(before.inst_k[src], got.inst_k)
    ends = np.r_[before.inst_start[1:], len(before.addr)]
    assert np.array_equal(np.concatenate([before.addr[before.inst_start[i]:ends[i]] for i in src]),
                          got.addr)
    assert (got.n_threads, got.n_warps, got.divergent) == (
        want.n_threads, want.n_warps, want.divergent)


def test_regroup_refuses_blocks_narrower_than_a_warp():
    from cgpredict.warp_order import OrderedEvents
    from cgpredict.warp_regroup import regroup_warps

    none = np.zeros(1, np.int64)
    ev = OrderedEvents(np.zeros(1, np.uint64), np.zeros(1, np.uint8), none, none, none, none,
                       1, 1, 0)
    assert regroup_warps(ev, 64, 4, Block(32, 8), Block(16, 16)) is None
    assert regroup_warps(ev, 64, 4, Block(16, 16), Block(32, 8)) is None


@pytest.mark.parametrize("seed", range(12))
def test_a_store_outside_the_x_loop_is_found_as_the_mapped_events_miss_it(seed):
    """perfectly_nested's one-pass check (``_store_outside_depth2``) against map_kernel's
    2-D mapping, which keeps exactly the memory events inside an open depth-2 iteration:
    a store lies outside one when the mapping keeps fewer store events than the stream has.
    Random nests of depth-1 (loop 0) and depth-2 (loop 1) iterations with events at both
    depths (stores outside for odd seeds only), exits of the depth-2 loop or not."""
    from cgpredict.warps import _loop_sets, _store_outside_depth2, map_kernel

    rng = np.random.default_rng(seed)
    is_store = np.array([False, True, False, True])
    outside = (0, 2, 1, 3) if seed % 2 else (0, 2)  # static ids an outer event may have

    def event(sids):
        return (int(rng.choice(sids)) << 48) | int(rng.integers(0, 1 << 20)) * 4

    parts = []
    for i in range(int(rng.integers(1, 6))):
        parts.append(_mark(0, i))
        parts += [event(outside) for _ in range(int(rng.integers(0, 2)))]
        for j in range(int(rng.integers(0, 5))):
            parts.append(_mark(1, j))
            parts += [event((0, 1, 2, 3)) for _ in range(int(rng.integers(0, 4)))]
        if rng.random() < 0.6:
            parts.append(_exit(1))
        parts += [event(outside) for _ in range(int(rng.integers(0, 2)))]
    ev = np.array(parts, np.uint64)
    in_d1, in_d2 = _loop_sets([0], [1])
    _, _, sid, _, _, _, _ = map_kernel(ev, in_d1, in_d2, 2)
    stores = int(is_store[(ev[(ev >> 48) < 4] >> 48).astype(np.int64)].sum())
    mapped = int(is_store[sid.astype(np.int64)].sum())
    assert _store_outside_depth2(ev, in_d1, in_d2, is_store) == (mapped < stores)
