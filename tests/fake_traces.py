"""Synthetic traces for the tests: for the pseudo-warp tests (test_warps, test_warp_masked)
the part of a Trace that warp formation reads (its loops and one launch's events), built from
loop markers, loop exits and memory events as the runtime encodes them; for the memory tests
(test_memory, test_inflight) warp traces built from lists of warp instructions."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
from cgpredict.instrument.memtrace import LoopInfo

from cgpredict.block import Block
from cgpredict.frontend.tracefile import TAG_EXIT, TAG_LOOP
from cgpredict.warps import EVENT_DTYPE, WARP_SIZE, WarpTrace


@dataclass(frozen=True)
class Header:
    loops: tuple
    function_kernel: bool = False  # a kernel given by --function (RegionInfo.line == 0)
    ir_text: str = ""  # no IR: no loop counts as one whose remainder runs first
    source_text: str = ""  # no source: the marked loop is not looked for (warps.marked_loop_gone)
    region_line: int = 1  # the line of the marked ``for``

    def region(self, index: int) -> SimpleNamespace:
        return SimpleNamespace(line=0 if self.function_kernel else self.region_line,
                               end_line=0 if self.function_kernel else 10**6)


@dataclass(frozen=True)
class FakeTrace:
    """The part of a Trace that warp formation reads: loops and one launch's events."""

    header: Header
    events: np.ndarray = field(repr=False)

    def launch_events(self, k: int) -> np.ndarray:
        assert k == 0
        return self.events


def loop_info(lid, depth, parent):
    """A loop of region 0 (id ``lid``, nesting ``depth``, ``parent`` loop or -1)."""
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


def mark(loop, idx):
    """The marker of iteration ``idx`` of ``loop``."""
    return (TAG_LOOP << 48) | (loop << 32) | idx


def loop_exit(loop):
    """The marker of ``loop``'s exit."""
    return (TAG_EXIT << 48) | (loop << 32)


def mem_event(sid, addr):
    """A memory event of static instruction ``sid`` at ``addr``."""
    return (sid << 48) | addr


A_BASE, B_BASE = 0x10000, 0x20000  # the arrays of the synthetic kernels
IS_STORE = np.array([False, True, False])  # sids 0, 1, 2: load A, store B, load X


def make_wt(insts) -> WarpTrace:
    """A WarpTrace from [(warp, k, sid, [addresses of lanes 0..n-1])], in any order."""
    rows = []
    for warp, k, sid, addrs in insts:
        for lane, a in enumerate(addrs):
            rows.append((warp, k, lane, sid, warp * WARP_SIZE + lane, a))
    rows.sort()
    ev = np.array(rows, EVENT_DTYPE)
    new = np.r_[True, (ev["warp"][1:] != ev["warp"][:-1]) | (ev["k"][1:] != ev["k"][:-1])]
    warps = sorted({r[0] for r in rows})
    return WarpTrace.from_records(1, Block(32 * (max(warps) + 1)), 32 * (max(warps) + 1), 1, ev,
                                  np.flatnonzero(new), len({r[4] for r in rows}), len(warps))


def strided(base, stride, lanes=32):
    return [base + stride * t for t in range(lanes)]
