"""Tests of cgpredict.warps (SPEC §2.2): pseudo-threads -> blocks -> pseudo-warps -> warp
memory instructions.

Oracles are computed by hand (or by a plain Python loop over the iteration space): thread id
= y * grid_x + x, block = (x // bx, y // by) in row-major order, thread-in-block = (y % by) * bx
+ x % bx, warp = block * warps_per_block + tib // 32, lane = tib % 32, and k = the rank of an
event among its thread's events in program order."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from cgpredict.instrument.memtrace import LoopInfo
from cgpredict.tracefile import TAG_BEGIN, TAG_END, TAG_EXIT, TAG_LOOP
from cgpredict.tracer import TraceOptions, trace_program
from cgpredict.warps import (WARP_SIZE, Block, MappingError, form_warps, form_warps_auto,
                             perfectly_nested)

# --------------------------------------------------------------------------- Block.parse


@pytest.mark.parametrize("text, x, y", [("32x8", 32, 8), ("256", 256, 1), ("16X16", 16, 16),
                                         ("1x1", 1, 1), ("1024x1", 1024, 1)])
def test_block_parse(text, x, y):
    b = Block.parse(text)
    assert (b.x, b.y, b.threads) == (x, y, x * y)
    assert str(b) == f"{x}x{y}"
    assert Block.parse(str(b)) == b


@pytest.mark.parametrize("text", ["", "x", "axb", "32x", "x8", "0x8", "32x0", "-32x8",
                                  "32x8x2", "3.5x2", "32*8"])
def test_block_parse_rejects(text):
    with pytest.raises(MappingError, match="block shape"):
        Block.parse(text)


# --------------------------------------------------------------------------- synthetic traces


@dataclass(frozen=True)
class _Header:
    loops: tuple


@dataclass(frozen=True)
class FakeTrace:
    """The part of a Trace that warp formation reads: loops and one launch's events."""

    header: _Header
    events: np.ndarray = field(repr=False)

    def launch_events(self, k: int) -> np.ndarray:
        assert k == 0
        return self.events


def _loop(lid, depth, parent):
    return LoopInfo(id=lid, region=0, function="main", header=f"l{lid}", parent=parent,
                    depth=depth, line=10 + lid, rotated=True)


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


@pytest.mark.parametrize("ny, nx, block", [(4, 64, Block(32, 2)), (8, 64, Block(32, 8)),
                                           (4, 64, Block(16, 4)), (3, 40, Block(32, 2)),
                                           (2, 64, Block(64, 1))])
def test_form_warps_2d_matches_brute_force(ny, nx, block):
    tr = nest_trace(ny, nx)
    wt = form_warps(tr, 0, 0, 2, block, IS_STORE)
    got = [tuple(int(e[n]) for n in ("warp", "k", "lane", "sid", "thread", "addr"))
           for e in wt.events]
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
    one_loop = FakeTrace(_Header((_loop(0, 1, -1),)),
                         np.array([_mark(0, 0), _mem(0, A_BASE), _exit(0)], np.uint64))
    with pytest.raises(MappingError, match="2-D grid needs two nested loops"):
        form_warps(one_loop, 0, 0, 2, Block(32, 8), IS_STORE)
    no_loop = FakeTrace(_Header(()), np.array([_mem(0, A_BASE)], np.uint64))
    with pytest.raises(MappingError, match="no loop"):
        form_warps(no_loop, 0, 0, 1, Block(256), IS_STORE)


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
    """Odd j loads A and stores B, even j stores C: the first memory instruction of every warp
    mixes static instructions (divergent); the second is run by the odd lanes only."""
    tr, is_store = traced
    region, launch = _region(tr, "branchy")
    wt = form_warps(tr, region, launch, 2, B2, is_store)
    assert wt.n_warps == 16
    assert wt.divergent_insts == wt.n_warps
    ev = wt.events
    k1 = ev[ev["k"] == 1]
    assert set(k1["lane"] % 2) == {1}
    # every lane has one event at k = 0
    assert int((ev["k"] == 0).sum()) == 512


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
    got = [tuple(int(e[n]) for n in ("warp", "k", "lane", "sid", "thread", "addr"))
           for e in wt.events]
    assert got == expected_events(ny, nx, Block(32, 1))
    assert wt.divergent_insts == 0 and wt.n_threads == ny * nx
