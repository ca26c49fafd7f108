"""ILP and MLP of one pseudo-thread's instruction stream (SPEC §4, GPUPerf's inputs).

GPUPerf divides a warp's instructions by ITILP = min(ILP * N, ITILP_max) and its memory
requests by ITMLP = min(MLP * MWP_cp, MWP_peak_bw). Both come from the dependence structure of
one thread's code, read here from the IR of the loop bodies a thread executes
(``loopbody.loop_body``: register operands within one iteration):

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
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .compute import SLOW_PATH_CLASSES, OpLatencies, body_op_cycles
from .dram_rounds import dram_queue
from .frontend.tracefile import Trace
from .instrument import loopbody
from .instrument.irtext import Module, parse_module
from .issue_blocks import ordered_far

__all__ = ["LOADS_IN_FLIGHT", "affine_share", "Parallelism", "ThreadBodies", "body_chain",
           "body_parallelism", "plain_order", "memory_recurrence", "thread_bodies"]

#: loads one thread keeps in flight in a loop whose loads do not wait for a loop-carried
#: value: nvcc unrolls a loop of known trip count and hoists the loads of the unrolled
#: iterations above their uses (the sm_90 SASS of GRAMSCHMIDT's single-thread norm loop,
#: ``validation/cuda/gramschmidt.cu`` gs_k1, issues 16 LDG.E before the first FFMA that
#: consumes one; registers bound how many). Iterations overlap only that far.
LOADS_IN_FLIGHT = 16
#: integer and control classes of a body (loopbody.op_class): what unrolling can fold away
_INTEGER = frozenset({"iadd", "imul", "logic", "icmp", "select", "gep", "cast", "br"})
_FP_TYPES = ("float", "double", "half")
#: classes that are not instructions of the thread (control flow, SSA joins)
_NO_LATENCY = frozenset({"phi", "br", "ret", "store"})
_NOT_INSTRUCTIONS = frozenset({"phi", "br", "ret"})


@dataclass(frozen=True)
class Parallelism:
    """ILP and MLP of a thread (>= 1), and the instructions they were measured on."""

    ilp: float = 1.0
    mlp: float = 1.0
    instructions: float = 0.0


def body_parallelism(body: loopbody.LoopBody,
                     ordered: frozenset[int] = frozenset()) -> Parallelism:
    """ILP and MLP of one iteration of `body` (register dependences within the iteration).
    ``ordered``: the memory ids accessed through plain pointers (the plain port), whose
    program order nvcc keeps: a load of them issues only after every earlier store of them
    in the iteration, so it lies on the chain of that store's loads, eq. (P1): GESUMMV's
    ``LDG A, LDG x, LDG tmp, FFMA, STG tmp, LDG B, LDG x, LDG y, FFMA, STG y`` is 2 memory
    periods of 3 loads (MLP 3), not 6 loads in flight."""
    depth: list[int] = []  # longest chain of instructions ending at each op
    loads: list[int] = []  # most loads on a chain ending at each op
    n_insts = n_loads = 0
    stored = 0  # most loads on a chain ending at an ordered store so far, eq. (P1)
    for o in body.ops:
        counted = o.klass not in _NOT_INSTRUCTIONS
        is_load = o.klass == "load"
        # an operand later in block order (a join phi whose input block comes after it in
        # the function's layout) starts no chain here
        earlier = [k for k in o.operands if k < len(depth)]
        d = max((depth[k] for k in earlier), default=0) + counted
        m = max((loads[k] for k in earlier), default=0)
        if is_load and o.mem_id in ordered:
            m = max(m, stored)  # (P1): after the earlier ordered stores
        if o.klass == "store" and o.mem_id in ordered:
            stored = max(stored, m)
        m += is_load
        depth.append(d)
        loads.append(m)
        n_insts += counted
        n_loads += is_load
    longest = max(depth, default=0)
    ilp = n_insts / longest if longest else 1.0
    mlp = n_loads / max(loads) if n_loads else 1.0
    return Parallelism(max(ilp, 1.0), max(mlp, 1.0), float(n_insts))


def plain_order(trace: Trace, staged: Iterable) -> frozenset[int]:
    """The memory ids whose program order nvcc keeps: every access of a plain port (its
    arrays may alias) but its tiles in shared memory (``staged``: memory.shared.StagedAccess);
    none of a ``__restrict__`` port (body_parallelism's (P1), memory_recurrence)."""
    if trace.header.port != "plain":
        return frozenset()
    return frozenset(range(len(trace.header.mem))) - {a.sid for a in staged}


def _latencies(body: loopbody.LoopBody, load_cycles, fp_cycles: float, int_cycles: float,
               op_lat: OpLatencies | None = None):
    """The latency of each op of ``body``: a load its ``load_cycles(mem_id)``; with the
    device's ``op_lat`` any other op compute.body_op_cycles (an IEEE division or square root
    its SASS chain, FP64 its own latency), else a floating point op ``fp_cycles`` and any
    other instruction ``int_cycles``; stores (not waited for), phis and branches none."""
    out = []
    for o in body.ops:
        if o.klass == "load":
            out.append(float(load_cycles(o.mem_id)))
        elif o.klass in _NO_LATENCY:
            out.append(0.0)
        elif op_lat is not None:
            out.append(body_op_cycles(o.klass, op_lat))
        elif o.klass.startswith(("f", "d")):  # fadd, fmul, fdiv, fcmp, fcvt, dadd, ...
            out.append(fp_cycles)
        else:
            out.append(int_cycles)
    return out


def _ordered_far(
    body: loopbody.LoopBody, lat: list[float], ordered: frozenset[int], gated: bool,
    op_lat: OpLatencies | None = None,
) -> list[float]:
    """issue_blocks.ordered_far: the longest chain ending at each op, plain-pointer accesses
    in program order; ungated, in a warp's issue order behind slow-path branches (IB1)-(IB2)."""
    return ordered_far(body, lat, ordered, gated, op_lat)


def _ordered_from(
    body: loopbody.LoopBody, lat, ordered: frozenset[int], start: int
) -> list[float]:
    """Latency of the longest chain from op ``start`` to each op of the iteration (-inf
    where it does not reach), a load of ``ordered`` issuing only after the latest store of
    ``ordered`` the chain reached (_ordered_far's program order): a loop-carried value
    (a phi) that feeds a store orders the loads after it, so a load whose value the next
    iteration's store needs closes a recurrence through memory (Deriche's backward column
    pass: ``Y2[i][j] = f(tp1, ...); tp1 = imgOut[i][j]``, the store first in the body)."""
    far: list[float] = []
    issued = -math.inf  # when the latest ordered store the chain reached can issue
    for o in body.ops:
        base = max((far[k] for k in o.operands if k < len(far)), default=-math.inf)
        if o.index == start:
            base = 0.0
        if o.klass == "load" and o.mem_id in ordered:
            base = max(base, issued)
        if o.klass == "store" and o.mem_id in ordered and base > -math.inf:
            issued = max(issued, base)
        far.append(base + lat[o.index] if base > -math.inf else -math.inf)
    return far


def _memory_periods(body: loopbody.LoopBody, lat, ordered: frozenset[int]) -> float:
    """The iteration's longest chain from one of its loads (a memory period and the uses
    waiting for it; an ordered load after the stores before it): what one iteration waits
    with no other iteration's loads in flight. Address arithmetic before a load is not a
    wait (it depends on the induction variable only and issues ahead), so a plain port's
    store-to-load recurrence equals it."""
    far: list[float] = []
    issued = -math.inf  # when the latest ordered store of the iteration can issue
    for o in body.ops:
        base = max((far[k] for k in o.operands if k < len(far)), default=-math.inf)
        if o.klass == "load":
            base = max(base, issued, 0.0) if o.mem_id in ordered else max(base, 0.0)
        if o.klass == "store" and o.mem_id in ordered and base > -math.inf:
            issued = max(issued, base)
        far.append(base + lat[o.index] if base > -math.inf else -math.inf)
    return max(far)


def hoisted_loads(body: loopbody.LoopBody, ordered: frozenset[int]) -> tuple[int, ...]:
    """Eq. (22h): the loads of ``body`` (op indices) that ptxas moves above the stores of the
    unrolled trip in a plain port. A load of an ``ordered`` array whose address (an in-body
    ``gep`` that changes every iteration) is the one every store of the body writes (a
    read-modify-write walk, GRAMSCHMIDT's ``A[i][j] -= Q[i][k] * R[k][j]`` over i): the
    trip's copies touch elements a row apart through one pointer, which cannot alias, so
    the later copies' loads issue before the earlier copies' stores (sm_90 SASS of the plain
    ``gs_k3``: three of a trip's four ``LDG A`` above its first ``STG A``). Loads of other
    arrays (which may alias the stored one) keep their order. None when a store writes
    another address or array."""
    stores = [o for o in body.ops if o.klass == "store"]
    inv = loopbody.invariant_ops(body.ops)

    def address(o: loopbody.Op) -> int:
        geps = [k for k in o.operands if body.ops[k].klass == "gep" and not inv[k]]
        return geps[-1] if geps else -1

    targets = {(o.array, address(o)) for o in stores}
    if len(targets) != 1:
        return ()
    array, at = next(iter(targets))
    if at < 0 or not array:
        return ()
    return tuple(o.index for o in body.ops if o.klass == "load" and o.mem_id in ordered
                 and o.array == array and address(o) == at)


def memory_recurrence(
    body: loopbody.LoopBody, lat: list[float], ordered: frozenset[int]
) -> float:
    """Cycles between one iteration's stores and the next's (issue 24, item 3): the next
    iteration's loads of ``ordered`` issue after this one's stores (nvcc cannot move a load
    through a plain pointer above a store that may alias it, nor forward the stored value
    when another store lies between), so the longest chain from a load to a store of the
    iteration recurs every iteration; 0 without such a store."""
    far = _ordered_far(body, lat, ordered, gated=True)
    ends = [far[o.index] for o in body.ops if o.klass == "store" and o.mem_id in ordered]
    return max((e for e in ends if e > -math.inf), default=0.0)


def body_chain(
    body: loopbody.LoopBody,
    load_cycles,
    fp_cycles: float,
    int_cycles: float,
    looped: bool = True,
    unroll: int = LOADS_IN_FLIGHT,
    ordered: frozenset[int] = frozenset(),
    in_flight: bool = True,
) -> float:
    """Cycles one iteration of ``body`` takes at least on its thread's own critical path
    (issue 24): the longest loop-carried recurrence (an accumulator's add, a pointer chase
    through its loads, a chain from a load to a store of ``ordered``: memory_recurrence), and
    the iteration's longest chain of latencies (a load and its uses) shared by the iterations
    whose loads one thread keeps in flight: those of one unrolled trip (``unroll``
    iterations, compute.loop_unroll), at most LOADS_IN_FLIGHT loads. Code that is not a loop
    (``looped`` False: a thread's straight-line body) runs its chain once. ``ordered``: the
    memory ids accessed through plain pointers (the plain port), empty for ``__restrict__``.
    ``in_flight`` False: no iterations share a chain (the serial reference of eq. (22m))."""
    return _chain(body, tuple(_latencies(body, load_cycles, fp_cycles, int_cycles)), looped,
                  unroll, ordered, in_flight)


def _chain(body: loopbody.LoopBody, lat: tuple[float, ...], looped: bool, unroll: int,
           ordered: frozenset[int] = frozenset(), in_flight: bool = True,
           op_lat: OpLatencies | None = None,
           dram: tuple[tuple[float, float], ...] = ()) -> float:
    """body_chain from the latency of each op of ``body`` (``_latencies``); without
    ``in_flight`` a loop's iterations share no load's wait: each waits its memory periods one
    after another (_memory_periods), the serial reference of eq. (22m), never below the chain
    itself (a loop without loads keeps its own: nothing in flight); straight-line code of
    two loads or more waits each load alone, one after another (eq. (22t)).
    A loop's trip of ``unroll`` iterations then takes at least ``op_lat``'s loop trip (eq. (LT)):
    per iteration max(loop_trip / unroll, chain + loop_branch / unroll). ``dram``: each op's
    (DRAM share, DRAM sectors a warp instruction) (memory.inflight.chain_dram_sectors); a
    looped trip holds D = overlap x sum of the loads' shares in flight and S = overlap x sum
    of share x sectors, and each load after the first waits its sectors at ``op_lat.dram_gap``
    a sector: ``within + dram_gap x (S / D) x max(D - 1, 0)`` (eq. (Q1)), or with
    ``op_lat.dram_sigma`` the latest of D returns over the loop load's trip (eq. (Q1r),
    dram_rounds.dram_queue)."""
    within = max(_ordered_far(body, lat, ordered, False, op_lat), default=0.0)  # (IB1)
    loads = sum(o.klass == "load" for o in body.ops)
    overlap = max(min(unroll, LOADS_IN_FLIGHT // max(loads, 1)), 1) if looped else 1
    serial = _memory_periods(body, lat, ordered) if not in_flight and looped and loads else 0.0
    if not in_flight and not looped and loads > 1:  # (22t): straight-line loads one by one
        serial = max(within, sum(lat[o.index] for o in body.ops if o.klass == "load"))
    if any(o.klass in SLOW_PATH_CLASSES for o in body.ops):
        overlap = 1  # each unrolled copy waits behind the previous one's slow-path test
    rec = memory_recurrence(body, lat, ordered) if looped else 0.0
    for o in body.ops:
        if o.klass == "phi" and o.carried >= 0:
            reach = _ordered_from(body, lat, ordered, o.index)[o.carried]
            rec = max(rec, reach if reach > -math.inf else 0.0)
    queued = 0.0
    if looped and in_flight and dram and op_lat is not None:  # (Q1), (Q1r)
        held = overlap * sum(dram[o.index][0] for o in body.ops if o.klass == "load")
        sect = overlap * sum(dram[o.index][0] * dram[o.index][1]
                             for o in body.ops if o.klass == "load")
        queued = dram_queue(held, sect, op_lat)
    per = max(rec, (within + queued) / overlap, serial)
    if looped and op_lat is not None and op_lat.loop_trip > 0:  # eq. (LT)
        per = max(op_lat.loop_trip / unroll, per + op_lat.loop_branch / unroll)
    return per


def affine_share(body: loopbody.LoopBody, branches: bool | None = None) -> float:
    """The share of ``body``'s integer and branch ops that follow only its induction
    variables and loop invariants (loop control, the addresses of affine accesses): the ones
    an unrolled loop folds into immediate offsets. A value computed from a load (a gathered
    index, ``hist[data[i] & 255]``) or another recurrence is work every iteration keeps.
    ``branches`` True: of the branches only, False: of the other integer ops only (eq.
    (AF2): a gather's tainted index does not keep a share of the back edge); None: of both.
    A cast is no instruction (compute.FREE_OPS): it carries the taint but is in neither
    count, as in the instructions the share multiplies (eq. (AF2w))."""
    data: list[bool] = []
    n = affine = 0
    for o in body.ops:
        tainted = (
            o.klass in ("load", "call")
            or (o.klass == "phi" and o.index not in body.induction)
            or any(data[k] for k in o.operands if k < len(data))
        )
        data.append(tainted)
        if o.klass == "cast":  # (AF2w): no instruction (compute.FREE_OPS), only the taint
            continue
        if o.klass in _INTEGER and not o.type.startswith(_FP_TYPES):
            if branches is not None and (o.klass == "br") != branches:
                continue
            n += 1  # a float fneg (class logic: a sign flip) is no integer instruction
            affine += not tainted
    return affine / n if n else 0.0


@functools.lru_cache(maxsize=4)
def ir_module(ir_text: str) -> Module:
    """The parsed IR, once per trace (a kernel's distinct launches each ask for it)."""
    return parse_module(ir_text)


def traced_loop_body(h, lp, mem) -> loopbody.LoopBody | None:
    """The IR body of the trace's loop ``lp`` (``mem``: loopbody.mem_by_label of its region),
    its header first, as loop_body takes it; None when its function is not in the IR."""
    mod = ir_module(h.ir_text)
    if lp.function not in mod.functions:
        return None
    labels = [lp.header] + [h.blocks[b].label for b in lp.blocks
                            if h.blocks[b].label != lp.header]
    return loopbody.loop_body(mod.functions[lp.function], labels, mem)


@dataclass(frozen=True)
class ThreadBodies:
    """The code a pseudo-thread of a region runs: the parallelism of each of its bodies and
    the blocks of that body (its executions per thread are the launch's own)."""

    bodies: tuple[tuple[Parallelism, tuple[int, ...]], ...] = ()
    # the same bodies' dependence graphs, for the thread's critical path (body_chain), and
    # whether each is a loop of the thread (else its straight-line code, run once)
    graphs: tuple[loopbody.LoopBody, ...] = ()
    looped: tuple[bool, ...] = ()
    loop_ids: tuple[int, ...] = ()  # each body's loop (-1: straight-line code)
    affine: tuple[float, ...] = ()  # each body's affine_share, integer ops (0: straight code)
    affine_branch: tuple[float, ...] = ()  # and branches (eq. (AF2))
    # body_chain of each (body, latencies of its ops, looped, unroll) found so far: a pure
    # function, asked again by every launch of the kernel with the same load latencies
    chains: dict = field(default_factory=dict, compare=False, repr=False)

    def unrolled_savings(
        self, per_thread: Mapping[int, float], integer_of, unroll_of, kept_of=None,
        branch_of=None,
    ) -> float:
        """Instructions per thread that unrolling folds away: of each loop body's integer
        and branch instructions (``integer_of(block id)`` an execution), the affine share
        (affine_share) bar one in ``unroll_of(loop id)``; for a loop bounded by a run-time
        size (``kept_of(loop id)``: the instructions per iteration the SASS keeps of its
        control and addresses, runtime_trips.RuntimeTrip; None otherwise) the affine share
        less those. Nothing for straight-line code. ``branch_of(block id)``: of
        ``integer_of``'s, the branches, which take the body's branch share (eq. (AF2))."""
        saved = 0.0
        shares = zip(self.affine, self.affine_branch or self.affine)
        for (_, blocks), (share, br), lid in zip(self.bodies, shares, self.loop_ids):
            if share > 0 or br > 0:  # eq. (AF2): the branches of integer_of at their share
                brs = [branch_of(b) if branch_of else 0.0 for b in blocks]
                affine = sum(per_thread.get(b, 0.0) * (share * (integer_of(b) - n) + br * n)
                             for b, n in zip(blocks, brs))
                kept = kept_of(lid) if kept_of is not None else None
                if kept is None:
                    saved += affine * (1 - 1.0 / unroll_of(lid))
                else:
                    runs = max((per_thread.get(b, 0.0) for b in blocks), default=0.0)
                    saved += affine - kept * runs
        return saved

    def chain_cycles(
        self,
        per_thread: Mapping[int, float],
        load_cycles,
        fp_cycles: float,
        int_cycles: float,
        unroll_of,
        ordered: frozenset[int] = frozenset(),
        op_lat: OpLatencies | None = None,
        in_flight: bool = True,
        dram_share=None,
        step=None,
    ) -> float:
        """The thread's critical path: each body's iterations (``per_thread``: executions
        of each block id by the thread) times its per-iteration chain (body_chain), its
        loop unrolled ``unroll_of(loop id)`` times, ``ordered`` its plain-pointer accesses,
        ``op_lat`` the device's latencies by kind (_latencies); ``in_flight`` False: the
        same path with each iteration's chain on its own (no loads of an unrolled trip in
        flight together), the serial reference of eq. (22m). ``dram_share(mem id)``: a load's
        (DRAM share, DRAM sectors an instruction), whose trips' loads in flight queue
        (eq. (Q1)); None: none queue. ``step``: (the latencies of warps in step, the share
        of trips in step given a body's loads' mem ids), eq. (CV), blended by that share."""
        total = 0.0
        for i, ((_, blocks), g, looped, lid) in enumerate(zip(
            self.bodies, self.graphs, self.looped, self.loop_ids
        )):
            runs = max((per_thread.get(b, 0.0) for b in blocks), default=0.0)
            if runs > 0:
                lat = tuple(_latencies(g, load_cycles, fp_cycles, int_cycles, op_lat))
                far = tuple(dram_share(o.mem_id) if o.klass == "load" else (0.0, 1.0)
                            for o in g.ops) if dram_share is not None else ()
                args = (looped, unroll_of(lid), ordered, in_flight)
                chain = self._kept_chain(i, g, lat, *args, op_lat, far)
                share = step[1]([o.mem_id for o in g.ops if o.klass == "load"]) if step else 0
                if share > 0:  # (CV): the trips whose warps stay in step
                    slat = tuple(_latencies(g, load_cycles, fp_cycles, int_cycles, step[0]))
                    chain += share * (self._kept_chain(i, g, slat, *args, step[0], far) - chain)
                total += runs * chain
        return total

    def _kept_chain(self, i, g, lat, looped, unroll, ordered, in_flight, op_lat, far) -> float:
        """body_chain of body ``i``, kept (a kernel's launches mostly share latencies)."""
        key = (i, lat, looped, unroll, ordered, in_flight, op_lat, far)
        if key not in self.chains:
            self.chains[key] = _chain(g, lat, looped, unroll, ordered, in_flight, op_lat, far)
        return self.chains[key]

    def hoisted_cycles(self, per_thread: Mapping[int, float], load_cycles, unroll_of,
                       ordered: frozenset[int]) -> float:
        """Eq. (22h): a thread's memory periods that leave the serial timeline of eq. (22)
        because ptxas hoists their loads above the unrolled trip's stores (hoisted_loads):
        of each looped body's hoisted loads, ``load_cycles(mem id)`` an execution, all but
        one copy in ``unroll_of(loop id)`` (the trip's first waits behind the previous
        trip's stores); ``per_thread``: executions of each block id by the thread."""
        total = 0.0
        for (_, blocks), g, looped, lid in zip(self.bodies, self.graphs, self.looped,
                                               self.loop_ids):
            runs = max((per_thread.get(b, 0.0) for b in blocks), default=0.0)
            unroll = unroll_of(lid) if looped else 1
            if runs > 0 and unroll > 1:
                loads = hoisted_loads(g, ordered)
                total += runs * (1 - 1 / unroll) * sum(load_cycles(g.ops[k].mem_id)
                                                       for k in loads)
        return total

    def compute_chain(self, per_thread: Mapping[int, float], unroll_of, device) -> float:
        """A thread's critical path through its computing (profile.compute_chain_cycles):
        chain_cycles with every load ready at once, each operation at ``device``'s latency
        of its kind (its ``op_latencies``, compute.OpLatencies)."""
        return self.chain_cycles(
            per_thread, lambda sid: 0.0, device.fp_latency_cycles, device.inst_latency_cycles,
            unroll_of, frozenset(), device.op_latencies,
        )

    def parallelism(self, per_thread: Mapping[int, float],
                    ordered: frozenset[int] = frozenset()) -> Parallelism:
        """ILP and MLP of the thread, each body weighted by its instructions executed
        (``per_thread``: executions per thread of each block id); ``ordered``: its
        plain-pointer accesses, whose stores split a body's loads (body_parallelism, (P1))."""
        pars = ([body_parallelism(g, ordered) for g in self.graphs] if ordered
                else [p for p, _ in self.bodies])
        return _weighted(
            (p, max((per_thread.get(b, 0.0) for b in blocks), default=0.0))
            for p, (_, blocks) in zip(pars, self.bodies)
        )


def thread_bodies(trace: Trace, region: int, grid: int) -> ThreadBodies:
    """The bodies of a pseudo-thread of `region` mapped on a `grid`-D grid: its innermost
    loops below the mapped ones, or, without such loops, the blocks inside the mapped loops;
    and the innermost loops of helper functions the threads call (region -1: a launch that
    calls none executes none of their blocks, weight 0). Their ILP and MLP depend on the code
    only, so a kernel's launches share them."""
    h = trace.header
    loops = [lp for lp in h.loops if lp.region == region]
    inner = [lp for lp in loops if lp.depth > grid and not any(c.parent == lp.id for c in loops)]
    helpers = [lp for lp in h.loops if lp.region == -1]
    called = [lp for lp in helpers if not any(c.parent == lp.id for c in helpers)]
    own = inner or [lp for lp in loops if lp.depth == grid]
    bodies = [(lp.function, lp.blocks, bool(inner), lp.id if inner else -1) for lp in own]
    bodies += [(lp.function, lp.blocks, True, lp.id) for lp in called]
    if not bodies:
        return ThreadBodies()
    mod = ir_module(h.ir_text)
    mem = loopbody.mem_by_label(h, region)
    graphs = [
        (loopbody.loop_body(mod.functions[fn], [h.blocks[b].label for b in blocks], mem), blocks,
         looped, lid)
        for fn, blocks, looped, lid in bodies
        if fn in mod.functions
    ]
    return ThreadBodies(
        bodies=tuple((body_parallelism(g), tuple(blocks)) for g, blocks, _, _ in graphs),
        graphs=tuple(g for g, _, _, _ in graphs),
        looped=tuple(looped for _, _, looped, _ in graphs),
        loop_ids=tuple(lid for _, _, _, lid in graphs),
        affine=tuple(affine_share(g, False) if looped else 0.0 for g, _, looped, _ in graphs),
        affine_branch=tuple(affine_share(g, True) if looped else 0.0
                            for g, _, looped, _ in graphs),
    )


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
