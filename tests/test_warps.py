"""Tests of cgpredict.warps (SPEC §2.2): pseudo-threads -> blocks -> pseudo-warps -> warp
memory instructions.

Oracles are computed by hand (or by a plain Python loop over the iteration space): thread id
= y * grid_x + x, block = (x // bx, y // by) in row-major order, thread-in-block = (y % by) * bx
+ x % bx, warp = block * warps_per_block + tib // 32, lane = tib % 32, and k = the rank of an
event among its thread's events in program order."""

from __future__ import annotations

import dataclasses

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

from cgpredict.block import Block, MappingError
from cgpredict.frontend.tracefile import TAG_BEGIN, TAG_END
from cgpredict.frontend.tracer import TraceOptions, trace_program
from cgpredict.warps import (
    WARP_SIZE,
    form_warps,
    form_warps_auto,
    marked_loop_gone,
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



def nest_trace(ny: int, nx: int, hoisted: bool = False) -> FakeTrace:
    """for i < ny { [load X[i]] for j < nx { load A[i][j]; store B[i][j] } } (sids 0, 1, 2)."""
    ev = [(TAG_BEGIN << 48)]
    for i in range(ny):
        ev.append(mark(0, i))
        if hoisted:
            ev.append(mem_event(2, 0x30000 + 4 * i))
        for j in range(nx):
            ev.append(mark(1, j))
            ev.append(mem_event(0, A_BASE + 4 * (i * nx + j)))
            ev.append(mem_event(1, B_BASE + 4 * (i * nx + j)))
        ev.append(loop_exit(1))
    ev.append(loop_exit(0))
    ev.append(TAG_END << 48)
    return FakeTrace(Header((loop_info(0, 1, -1), loop_info(1, 2, 0))), np.array(ev, np.uint64))




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
        Header((loop_info(0, 1, -1),)),
        np.array([mark(0, 0), mem_event(0, A_BASE), loop_exit(0)], np.uint64),
    )
    with pytest.raises(MappingError, match="2-D grid needs two nested loops"):
        form_warps(one_loop, 0, 0, 2, Block(32, 8), IS_STORE)
    no_loop = FakeTrace(Header(()), np.array([mem_event(0, A_BASE)], np.uint64))
    with pytest.raises(MappingError, match="no loop"):
        form_warps(no_loop, 0, 0, 1, Block(256), IS_STORE)


def test_a_function_kernel_without_a_loop_is_one_thread():
    events = np.array([mem_event(0, A_BASE + 4 * k) for k in range(3)], np.uint64)
    wt = form_warps(FakeTrace(Header((), function_kernel=True), events), 0, 0, 2, Block(32, 8),
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
        ev.append(mark(0, i))
        for j in range(nx):
            ev.append(mark(1, j))
            ev.append(mem_event(0, A_BASE + 4 * (i * nx + nx - 1 - j)))
            ev.append(mem_event(1, A_BASE + 4 * (i * nx + j)))
        ev.append(loop_exit(1))
    tr = FakeTrace(Header((loop_info(0, 1, -1), loop_info(1, 2, 0))), np.array(ev, np.uint64))
    wt2 = form_warps(tr, 0, 0, 2, Block(32, 2), IS_STORE)
    assert wt2.dependence is not None
    assert wt2.dependence.addresses == ny * nx
    assert wt2.dependence.store_ids == (1,) and wt2.dependence.other_ids == (0,)
    auto = form_warps_auto(tr, 0, 0, Block(32, 2), Block(256), IS_STORE)
    assert auto.grid_dims == 1 and auto.dependence is None and auto.block == Block(256)


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
        ev.append(mark(0, i))
        for lp, sid, base in ((1, 0, A_BASE), (2, 1, B_BASE)):
            for j in range(nx):
                ev.append(mark(lp, j))
                ev.append(mem_event(sid, base + 4 * (i * nx + j)))
            ev.append(loop_exit(lp))
    loops = (loop_info(0, 1, -1), loop_info(1, 2, 0), loop_info(2, 2, 0))
    tr = FakeTrace(Header(loops), np.array(ev, np.uint64))
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


@pytest.mark.parametrize("seed", range(6))
def test_gather_equals_scatter_over_many_tiles(seed):
    """Threads longer than the gather's tile of program positions (_TILE), of uneven
    lengths, on grids with edges, some with one lane that runs another static instruction:
    the tiled gather and the counting-sort scatter (the reference) agree on ok, and where
    ok on every column."""
    from cgpredict.warp_order import _TILE, _warp_gather, _warp_sort, blocks_across

    rng = np.random.default_rng(seed)
    gx, gy = int(rng.integers(20, 70)), int(rng.integers(1, 5))
    block = [Block(32, 8), Block(64, 2), Block(16, 4), Block(128, 1)][seed % 4]
    nbx, wpb = blocks_across(gx, block)
    counts = rng.integers(0, 3 * _TILE + 7, gx * gy).astype(np.int64)
    if seed % 3 == 0:
        counts[:] = 2 * _TILE + 5  # every lane as long: whole warps
    starts = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
    seq = rng.integers(0, 5, int(counts.max())).astype(np.uint16)
    sid = np.concatenate([seq[:c] for c in counts]).astype(np.uint16)
    if seed % 2:
        sid[int(rng.integers(0, len(sid)))] = 9  # one lane off the others' instruction
    addr = rng.integers(0, 1 << 40, len(sid)).astype(np.uint64)
    tx = np.repeat(np.arange(gx * gy) % gx, counts).astype(np.int64)
    ty = np.repeat(np.arange(gx * gy) // gx, counts).astype(np.int64)
    outs = []
    for run in (lambda ol, oa: _warp_gather(sid, addr, counts, starts, gx, block.x, block.y,
                                            nbx, wpb, ol, oa),
                lambda ol, oa: _warp_sort(tx, ty, sid, addr, counts, gx, block.x, block.y,
                                          nbx, wpb, ol, oa)):
        ol, oa = np.zeros(len(sid), np.uint8), np.zeros(len(sid), np.uint64)
        (inst, ok) = run(ol, oa)
        outs.append((ok, inst, ol, oa))
    (ok_g, inst_g, ol_g, oa_g), (ok_s, inst_s, ol_s, oa_s) = outs
    assert ok_g == ok_s == (seed % 2 == 0)
    if ok_g:
        assert all(np.array_equal(a, b) for a, b in zip(inst_g, inst_s))
        assert np.array_equal(ol_g, ol_s) and np.array_equal(oa_g, oa_s)


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


def test_a_regrouped_trace_moves_its_events_on_first_read():
    """form_warps' second block shape (a multiple of 32 wide) regroups the first one's warps
    with the events left where they are: the count is known, nothing is copied until
    ``addr`` or ``lane`` is read, and then both equal the warps formed anew for that shape
    and regroup_warps' eager copy."""
    from cgpredict.warp_order import order_events, thread_events
    from cgpredict.warp_regroup import MovedEvents, regroup_lazily, regroup_warps
    from cgpredict.warps import WarpTrace

    rng = np.random.default_rng(3)
    gx, gy = 96, 6
    tx = np.repeat(np.tile(np.arange(gx), gy), 3)
    ty = np.repeat(np.repeat(np.arange(gy), gx), 3)
    sid = np.tile(np.arange(3), gx * gy).astype(np.uint16)
    addr = rng.integers(0, 1 << 20, len(tx)).astype(np.uint64)
    threads = thread_events(tx, ty, gx, gy)
    first = order_events(tx, ty, sid, addr, gx, gy, Block(32, 2), threads)
    lazy, _ = regroup_lazily(first, gx, gy, Block(32, 2), Block(64, 3))
    assert isinstance(lazy.addr, MovedEvents) and lazy.addr is lazy.lane
    wt = WarpTrace(2, Block(64, 3), gx, gy, lazy.addr, lazy.lane, lazy.inst_start,
                   lazy.inst_warp, lazy.inst_k, lazy.inst_sid, lazy.n_threads, lazy.n_warps,
                   lazy.divergent, 0, None)
    assert wt.n_events == len(addr)
    assert lazy.addr._moved is None  # nothing copied yet
    want = order_events(tx, ty, sid, addr, gx, gy, Block(64, 3), threads)
    eager, _ = regroup_warps(first, gx, gy, Block(32, 2), Block(64, 3))
    assert np.array_equal(wt.lane, want.lane) and np.array_equal(wt.addr, want.addr)
    assert np.array_equal(eager.addr, want.addr) and np.array_equal(eager.lane, want.lane)
    assert isinstance(wt.__dict__["_addr_column"], np.ndarray)  # kept once read


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
        parts.append(mark(0, i))
        parts += [event(outside) for _ in range(int(rng.integers(0, 2)))]
        for j in range(int(rng.integers(0, 5))):
            parts.append(mark(1, j))
            parts += [event((0, 1, 2, 3)) for _ in range(int(rng.integers(0, 4)))]
        if rng.random() < 0.6:
            parts.append(loop_exit(1))
        parts += [event(outside) for _ in range(int(rng.integers(0, 2)))]
    ev = np.array(parts, np.uint64)
    in_d1, in_d2 = _loop_sets([0], [1])
    _, _, sid, _, _, _, _ = map_kernel(ev, in_d1, in_d2, 2)
    stores = int(is_store[(ev[(ev >> 48) < 4] >> 48).astype(np.int64)].sum())
    mapped = int(is_store[sid.astype(np.int64)].sum())
    assert _store_outside_depth2(ev, in_d1, in_d2, is_store) == (mapped < stores)


# eq. (MG0): a marked loop of one trip that the compiler removed -------------------------------

SERIAL_C = """int main(void)
{
  float x = 1.0f;
#pragma cgp kernel chain grid=1
  for (int i = 0; i < 1; i++) {
    for (int k = 0; k < 4; k++)
      x = x * 0.5f + 1.0f;
    out[i] = x;
  }
}
"""


def _serial_trace(loop_line: int) -> FakeTrace:
    """The region of SERIAL_C (marked ``for`` on line 5) with one depth-1 loop on
    ``loop_line`` running 4 iterations, one store after it."""
    lp = dataclasses.replace(loop_info(0, 1, -1), line=loop_line)
    ev = [(TAG_BEGIN << 48)] + [mark(0, k) for k in range(4)] + [loop_exit(0)]
    ev += [mem_event(1, B_BASE), (TAG_END << 48)]
    return FakeTrace(Header((lp,), source_text=SERIAL_C, region_line=5),
                     np.array(ev, np.uint64))


def test_a_removed_marked_loop_is_refused_not_mapped():
    """By hand: the only loop left is the k loop on line 6, after the marked header (line 5),
    so the compiler removed the one-trip i loop; mapping k would make 4 threads of a serial
    recurrence: a one-line MappingError naming both lines instead (eq. (MG0))."""
    assert marked_loop_gone(_serial_trace(6), 0) == 6
    with pytest.raises(MappingError, match=r"loop marked at line 5 .* loop at line 6"):
        form_warps(_serial_trace(6), 0, 0, 1, Block(256, 1), IS_STORE)


def test_a_kept_marked_loop_is_mapped():
    """The same region whose loop sits on the marked header's line is the grid: 4 threads
    wide (the store after the loop belongs to none of them)."""
    assert marked_loop_gone(_serial_trace(5), 0) is None
    wt = form_warps(_serial_trace(5), 0, 0, 1, Block(256, 1), IS_STORE)
    assert (wt.grid_dims, wt.grid_x) == (1, 4)


def test_a_loop_line_from_an_inlined_function_is_no_evidence():
    """A loop whose least header line lies past the region's text (an inlined helper defined
    after it: blackscholes's cnd inlined into its loop gives line 34 for a loop marked on
    52) proves nothing: the region is mapped, not refused (eq. (MG0))."""
    tr = _serial_trace(6)
    region = tr.header.region(0)
    far = dataclasses.replace(tr.header.loops[0], line=10**6 + 1)
    tr = FakeTrace(dataclasses.replace(tr.header, loops=(far,)), tr.events)
    assert region.end_line < far.line and marked_loop_gone(tr, 0) is None
