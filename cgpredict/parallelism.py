"""ILP and MLP of one pseudo-thread's instruction stream (SPEC §4, GPUPerf's inputs).

GPUPerf divides a warp's instructions by ITILP = min(ILP * N, ITILP_max) and its memory
requests by ITMLP = min(MLP * MWP_cp, MWP_peak_bw). Both come from the dependence structure of
one thread's code, read here from the IR of the loop bodies a thread executes
(``dddg.loop_body``: register operands within one iteration):

* ILP = instructions / the longest chain of dependent instructions (instructions that could
  issue together, on average);
* MLP = loads / the most loads on one dependence chain (loads that can be in flight before
  the first one's value is needed; two independent loads per iteration give 2).

Instructions are every operation except phis, branches and returns (address arithmetic and
conversions are instructions on a GPU). Only dependences inside one iteration count: a
loop-carried accumulator serialises its adds across iterations but not the loads that feed
them. A thread's bodies (its innermost loops, or its straight-line code when it has no loop)
are weighted by how many of their instructions a thread executes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .fpga import dddg
from .instrument.irtext import Module, parse_module
from .tracefile import Trace

__all__ = ["Parallelism", "ThreadBodies", "body_parallelism", "thread_bodies"]

_NOT_INSTRUCTIONS = frozenset({"phi", "br", "ret"})


@dataclass(frozen=True)
class Parallelism:
    """ILP and MLP of a thread (>= 1), and the instructions they were measured on."""

    ilp: float = 1.0
    mlp: float = 1.0
    instructions: float = 0.0


def body_parallelism(body: dddg.LoopBody) -> Parallelism:
    """ILP and MLP of one iteration of `body` (register dependences within the iteration)."""
    depth: list[int] = []  # longest chain of instructions ending at each op
    loads: list[int] = []  # most loads on a chain ending at each op
    n_insts = n_loads = 0
    for o in body.ops:
        counted = o.klass not in _NOT_INSTRUCTIONS
        is_load = o.klass == "load"
        # an operand later in block order (a join phi whose input block comes after it in
        # the function's layout) starts no chain here
        earlier = [k for k in o.operands if k < len(depth)]
        d = max((depth[k] for k in earlier), default=0) + counted
        m = max((loads[k] for k in earlier), default=0) + is_load
        depth.append(d)
        loads.append(m)
        n_insts += counted
        n_loads += is_load
    longest = max(depth, default=0)
    ilp = n_insts / longest if longest else 1.0
    mlp = n_loads / max(loads) if n_loads else 1.0
    return Parallelism(max(ilp, 1.0), max(mlp, 1.0), float(n_insts))


@functools.lru_cache(maxsize=4)
def _module(ir_text: str) -> Module:
    """The parsed IR, once per trace (a kernel's distinct launches each ask for it)."""
    return parse_module(ir_text)


@dataclass(frozen=True)
class ThreadBodies:
    """The code a pseudo-thread of a region runs: the parallelism of each of its bodies and
    the blocks of that body (its executions per thread are the launch's own)."""

    bodies: tuple[tuple[Parallelism, tuple[int, ...]], ...] = ()

    def parallelism(self, per_thread: Mapping[int, float]) -> Parallelism:
        """ILP and MLP of the thread, each body weighted by its instructions executed
        (``per_thread``: executions per thread of each block id)."""
        return _weighted(
            (p, max((per_thread.get(b, 0.0) for b in blocks), default=0.0))
            for p, blocks in self.bodies
        )


def thread_bodies(trace: Trace, region: int, grid: int) -> ThreadBodies:
    """The bodies of a pseudo-thread of `region` mapped on a `grid`-D grid: its innermost
    loops below the mapped ones, or, without such loops, the blocks inside the mapped loops.
    Their ILP and MLP depend on the code only, so a kernel's launches share them."""
    h = trace.header
    loops = [lp for lp in h.loops if lp.region == region]
    inner = [lp for lp in loops if lp.depth > grid and not any(c.parent == lp.id for c in loops)]
    if inner:
        bodies = [(lp.function, lp.blocks) for lp in inner]
    else:
        mapped = [lp for lp in loops if lp.depth == grid]
        bodies = [(lp.function, lp.blocks) for lp in mapped]
    if not bodies:
        return ThreadBodies()
    mod = _module(h.ir_text)
    mem = dddg.mem_by_label(h, region)
    return ThreadBodies(tuple(
        (
            body_parallelism(
                dddg.loop_body(mod.functions[fn], [h.blocks[b].label for b in blocks], mem)
            ),
            tuple(blocks),
        )
        for fn, blocks in bodies
        if fn in mod.functions
    ))  # fmt: skip


def _weighted(parts: Iterable[tuple[Parallelism, float]]) -> Parallelism:
    """Instruction-weighted mean of ILP and MLP over bodies executed `runs` times each."""
    total = ilp = mlp = 0.0
    for p, runs in parts:
        w = p.instructions * runs
        total += w
        ilp += w * p.ilp
        mlp += w * p.mlp
    if total <= 0:
        return Parallelism()
    return Parallelism(ilp / total, mlp / total, total)
