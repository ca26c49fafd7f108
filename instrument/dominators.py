"""Natural loops of a function's control-flow graph, from its immediate dominators.

A back edge u -> h is one whose target h dominates u; the natural loop of h is h and every
block that reaches such a u without passing h. The dominators are Cooper, Harvey and
Kennedy's iteration (networkx's did this before; importing networkx cost half a second of
every traced run, so the instrumentation no longer depends on it).
"""

from __future__ import annotations

from .irtext import Function

__all__ = ["immediate_dominators", "natural_loops"]


def _cfg(fn: Function) -> list[list[int]]:
    """The successors of each block of ``fn`` (by index; in branch order, each once)."""
    index = {b.label: k for k, b in enumerate(fn.blocks)}
    succ: list[list[int]] = []
    for b in fn.blocks:
        out: list[int] = []
        for s in b.successors:
            if s in index and index[s] not in out:
                out.append(index[s])
        succ.append(out)
    return succ


def immediate_dominators(succ: list[list[int]], start: int = 0) -> dict[int, int]:
    """The immediate dominator of every block reachable from ``start`` (``start``'s is
    itself): Cooper, Harvey and Kennedy's iteration over reverse postorder ("A Simple,
    Fast Dominance Algorithm", 2001). Dominators are unique, so any correct algorithm gives
    these (networkx.immediate_dominators did; importing it cost half a second a run)."""
    order: list[int] = []  # postorder, iteratively (a function may have thousands of blocks)
    seen, stack = {start}, [(start, iter(succ[start]))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            stack.pop()
            order.append(node)
    rank = {n: k for k, n in enumerate(order)}
    preds: dict[int, list[int]] = {n: [] for n in order}
    for n in order:
        for s in succ[n]:
            preds[s].append(n)
    idom = {start: start}

    def meet(a: int, b: int) -> int:
        while a != b:
            while rank[a] < rank[b]:
                a = idom[a]
            while rank[b] < rank[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in reversed(order):
            if n == start:
                continue
            done = [p for p in preds[n] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = meet(p, new)
            if idom.get(n) != new:
                idom[n], changed = new, True
    return idom


def natural_loops(fn: Function) -> list[tuple[int, frozenset[int]]]:
    """(header, body blocks) of each natural loop of ``fn``, outermost first."""
    if not fn.blocks:
        return []
    succ = _cfg(fn)
    dom = immediate_dominators(succ, 0)
    preds: list[list[int]] = [[] for _ in succ]
    for u, out in enumerate(succ):
        for h in out:
            preds[h].append(u)

    def dominates(a: int, b: int) -> bool:
        while True:
            if a == b:
                return True
            if b not in dom or dom[b] == b:
                return False
            b = dom[b]

    bodies: dict[int, set[int]] = {}
    for u, out in enumerate(succ):  # the back edges u -> h, in the order of the edges
        for h in out:
            if u in dom and dominates(h, u):
                body = bodies.setdefault(h, {h})
                stack = [u]
                while stack:
                    n = stack.pop()
                    if n not in body:
                        body.add(n)
                        stack.extend(preds[n])
    loops = [(h, frozenset(b)) for h, b in bodies.items()]
    return sorted(loops, key=lambda hb: -len(hb[1]))
