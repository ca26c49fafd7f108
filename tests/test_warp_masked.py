"""Tests of divergent warps (cgpredict.warp_masked, SPEC §2.2): a GPU runs a divergent warp
as masked instructions: a warp instruction is the r-th execution of static instruction s by
the lanes of the warp that execute it, and a warp issues its instructions in program order,
each once its last lane has reached it (reconvergence). Oracles: hand counts on small 1-D
kernels and a brute-force reference over random divergent kernels (synthetic traces:
fake_traces.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fake_traces import (
    A_BASE,
    B_BASE,
    IS_STORE,
    FakeTrace,
    Header,
    loop_exit,
    loop_info,
    mark,
    mem_event,
)

from cgpredict.block import Block
from cgpredict.frontend.tracefile import TAG_BEGIN, TAG_END
from cgpredict.memory.issue import transactions
from cgpredict.memory.transactions import COAL, CONST, UNCOAL, classify
from cgpredict.warp_masked import sid_ranks, sid_ranks_sorted
from cgpredict.warps import form_warps

X_BASE, Y_BASE = 0x30000, 0x40000
N_DIV = 100  # threads of the 1-D divergence kernels: warps of 32, 32, 32 and 4 lanes
STORE4 = np.array([False, False, True, True])


def one_d_trace(bodies) -> FakeTrace:
    """1-D kernel `for i { for j < len(inner) { inner } after }`: bodies[i] = (inner, after),
    inner a list (one per j) of lists of (sid, addr), after a list of (sid, addr)."""
    ev = [TAG_BEGIN << 48]
    for i, (inner, after) in enumerate(bodies):
        ev.append(mark(0, i))
        for j, mems in enumerate(inner):
            ev.append(mark(1, j))
            ev += [mem_event(s, a) for s, a in mems]
        if inner:
            ev.append(loop_exit(1))
        ev += [mem_event(s, a) for s, a in after]
    ev += [loop_exit(0), TAG_END << 48]
    return FakeTrace(Header((loop_info(0, 1, -1), loop_info(1, 2, 0))), np.array(ev, np.uint64))


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
        ev.append(mark(0, i))
        for j in range(4):
            ev.append(mark(1, j))
            ev.append(
                mem_event(0, A_BASE + 4 * (4 * i + j))
                if j % 2 == 0
                else mem_event(2, c_base + 4 * (4 * i + j))
            )
        ev.append(loop_exit(1))
        for j in range(4):
            ev.append(mark(2, j))
            ev.append(mem_event(1, B_BASE + 4 * (4 * i + j)))
        ev.append(loop_exit(2))
    tr = FakeTrace(
        Header((loop_info(0, 1, -1), loop_info(1, 2, 0), loop_info(2, 2, 0))),
        np.array(ev, np.uint64),
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
