"""kernel.launch_parts: what the launches of a region share within an analysis. The oracle:
the same analysis with every part found afresh for every launch (``kept_part`` replaced by
a plain call), report for report and launch profile for launch profile (==, not approx), and
the counts each part reads derived by hand on a toy header."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from cgpredict.block import Block
from cgpredict.kernel import launch
from cgpredict.kernel.launch_parts import body_counts, kept_part, mem_counts
from cgpredict.memory.transactions import InstrMemStats, MemoryAnalysis
from cgpredict.parallelism import Parallelism, ThreadBodies
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GS_OPTS = RunOptions(work_sizes={"NI": 128, "NJ": 128}, trace_sizes={"NI": 64, "NJ": 64})


@dataclass
class _Mem:
    block: int


@dataclass
class _Header:
    mem: list


def _analysis(sids: tuple[int, ...]) -> MemoryAnalysis:
    return MemoryAnalysis(tuple(InstrMemStats(s, (1, 0, 0), (1, 0, 0), (0, 0, 0)) for s in sids),
                          0, 0)


def test_counts_read_by_hand():
    """mem_counts: the count of each memory instruction's block, in the analysis' order (None
    for a block the launch does not count); body_counts: each body's blocks in turn."""
    header = _Header([_Mem(3), _Mem(5), _Mem(3)])
    per_thread = {3: 2.0, 7: 9.0}
    assert mem_counts(header, _analysis((2, 1)), per_thread) == (2.0, None)
    bodies = ThreadBodies(bodies=((Parallelism(), (7, 3)), (Parallelism(), (5,))))
    assert body_counts(bodies, per_thread) == (9.0, 2.0, None)


def test_kept_part_keys():
    """One find per (part, memory analysis, counts); another analysis object, other counts or
    another part each find again; the value is the one found."""
    calls = []

    def find(v):
        return lambda: calls.append(v) or v

    kept: dict = {}
    a, b = _analysis((0,)), _analysis((0,))
    assert kept_part(kept, "memory", a, (1.0,), find(1)) == 1
    assert kept_part(kept, "memory", a, (1.0,), find(2)) == 1
    assert kept_part(kept, "memory", b, (1.0,), find(3)) == 3
    assert kept_part(kept, "memory", a, (2.0,), find(4)) == 4
    assert kept_part(kept, "chain", a, (1.0,), find(5)) == 5
    assert calls == [1, 3, 4, 5]


@pytest.mark.usefixtures("compiler")
def test_kept_parts_equal_fresh_ones(monkeypatch):
    """gramschmidt: gs_k3 launched once per column with its host blocks' counts different in
    every launch. Its memory profile and critical path are found once per analysis, not per
    launch, and every analysis (baseline, two block shapes, a transposition) equals the same
    analysis with both found afresh for every launch; the launch rows are kept across the
    analyses (the same object)."""
    found = []
    kept_fn = launch.kept_part

    def counting(kept, part, mem, counts, find):
        return kept_fn(kept, part, mem, counts, lambda: found.append(part) or find())

    changes = ({}, {"block": Block(64, 1)}, {"block": Block(32, 1)}, {"transpose": ("A",)})
    with prepare(POLYBENCH / "gramschmidt.c", GS_OPTS) as prep:
        monkeypatch.setattr(launch, "kept_part", counting)
        kept = [prep.analyze(dataclasses.replace(GS_OPTS, **c)) for c in changes]
        rows = dict(prep.memo.rows)
        launches = sum(len(k.launch_profiles) for k in kept[0].kernels)
        assert launches >= 64 and found.count("memory") < launches  # 4 analyses: 4 x launches fresh
        assert found.count("compute chain") < launches
        monkeypatch.setattr(launch, "kept_part", lambda kept, part, mem, counts, find: find())
        for c, rep in zip(changes, kept):
            prep.memo.kernels.clear()  # the reports again, not from the memo
            fresh = prep.analyze(dataclasses.replace(GS_OPTS, **c))
            assert [(k.total_ms, k.launch_profiles, k.mem, k.warnings, k.energy_mj)
                    for k in rep.kernels] == \
                [(k.total_ms, k.launch_profiles, k.mem, k.warnings, k.energy_mj)
                 for k in fresh.kernels], c
        assert prep.memo.rows.keys() == rows.keys()
        assert all(prep.memo.rows[k] is v for k, v in rows.items())


def test_traced_xy_is_kept_per_trace():
    """_traced_xy (launch row's mean iterations an entry of its innermost mapped loop, and
    its entries on a 2-D grid) by hand on a toy trace; a second call reads it from
    ``lanes_kept``, and a different trace object is worked afresh, never served the first's."""
    from types import SimpleNamespace

    import numpy as np

    from cgpredict.kernel.launch_parts import _traced_xy

    def trace(iters):
        return SimpleNamespace(loop_entries=np.array([[1, 4], [2, 8]]),
                               loop_iters=np.array([[3, iters], [5, 40]]))

    t1, t2 = trace(12), trace(20)
    ctx = SimpleNamespace(d1=[0], d2=[1], grid=2, trace=t1, lanes_kept={})
    assert _traced_xy(ctx, 0) == (3.0, 4.0)  # 12 iterations over 4 entries of loop 1
    assert len(ctx.lanes_kept) == 1 and _traced_xy(ctx, 0) == (3.0, 4.0)
    ctx.trace = t2
    assert _traced_xy(ctx, 0) == (5.0, 4.0)
    ctx.grid = 1
    assert _traced_xy(ctx, 1) == (2.5, 1.0)  # loop 0 of row 1: 5 / 2, Y = 1 on a 1-D grid


def test_thread_weights_are_kept_per_counts_and_trace(monkeypatch):
    """_kept_weights works u(t) of eq. (B5) once per (launch counts, trace, records, traced
    grid): a second block shape asking with the same counts is served the first answer; other
    counts, or another trace, are worked afresh."""
    from types import SimpleNamespace

    from cgpredict.kernel import launch_parts

    calls = []

    def fake(ctx, trips, counts, txy, own):
        calls.append((counts, own))
        return [len(calls)]

    monkeypatch.setattr(launch_parts, "thread_weights", fake)
    c1, c2 = SimpleNamespace(), SimpleNamespace()
    ctx = SimpleNamespace(trace=SimpleNamespace(), lanes_kept={})
    assert launch_parts._kept_weights(ctx, None, c1, (4, 1), 3) == [1]
    assert launch_parts._kept_weights(ctx, None, c1, (4, 1), 3) == [1] and len(calls) == 1
    assert launch_parts._kept_weights(ctx, None, c2, (4, 1), 3) == [2]
    assert launch_parts._kept_weights(ctx, None, c1, (4, 1), -1) == [3]
    ctx.trace = SimpleNamespace()
    assert launch_parts._kept_weights(ctx, None, c1, (4, 1), 3) == [4]


def test_may_carry_against_a_scan_of_earlier_launches():
    """launch_parts._may_carry (the first launch of each array's touchers) against the scan
    carried_share does (a launch before ``row`` whose region touched the array), on random
    host loops of three regions over arrays A, B, C, and by hand: launches of regions
    0, 1, 0 with 0 touching A and 1 touching B; region 0's second launch (row 2) loads A,
    which row 0 touched; region 1's one launch (row 1) loads B, which none before touched;
    and row 2 finds nothing to carry once A is found whole in the L2 (``res``)."""
    import random
    from types import SimpleNamespace

    import numpy as np

    from cgpredict.kernel.launch_parts import _may_carry

    def trace_of(regions):
        return SimpleNamespace(launches={"region": np.array(regions, np.int32)})

    def res_of(rows, whole=()):
        return {r: tuple(SimpleNamespace(array=a) for a in whole) for r in rows}

    touched = {0: frozenset({"A"}), 1: frozenset({"B"})}
    tr = trace_of([0, 1, 0])
    assert _may_carry(tr, np.array([0, 2]), res_of([0, 2]), touched, frozenset({"A"}))
    assert not _may_carry(tr, np.array([1]), res_of([1]), touched, frozenset({"B"}))
    assert not _may_carry(tr, np.array([0, 2]), res_of([0, 2], "A"), touched,
                          frozenset({"A"}))
    rnd = random.Random(3)
    for _ in range(300):
        regions = [rnd.randrange(3) for _ in range(rnd.randrange(1, 7))]
        touched = {r: frozenset(a for a in "ABC" if rnd.random() < 0.4) for r in range(3)}
        region = rnd.randrange(3)
        rows = np.flatnonzero(np.array(regions) == region)
        if not len(rows):
            continue
        mine = frozenset(a for a in touched[region] if rnd.random() < 0.7)
        res = {int(r): tuple(SimpleNamespace(array=a) for a in mine if rnd.random() < 0.3)
               for r in rows}
        want = any(
            any(a in touched[regions[p]] for p in range(int(row)))
            for row in rows for a in mine - {x.array for x in res[int(row)]}
        )
        assert _may_carry(trace_of(regions), rows, res, touched, mine) == want
