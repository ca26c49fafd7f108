"""kernel.memory_profile: the per-pattern counts by hand for two instructions, and the rows
kept between launches (``kept``) giving exactly (==, not approx) what fresh rows give."""

from __future__ import annotations

import random
from dataclasses import dataclass

from cgpredict.kernel.memory_profile import memory_profile
from cgpredict.memory.transactions import InstrMemStats, MemoryAnalysis


@dataclass
class _Mem:
    block: int
    kind: str
    base: str = "A"
    file: str = "k.c"
    line: int = 1


@dataclass
class _Header:
    mem: list


@dataclass
class _Trace:
    header: _Header


def test_two_instructions_by_hand():
    """A load, coalesced 3 warp instructions of 6 (2 L2 transactions each) and uncoalesced 3
    (32 each, 16 from DRAM), run twice per thread; a store, coalesced, once per thread."""
    trace = _Trace(_Header([_Mem(0, "load"), _Mem(1, "store", "C")]))
    load = InstrMemStats(0, (3, 3, 0), (6, 96, 0), (0, 48, 0))
    store = InstrMemStats(1, (4, 0, 0), (8, 0, 0), (4, 0, 0), written=(4, 0, 0))
    mem = MemoryAnalysis((load, store), 0, 0)
    reports, patterns, stores = memory_profile(trace, mem, {0: 2.0, 1: 1.0}, 0)
    assert [r.shares for r in reports] == [(0.5, 0.5, 0.0), (1.0, 0.0, 0.0)]
    coal, uncoal, const = patterns
    assert coal.insts == 1.0 + 1.0  # 2 x 0.5 of the load, 1 x 1.0 of the store
    assert coal.l2_trans_per_warp == (1.0 * 6 / 3 + 1.0 * 8 / 4) / 2.0
    assert uncoal.insts == 1.0 and uncoal.l2_trans_per_warp == 32.0
    assert uncoal.dram_trans_per_warp == 16.0 and const.insts == 0.0
    assert stores.coal.insts == 1.0 and stores.write_back_trans == 1.0


def test_requests_are_the_distinct_lines_a_warp_instruction_touches():
    """Eqs. (B2q), (LM): a load of 24-byte struct fields, 24 sectors in 6 lines a warp
    instruction (4 traced), run 3 times per thread: 6 requests a warp instruction; a
    coalesced store of 4 sectors in 1 line: 1, in the stores' view and taken out of the
    loads'."""
    trace = _Trace(_Header([_Mem(0, "load"), _Mem(1, "store", "C")]))
    load = InstrMemStats(0, (0, 4, 0), (0, 96, 0), (0, 96, 0), l2_requests=(0, 24, 0))
    store = InstrMemStats(1, (2, 0, 0), (8, 0, 0), (0, 0, 0), l2_requests=(2, 0, 0))
    _, patterns, stores = memory_profile(trace, MemoryAnalysis((load, store), 0, 0),
                                         {0: 3.0, 1: 1.0}, 0)
    assert patterns[1].l2_requests_per_warp == 6.0 and patterns[0].l2_requests_per_warp == 1.0
    assert stores.coal.l2_requests_per_warp == 1.0


def test_masked_store_lanes_count_as_full_warps():
    """An uncoalesced store whose 10 traced warp instructions have 16 of 32 lanes active
    (fill 0.5: 160 sectors, one a lane), run 4 times per thread: a thread's executions fill
    the work size's warps, so a warp instruction stores 32 sectors, not the traced 16; 8 of
    the traced 16 fresh, so 16 of the full warp's 32."""
    trace = _Trace(_Header([_Mem(0, "store", "S")]))
    store = InstrMemStats(0, (0, 10, 0), (0, 160, 0), (0, 0, 0), fresh=(0, 80, 0),
                          fill=(1.0, 0.5, 1.0), l1_lines=(0, 80, 0))
    _, patterns, stores = memory_profile(trace, MemoryAnalysis((store,), 0, 0), {0: 4.0}, 0)
    assert patterns[1].l2_trans_per_warp == 16.0  # the loads' and the report's view
    assert stores.uncoal.insts == 4.0 and stores.uncoal.l2_trans_per_warp == 32.0
    assert stores.l2_trans == 4.0 * 32 and stores.fresh[1] == 0.5
    # 8 distinct lines a traced warp instruction, 16 a full one, in both views: the loads
    # left once the stores are taken out have none
    assert stores.uncoal.lines_per_warp == 16.0 and patterns[1].lines_per_warp == 16.0


def _random_case(rng: random.Random):
    n = rng.randint(1, 8)
    mems = [_Mem(rng.randrange(4), rng.choice(("load", "store")), f"A{k}") for k in range(n)]
    instrs = []
    for sid in range(n):
        w = tuple(rng.choice((0, rng.randint(1, 50))) for _ in range(3))
        tr = tuple(x * rng.randint(1, 32) for x in w)
        instrs.append(InstrMemStats(sid, w, tr, tuple(t // rng.randint(1, 4) for t in tr),
                                    tuple(x // 2 for x in w), tuple(t // 3 for t in tr)))
    per_thread = {b: rng.random() * 100 for b in range(4)}
    scale = {sid: rng.random() for sid in range(n) if rng.random() < 0.3}
    skip = {sid for sid in range(n) if rng.random() < 0.2}
    restores = frozenset(sid for sid in range(n) if rng.random() < 0.3)
    return _Trace(_Header(mems)), MemoryAnalysis(tuple(instrs), 0, 0), per_thread, skip, \
        restores, scale


def test_kept_rows_give_the_same_profile():
    rng = random.Random(7)
    for _ in range(200):
        trace, mem, per_thread, skip, restores, scale = _random_case(rng)
        fresh = memory_profile(trace, mem, per_thread, 0, skip, restores, scale)
        kept: dict = {}
        first = memory_profile(trace, mem, per_thread, 0, skip, restores, scale, kept)
        again = memory_profile(trace, mem, per_thread, 0, skip, restores, scale, kept)
        assert fresh == first == again
        assert len(kept) == len(mem.instrs)
