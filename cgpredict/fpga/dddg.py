"""Dynamic data-dependence graph (DDDG) of an innermost loop body, and its scheduling (SPEC §5).

The FPGA estimator (Lin-Analyzer style) works on the operations of the innermost loop bodies:

* the loop bodies it works on are read from the IR by ``instrument.loopbody`` (``loop_body``:
  ``Op``s with operator classes, register edges and induction phis).
* ``trace_windows`` cuts the trace of one launch into a few entries of the loop, each a window of
  consecutive iterations (the memory addresses of every body access), and
  ``memory_dependences`` finds the true (read-after-write) dependences through memory in them:
  a load of an address an earlier store of the window wrote, with its iteration distance.
* ``build_dddg`` unrolls the body for ``n`` iterations into a networkx DiGraph: nodes
  ``(iteration, op index)``, edges with the attributes ``latency`` (of the producer), ``kind``
  (``reg`` | ``mem``) and ``distance`` (0 inside an iteration). ``static_graph`` folds it into one
  iteration with loop-carried edges (``distance`` > 0), on which ``recurrence_mii`` is
  ``max over cycles ceil(sum latency / sum distance)``.
* ``schedule`` is a resource-constrained list scheduler (memory ports) giving the depth (cycles
  from the first operation's start to the last result) of an acyclic DDDG.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..instrument.loopbody import LoopBody, Op

__all__ = [
    "MemDep",
    "Window",
    "build_dddg",
    "memory_dependences",
    "recurrence_mii",
    "schedule",
    "static_graph",
    "trace_windows",
]

if TYPE_CHECKING:  # networkx loads on first use (about 0.14 s of every run otherwise)
    import networkx as nx


@dataclass(frozen=True)
class MemDep:
    """A read-after-write through memory: op ``src`` (a store) -> op ``dst`` (a load),
    ``distance`` iterations apart (0: the same iteration)."""

    src: int
    dst: int
    distance: int


@dataclass(frozen=True)
class Window:
    """Consecutive iterations of a few entries of a loop: ``entries[e][t]`` is the list of
    (memory instruction id, address) of iteration t of entry e, in program order."""

    entries: tuple[tuple[tuple[tuple[int, int], ...], ...], ...]


# ---- trace windows and memory dependences ------------------------------------------------


def trace_windows(
    events: np.ndarray,
    loop_id: int,
    own_markers: bool,
    ancestors: set[int],
    body_ids: Mapping[int, int],
    iterations: int = 16,
    entries: int = 3,
    max_events: int = 4_000_000,
) -> Window:
    """Cut the first ``entries`` entries (``iterations`` iterations each) of a loop out of the
    events of one launch. ``body_ids`` maps the memory instruction ids of the loop body to
    their position in the body. Without markers of the loop itself (loops deeper than the
    traced depth) an iteration starts when a body access does not come after the previous one
    in program order, and an entry ends at an access outside the body or a marker of an
    enclosing loop."""
    out: list[list[list[tuple[int, int]]]] = []
    cur: list[list[tuple[int, int]]] | None = None
    last = -1
    step = 1 << 16
    for start in range(0, min(len(events), max_events), step):
        chunk = np.asarray(events[start : start + step])
        for e in chunk.tolist():
            tag = e >> 48
            if tag == 0xFFFF:
                lid, idx = (e >> 32) & 0xFFFF, e & 0xFFFFFFFF
                if own_markers and lid == loop_id:
                    if idx == 0 or cur is None:
                        cur = _new_entry(out, cur, iterations)
                    cur.append([])
                    last = -1
                elif lid in ancestors:
                    cur = None
                continue
            if tag >= 0xF000:
                continue
            if tag in body_ids:
                if cur is None:
                    if own_markers:
                        continue
                    cur = _new_entry(out, cur, iterations)
                if not own_markers and (not cur or body_ids[tag] <= last):
                    cur.append([])
                if cur:
                    cur[-1].append((tag, e & 0xFFFFFFFFFFFF))
                last = body_ids[tag]
            elif not own_markers:
                cur = None
            if len(out) > entries or (
                len(out) == entries and cur is not None and len(cur) > iterations
            ):
                return _pack(out, iterations, entries)
    return _pack(out, iterations, entries)


def _new_entry(out: list, cur, iterations: int) -> list:
    new: list[list[tuple[int, int]]] = []
    out.append(new)
    return new


def _pack(out, iterations: int, entries: int) -> Window:
    kept = [[tuple(it) for it in ent[:iterations] if it] for ent in out[:entries]]
    return Window(tuple(tuple(e) for e in kept if e))


def memory_dependences(body: LoopBody, window: Window) -> tuple[MemDep, ...]:
    """RAW dependences through memory inside each entry of the window (smallest distance of
    each store -> load pair)."""
    op_of = {o.mem_id: o.index for o in body.ops if o.mem_id >= 0}
    is_store = {o.mem_id for o in body.ops if o.klass == "store"}
    best: dict[tuple[int, int], int] = {}
    for entry in window.entries:
        written: dict[int, tuple[int, int]] = {}
        for t, it in enumerate(entry):
            for mid, addr in it:
                if mid not in op_of:
                    continue
                if mid in is_store:
                    written[addr] = (t, mid)
                elif addr in written:
                    s, smid = written[addr]
                    key = (op_of[smid], op_of[mid])
                    # a load before the store in the body cannot read it in the same
                    # iteration: the window's iteration began between them (a marker
                    # placed after the load), so it is the next iteration's read
                    dist = max(t - s, int(key[1] <= key[0]))
                    best[key] = min(best.get(key, dist), dist)
    return tuple(MemDep(s, d, dist) for (s, d), dist in sorted(best.items()))


def cross_entry_dependence(body: LoopBody, window: Window) -> bool:
    """Does an entry read a location an earlier entry of the window wrote (so the iterations of
    the enclosing loop are not independent)?"""
    stores = {o.mem_id for o in body.ops if o.klass == "store"}
    written: set[int] = set()
    for entry in window.entries:
        mine: set[int] = set()
        for it in entry:
            for mid, addr in it:
                if mid in stores:
                    mine.add(addr)
                elif addr in written:
                    return True
        written |= mine
    return False


def strides(window: Window) -> dict[int, tuple[int | None, int | None]]:
    """(inner stride, outer stride) in bytes of each memory instruction: the address change
    between the first two iterations of the first entry with two iterations holding the
    access (triangular nests start with empty or one-iteration entries), and between the
    first occurrences in the first two entries holding it (None when the window does not show
    it, or when the inner step changes within that entry: a data-dependent index such as
    ``hist[data[i]]``)."""
    inner: dict[int, int] = {}
    firsts: dict[int, list[int]] = {}
    for entry in window.entries:
        seen: dict[int, list[tuple[int, int]]] = {}
        for t, it in enumerate(entry):
            here: dict[int, int] = {}
            for mid, addr in it:
                here.setdefault(mid, addr)
            for mid, addr in here.items():
                seen.setdefault(mid, []).append((t, addr))
        for mid, occ in seen.items():
            firsts.setdefault(mid, []).append(occ[0][1])
            if mid not in inner:
                steps = {b - a for (s, a), (t, b) in zip(occ, occ[1:]) if t == s + 1}
                if steps:  # one step throughout the entry, else no stride (data-dependent)
                    inner[mid] = steps.pop() if len(steps) == 1 else None
    out: dict[int, tuple[int | None, int | None]] = {}
    for mid, fs in firsts.items():
        out[mid] = (inner.get(mid), fs[1] - fs[0] if len(fs) > 1 else None)
    return out


# ---- graphs ----------------------------------------------------------------------------


def build_dddg(
    body: LoopBody,
    n: int,
    deps: Iterable[MemDep],
    latency: Callable[[Op], int],
    keep_free: bool = False,
) -> nx.DiGraph:
    """The DDDG of ``n`` consecutive iterations: nodes ``(t, op index)`` (attributes ``op``,
    ``klass``, ``latency``), edges with ``latency`` (the producer's), ``kind`` and ``distance``.
    Induction variables, and (unless ``keep_free``) branches, are left out."""
    import networkx as nx

    g = nx.DiGraph()
    skip = set(body.induction) | {o.index for o in body.ops if o.klass in ("br", "ret")}
    if not keep_free:
        skip |= {o.index for o in body.ops if o.klass == "phi" and o.carried < 0 and not o.operands}
    deps = tuple(deps)
    for t in range(n):
        for o in body.ops:
            if o.index not in skip:
                g.add_node((t, o.index), op=o, klass=o.klass, latency=latency(o))
    for t in range(n):
        for o in body.ops:
            if o.index in skip:
                continue
            for u in o.operands:
                if u not in skip:
                    g.add_edge(
                        (t, u), (t, o.index), latency=latency(body.ops[u]), kind="reg", distance=0
                    )
            if o.carried >= 0 and t > 0 and o.carried not in skip:
                g.add_edge(
                    (t - 1, o.carried),
                    (t, o.index),
                    latency=latency(body.ops[o.carried]),
                    kind="reg",
                    distance=1,
                )
        for d in deps:
            if t - d.distance >= 0 and d.src not in skip and d.dst not in skip:
                g.add_edge(
                    (t - d.distance, d.src),
                    (t, d.dst),
                    latency=latency(body.ops[d.src]),
                    kind="mem",
                    distance=d.distance,
                )
    return g


def static_graph(
    body: LoopBody, deps: Iterable[MemDep], latency: Callable[[Op], int]
) -> nx.MultiDiGraph:
    """One iteration with its loop-carried edges (``distance`` >= 1): the graph of the
    recurrences. Induction variables are left out."""
    import networkx as nx

    g = nx.MultiDiGraph()
    skip = set(body.induction)
    for o in body.ops:
        if o.index not in skip:
            g.add_node(o.index, op=o, klass=o.klass, latency=latency(o))
    for o in body.ops:
        if o.index in skip:
            continue
        for u in o.operands:
            if u not in skip:
                g.add_edge(u, o.index, latency=latency(body.ops[u]), kind="reg", distance=0)
        if o.carried >= 0 and o.carried not in skip:
            g.add_edge(
                o.carried, o.index, latency=latency(body.ops[o.carried]), kind="reg", distance=1
            )
    for d in deps:
        if d.src not in skip and d.dst not in skip:
            g.add_edge(
                d.src, d.dst, latency=latency(body.ops[d.src]), kind="mem", distance=d.distance
            )
    return g


def recurrence_mii(g: nx.MultiDiGraph, unroll: int = 1, max_cycles: int = 20000) -> int:
    """max over the cycles of ``g`` of ceil(unroll * sum latency / sum distance) (at least 1).

    Unrolling by U puts U copies of a distance-1 recurrence in series in one unrolled
    iteration (floating-point chains are not reassociated by HLS), hence the factor U."""
    import networkx as nx

    simple = nx.DiGraph()
    for u, v, d in g.edges(data=True):
        # of parallel edges keep the most constraining (largest latency per distance)
        old = simple.get_edge_data(u, v)
        if old is None or _worse(d, old):
            simple.add_edge(u, v, latency=d["latency"], distance=d["distance"])
    best = 1
    for k, cyc in enumerate(nx.simple_cycles(simple)):
        if k >= max_cycles:
            break
        lat = sum(simple[a][b]["latency"] for a, b in zip(cyc, cyc[1:] + cyc[:1]))
        dist = sum(simple[a][b]["distance"] for a, b in zip(cyc, cyc[1:] + cyc[:1]))
        if dist > 0:
            best = max(best, math.ceil(unroll * lat / dist))
    return best


def _topological(g: nx.DiGraph):
    import networkx as nx

    return nx.topological_sort(g)


def _worse(d: dict, old: dict) -> bool:
    if d["distance"] == old["distance"]:
        return d["latency"] > old["latency"]
    return d["distance"] < old["distance"]


def schedule(
    g: nx.DiGraph,
    capacity: Mapping[str, int] | None = None,
    resource_of: Callable[[dict], str | None] | None = None,
) -> tuple[dict, int]:
    """List-schedule an acyclic DDDG (edges with distance > 0 are kept as ordering edges).

    ``resource_of(node attributes)`` names the resource a node occupies for one cycle (e.g. a
    memory port group); ``capacity`` says how many per cycle. Returns (start cycle of every
    node, depth = max over nodes of start + latency, at least 1 when there is a node)."""
    capacity = capacity or {}
    start: dict = {}
    used: dict[tuple[str, int], int] = {}
    depth = 0
    for node in _topological(g):
        attrs = g.nodes[node]
        t = 0
        for p, _, d in g.in_edges(node, data=True):
            t = max(t, start[p] + d["latency"])
        res = resource_of(attrs) if resource_of else None
        if res is not None and res in capacity:
            while used.get((res, t), 0) >= capacity[res]:
                t += 1
            used[(res, t)] = used.get((res, t), 0) + 1
        start[node] = t
        depth = max(depth, t + attrs.get("latency", 0))
    return start, max(depth, 1 if g.number_of_nodes() else 0)
