"""instrument.dominators: immediate dominators and natural loops against networkx (what the
instrumentation used before; tests may import it, the run path no longer does), on random
control-flow graphs with unreachable blocks, self loops and repeated branch targets, and a
hand-made nest."""

from __future__ import annotations

import random
from dataclasses import dataclass

import networkx as nx
import pytest

from instrument.dominators import immediate_dominators, natural_loops


@dataclass
class _Block:
    label: str
    successors: list[str]


@dataclass
class _Function:
    blocks: list[_Block]


def _random_cfg(seed: int) -> _Function:
    """Blocks b0..bn-1, each branching to 0-3 random blocks (repeats and itself allowed)
    but never to the entry b0 (LLVM forbids it), and a few to a label that is no block."""
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    blocks = []
    for k in range(n):
        succ = [f"b{rng.randrange(1, n)}" for _ in range(rng.randint(0, 3)) if n > 1]
        if rng.random() < 0.1:
            succ.append("nowhere")
        blocks.append(_Block(f"b{k}", succ))
    return _Function(blocks)


def _graph(fn: _Function) -> nx.DiGraph:
    """The networkx graph of ``fn`` as the instrumentation built it."""
    g = nx.DiGraph()
    g.add_nodes_from(range(len(fn.blocks)))
    index = {b.label: k for k, b in enumerate(fn.blocks)}
    for k, b in enumerate(fn.blocks):
        for s in b.successors:
            if s in index:
                g.add_edge(k, index[s])
    return g


def _loops_reference(fn: _Function) -> list[tuple[int, frozenset[int]]]:
    """natural_loops as the instrumentation computed it with networkx."""
    g = _graph(fn)
    dom = nx.immediate_dominators(g, 0)

    def dominates(a, b):
        while True:
            if a == b:
                return True
            if b not in dom or dom[b] == b:
                return False
            b = dom[b]

    bodies: dict[int, set[int]] = {}
    for u, h in g.edges:
        if u in dom and dominates(h, u):
            body = bodies.setdefault(h, {h})
            stack = [u]
            while stack:
                n = stack.pop()
                if n not in body:
                    body.add(n)
                    stack.extend(g.predecessors(n))
    return sorted([(h, frozenset(b)) for h, b in bodies.items()], key=lambda hb: -len(hb[1]))


@pytest.mark.parametrize("seed", range(200))
def test_as_networkx_on_random_graphs(seed):
    fn = _random_cfg(seed)
    g = _graph(fn)
    succ = [list(g.successors(k)) for k in range(len(fn.blocks))]
    # networkx 3.6 leaves the start out, earlier versions map it to itself
    assert immediate_dominators(succ, 0) == {**nx.immediate_dominators(g, 0), 0: 0}
    assert natural_loops(fn) == _loops_reference(fn)


def test_a_nest_by_hand():
    """entry -> outer header 1 -> inner header 2 <-> 3 (latch), 3 -> 4 (outer latch) -> 1,
    1 -> 5 (exit); 6 is unreachable (a branch from it makes no loop)."""
    edges = {0: [1], 1: [2, 5], 2: [3], 3: [2, 4], 4: [1], 5: [], 6: [1]}
    fn = _Function([_Block(f"b{k}", [f"b{s}" for s in v]) for k, v in edges.items()])
    assert immediate_dominators([edges[k] for k in range(7)]) == {
        0: 0, 1: 0, 2: 1, 3: 2, 4: 3, 5: 1}
    assert natural_loops(fn) == [(1, frozenset({1, 2, 3, 4})), (2, frozenset({2, 3}))]
