"""Tests of cgpredict.dddg (SPEC §5): the DDDG of a small loop against a hand-drawn graph,
recurrence MII by hand, memory dependences from a hand-made trace window, scheduling."""

from __future__ import annotations

import networkx as nx
import numpy as np
from cgpredict.instrument import loopbody
from cgpredict.instrument.irtext import parse_module

from cgpredict.fpga import dddg

# s += a[i] * b[i]; a[i + 1] is not touched: a pure register recurrence through the fadd.
DOT_IR = """
define float @dot(ptr %a, ptr %b) {
entry:
  br label %for.body

for.body:
  %i = phi i64 [ 0, %entry ], [ %i.next, %for.body ]
  %s = phi float [ 0.000000e+00, %entry ], [ %s.next, %for.body ]
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %x = load float, ptr %pa, align 4
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %y = load float, ptr %pb, align 4
  %m = fmul float %x, %y
  %s.next = fadd float %s, %m
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %i.next, 8
  br i1 %c, label %exit, label %for.body

exit:
  ret float %s.next
}
"""

# a[i] = a[i - D] * 3 (memory recurrence of distance D) with llvm.fmuladd split in two
FMA_IR = """
define void @acc(ptr %a, ptr %b) {
entry:
  br label %for.body

for.body:
  %i = phi i64 [ 0, %entry ], [ %i.next, %for.body ]
  %s = phi float [ 0.000000e+00, %entry ], [ %t, %for.body ]
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %x = load float, ptr %pa, align 4
  %t = tail call float @llvm.fmuladd.f32(float %x, float 3.000000e+00, float %s)
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  store float %t, ptr %pb, align 4
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %i.next, 8
  br i1 %c, label %exit, label %for.body

exit:
  ret void
}
"""

LAT = {"fadd": 3, "fmul": 2, "load": 2, "store": 1}


def lat(o: loopbody.Op) -> int:
    return LAT.get(o.klass, 0)


def dot_body() -> loopbody.LoopBody:
    fn = parse_module(DOT_IR).functions["dot"]
    return loopbody.loop_body(fn, ["for.body"], {"for.body": [(0, "a[i]"), (1, "b[i]")]})


def test_body_ops_and_induction():
    body = dot_body()
    assert [o.klass for o in body.ops] == [
        "phi",
        "phi",
        "gep",
        "load",
        "gep",
        "load",
        "fmul",
        "fadd",
        "iadd",
        "icmp",
        "br",
    ]
    assert body.induction == frozenset({0, 8})  # %i and %i.next
    assert body.ops[1].carried == 7  # %s receives %s.next of the previous iteration
    assert [(o.mem_id, o.array) for o in body.mem_ops] == [(0, "a"), (1, "b")]


def test_dddg_matches_hand_drawn_graph():
    g = dddg.build_dddg(dot_body(), 2, (), lat)
    # hand-drawn: per iteration t: pa->x, pb->y, x->m, y->m, m->s.next, s->s.next;
    # s.next(0) -> s(1) carried with distance 1. Induction %i/%i.next and br are not nodes.
    want = set()
    for t in range(2):
        want |= {
            ((t, 2), (t, 3)),
            ((t, 4), (t, 5)),
            ((t, 3), (t, 6)),
            ((t, 5), (t, 6)),
            ((t, 6), (t, 7)),
            ((t, 1), (t, 7)),
        }
    want.add(((0, 7), (1, 1)))
    assert set(g.edges()) == want
    assert set(g.nodes()) == {(t, k) for t in range(2) for k in (1, 2, 3, 4, 5, 6, 7, 9)}
    assert g.edges[(0, 3), (0, 6)]["latency"] == 2  # a load's result after 2 cycles
    assert g.edges[(0, 6), (0, 7)]["latency"] == 2
    assert g.edges[(0, 7), (1, 1)] == {"latency": 3, "kind": "reg", "distance": 1}
    assert nx.is_directed_acyclic_graph(g)


def test_recurrence_mii_of_accumulation_with_3_cycle_adder():
    g = dddg.static_graph(dot_body(), (), lat)
    assert dddg.recurrence_mii(g) == 3  # s -> fadd (3 cycles) -> s, distance 1
    assert dddg.recurrence_mii(g, unroll=2) == 6  # two adds in series per unrolled iteration
    assert dddg.recurrence_mii(g, unroll=4) == 12


def test_fmuladd_is_split_so_only_the_adder_is_on_the_recurrence():
    fn = parse_module(FMA_IR).functions["acc"]
    body = loopbody.loop_body(fn, ["for.body"], {"for.body": [(0, "a[i]"), (1, "b[i]")]})
    kinds = [o.klass for o in body.ops]
    assert kinds[4:6] == ["fmul", "fadd"]
    assert dddg.recurrence_mii(dddg.static_graph(body, (), lat)) == 3


def test_memory_dependences_from_a_window_and_memory_recurrence():
    fn = parse_module(FMA_IR).functions["acc"]
    body = loopbody.loop_body(fn, ["for.body"], {"for.body": [(0, "a[i]"), (1, "a[i]")]})
    # store a[i+1] ... load a[i]: the load of iteration t reads what iteration t-2 stored
    its = tuple(((0, 100 + 4 * t), (1, 100 + 4 * (t + 2))) for t in range(6))
    deps = dddg.memory_dependences(body, dddg.Window((its,)))
    load = body.mem_ops[0].index
    store = body.mem_ops[1].index
    assert deps == (dddg.MemDep(store, load, 2),)
    g = dddg.static_graph(body, deps, lat)
    # cycle load(2) -> fmul(2) -> fadd(3) -> store(1) -> load, distance 2: ceil(8 / 2) = 4
    # (the register recurrence through %s is 3)
    assert dddg.recurrence_mii(g) == 4
    assert dddg.recurrence_mii(g, unroll=2) == 8
    deps1 = (dddg.MemDep(store, load, 1),)
    assert dddg.recurrence_mii(dddg.static_graph(body, deps1, lat)) == 8


def test_a_window_iteration_cut_between_a_load_and_its_store_is_one_iteration():
    """acc[0] += ... through a plain pointer: load acc, store acc each iteration. A window
    whose iterations begin after the load (store, then the next load) records the reload
    in the same window iteration as the store; in the body the load comes first, so the
    dependence is the next iteration's (distance 1), and the DDDG stays acyclic."""
    fn = parse_module(FMA_IR).functions["acc"]
    body = loopbody.loop_body(fn, ["for.body"], {"for.body": [(0, "acc[0]"), (1, "acc[0]")]})
    load, store = body.mem_ops[0].index, body.mem_ops[1].index
    its = ((((1, 100), (0, 100)),) * 4)  # store acc, then the next iteration's load
    deps = dddg.memory_dependences(body, dddg.Window((its,)))
    assert deps == (dddg.MemDep(store, load, 1),)
    assert nx.is_directed_acyclic_graph(dddg.build_dddg(body, 3, deps, lat))


def test_strides_and_cross_entry_dependence():
    e0 = (((0, 1000), (1, 5000)), ((0, 1004), (1, 5000)))
    e1 = (((0, 2000), (1, 5004)), ((0, 2004), (1, 5004)))
    w = dddg.Window((e0, e1))
    assert dddg.strides(w) == {0: (4, 1000), 1: (0, 4)}
    fn = parse_module(FMA_IR).functions["acc"]
    body = loopbody.loop_body(fn, ["for.body"], {"for.body": [(0, "a[i]"), (1, "b[i]")]})
    assert not dddg.cross_entry_dependence(body, w)
    w2 = dddg.Window(((((1, 64),),), (((0, 64),),)))  # entry 1 loads what entry 0 stored
    assert dddg.cross_entry_dependence(body, w2)


def test_trace_windows_with_own_markers():
    def mem(mid, addr):
        return (mid << 48) | addr

    def mark(loop, idx):
        return (0xFFFF << 48) | (loop << 32) | idx

    ev = [
        mark(0, 0),
        mem(0, 8),
        mem(1, 16),
        mark(0, 1),
        mem(0, 12),
        mem(1, 20),
        mark(0, 0),
        mem(0, 108),
        mem(1, 116),
    ]
    w = dddg.trace_windows(np.array(ev, dtype=np.uint64), 0, True, set(), {0: 0, 1: 1})
    assert w.entries == ((((0, 8), (1, 16)), ((0, 12), (1, 20))), (((0, 108), (1, 116)),))


def test_schedule_respects_ports():
    g = dddg.build_dddg(dot_body(), 2, (), lat)
    _, depth = dddg.schedule(g)
    assert depth == 2 + 2 + 3 + 3  # load, mul, add, then the second iteration's add
    res = lambda a: "mem" if a["klass"] == "load" else None
    start, depth1 = dddg.schedule(g, {"mem": 1}, res)
    loads = sorted(start[n] for n in g if g.nodes[n]["klass"] == "load")
    assert loads == [0, 1, 2, 3]  # one port: one load per cycle
    assert depth1 >= depth


# j = j + nxt[j]: an integer recurrence through a load, not an induction variable
CHASE_IR = """
define void @chase(ptr %nxt, ptr %out) {
entry:
  br label %for.body

for.body:
  %i = phi i64 [ 0, %entry ], [ %i.next, %for.body ]
  %j = phi i64 [ 0, %entry ], [ %j.next, %for.body ]
  %pn = getelementptr inbounds i64, ptr %nxt, i64 %j
  %d = load i64, ptr %pn, align 8
  %j.next = add nsw i64 %j, %d
  %po = getelementptr inbounds i64, ptr %out, i64 %i
  store i64 %j.next, ptr %po, align 8
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %i.next, 8
  br i1 %c, label %exit, label %for.body

exit:
  ret void
}
"""


def test_pointer_chasing_is_a_recurrence_not_an_induction():
    fn = parse_module(CHASE_IR).functions["chase"]
    body = loopbody.loop_body(fn, ["for.body"], {"for.body": [(0, "nxt[j]"), (1, "out[i]")]})
    names = {o.name: o.index for o in body.ops}
    # only %i / %i.next (step 1, a constant) are induction variables
    assert body.induction == frozenset({names["%i"], names["%i.next"]})
    # cycle j -> gep (0) -> load (2) -> add (iadd: 0 in LAT) -> j, distance 1: 2 cycles
    assert dddg.recurrence_mii(dddg.static_graph(body, (), lat)) == 2
    assert dddg.recurrence_mii(dddg.static_graph(body, (), lat), unroll=4) == 8


# if (b[i] > 0) s = s * b[i]; else s = s + b[i];  the join phi %s.1 is a same-iteration merge
MERGE_IR = """
define float @merge(ptr %b) {
entry:
  br label %for.body

for.body:
  %i = phi i64 [ 0, %entry ], [ %i.next, %for.inc ]
  %s = phi float [ 1.000000e+00, %entry ], [ %s.1, %for.inc ]
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %x = load float, ptr %pb, align 4
  %c0 = fcmp ogt float %x, 0.000000e+00
  br i1 %c0, label %if.then, label %if.else

if.then:
  %mul = fmul float %s, %x
  br label %for.inc

if.else:
  %add = fadd float %s, %x
  br label %for.inc

for.inc:
  %s.1 = phi float [ %mul, %if.then ], [ %add, %if.else ]
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %i.next, 8
  br i1 %c, label %exit, label %for.body

exit:
  ret float %s.1
}
"""


def test_join_phi_is_a_same_iteration_merge():
    fn = parse_module(MERGE_IR).functions["merge"]
    body = loopbody.loop_body(
        fn, ["for.body", "if.then", "if.else", "for.inc"], {"for.body": [(0, "b[i]")]}
    )
    names = {o.name: o.index for o in body.ops}
    join = body.ops[names["%s.1"]]
    assert join.carried == -1
    assert set(join.operands) == {names["%mul"], names["%add"]}
    assert body.ops[names["%s"]].carried == names["%s.1"]
    # cycles s -> fmul (2) -> s.1 -> s and s -> fadd (3) -> s.1 -> s, each distance 1
    assert dddg.recurrence_mii(dddg.static_graph(body, (), lat)) == 3
    g = dddg.build_dddg(body, 2, (), lat)
    assert ((0, names["%add"]), (0, names["%s.1"])) in g.edges
    assert ((0, names["%s.1"]), (1, names["%s"])) in g.edges


def test_strides_of_a_triangular_nest_skip_short_entries():
    # for i: for j < i: L[i][j] (row 256 B), x[j]: entry 0 has no iteration, entry 1 one,
    # entry 2 two: the inner stride shows only in entry 2 (4 B for both), the outer stride
    # between the first accesses of entries 1 and 2 (L: one row = 256 B, x: 0)
    e0 = ()
    e1 = (((0, 1256), (1, 9000)),)
    e2 = (((0, 1512), (1, 9000)), ((0, 1516), (1, 9004)))
    assert dddg.strides(dddg.Window((e0, e1, e2))) == {0: (4, 256), 1: (4, 0)}
