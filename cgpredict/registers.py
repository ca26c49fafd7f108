"""Registers a thread of the CUDA port uses, estimated from the C's IR (issue 24, eqs. (RG1),
(RG2); docs/models.md §2.6).

ptxas allocates registers for the values a thread holds at once. Where the most are live
sets the count: one of the thread's innermost sequential loops (its unrolled body), the code
it runs once, or a tiled kernel's staging loop. Per such section S of the thread's code (the
blocks of the region's mapped loops), with u iterations' loads in flight:

    held_S(u) = C_S + L_S + 2 P_S + A_S + u D_S + W_S + T_S
    R = 3 + max( max_S held_S(1), min( max_S held_S(U_S), R_full ) )              (RG1)
    R_full = registers_per_sm / max_threads_per_sm                                 (RG2)

* 3: ``R1``, the stack pointer every kernel loads (``LDC R1, c[0x0][0x28]``), and the 2
  registers ptxas's count adds to the highest one the code names (RESERVED);
* C_S: the values the loop carries, its header ``phi`` operations (induction, accumulators);
* L_S: the values defined before S that S uses other than for an address, or that are used
  after S (the thread's index for a store after a reduction, a value loaded before the loop,
  an outer loop's accumulator), each by its size; a global array's base is a kernel
  parameter in the constant bank (no register);
* P_S: the 64-bit pointers the port keeps for S's global accesses: one per address base
  (array and variable index roots, ``machine_code.address_bases``), 2 registers each;
* A_S: the 32-bit shared-memory addresses of S's staged accesses, one per base;
* D_S: the 4-byte registers S's loads bring an iteration; U_S the loop's unrolling
  (kernel.launch_loops.loop_unroll_at), or 1 when a plain port's global store in the loop may alias
  the loads of the next iterations;
* W_S: the most values one iteration computes and still needs at once (``dx``, ``dy``,
  ``dz`` and ``r2`` of nbody), loads, addresses and predicates aside;
* T_S: the port's staging loop (``cgp::stage``, validation/cuda/common.cuh) of a tiled
  kernel's strip loop: STAGE_STATE registers of loop state and UNROLL_RUNTIME loads in flight,
  on top of what the strip loop holds across it (its carried values and live-ins).

The min with R_full (eq. (RG2), 32 on every shipped device) is ptxas's choice: it issues later
iterations' loads early only while the thread stays within full occupancy, so a kernel needs
more than 32 only when one iteration's values do (docs/models.md, the evidence).

Sizes: ``float``, ``i32`` and index ``i64`` values one 4-byte register (the port's indices
are ``int``), ``double`` and pointers two, vectors one per element, ``i1`` none (predicates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .compute import UNROLL_RUNTIME
from .frontend.tracefile import Trace
from .instrument import loopbody
from .machine_code import address_bases
from .parallelism import ir_module

__all__ = ["RESERVED", "STAGE_STATE", "RegisterEstimate", "SectionRegisters", "estimate_registers",
           "full_occupancy_registers", "value_registers", "working_set"]

#: registers of the port's staging loop besides its loads in flight (common.cuh ``stage``):
#: element index, thread count, tile row and column origin, shared address, 64-bit address
STAGE_STATE = 7
#: the stack pointer R1
STACK_POINTER = 1
#: registers ptxas counts beyond those the code names: ``Used N registers`` is the highest
#: register of the SASS plus 3 (R0-R7 of SAXPY: 10, R0-R37 of SYRK tiled: 40, R0-R29 of GEMM
#: tiled: 32, R0-R33 of nbody_soa: 36, nbody_f64's R0-R56 rounded to 60)
RESERVED = 2
_VALUE = re.compile(r"%([\w.$-]+|\"[^\"]+\")")
_PHI_IN = re.compile(r"\[\s*([^,\]]+),\s*%([\w.$\"-]+)\s*\]")


@dataclass(frozen=True)
class SectionRegisters:
    """The terms of eq. (RG1) of one section of a thread's code."""

    where: str  # "loop <header label>", "straight-line" or "staging <header label>"
    carried: int = 0  # C_S
    live_in: int = 0  # L_S
    pointers: int = 0  # P_S, 64-bit pointers (2 registers each)
    shared: int = 0  # A_S, 32-bit shared-memory addresses
    loaded: int = 0  # D_S, 4-byte registers its loads bring an iteration
    unroll: int = 1  # U_S, iterations whose loads ptxas may issue ahead
    working: int = 0  # W_S
    staging: int = 0  # T_S

    def held(self, iterations: int) -> int:
        """Registers the section holds with the loads of ``iterations`` iterations in flight."""
        return (self.carried + self.live_in + 2 * self.pointers + self.shared
                + iterations * self.loaded + self.working + self.staging)

    @property
    def minimum(self) -> int:
        """One iteration's loads in flight: what the section cannot do with less."""
        return self.held(1)

    @property
    def hoisted(self) -> int:
        """Every unrolled iteration's loads in flight."""
        return self.held(self.unroll)


@dataclass(frozen=True)
class RegisterEstimate:
    """A kernel's estimated registers a thread (eq. (RG1)): the most its sections need with
    one iteration's loads in flight, or, up to the budget, with all of them."""

    registers: int
    minimum: int  # 3 + max_S minimum
    hoisted: int  # 3 + max_S hoisted
    budget: int  # registers a thread at full occupancy
    sections: tuple[SectionRegisters, ...] = ()


def full_occupancy_registers(device) -> int:
    """Eq. (RG2): the registers a thread may use with the SM full of threads, registers per
    SM over threads per SM, rounded down to the allocation unit per thread (32 on the H100,
    TK1, GTX 980 and Xavier NX: 65536 / 2048)."""
    unit = max(device.register_alloc_unit // device.warp_size, 1)
    return device.registers_per_sm // device.max_threads_per_sm // unit * unit


def value_registers(ty: str) -> int:
    """4-byte registers of an IR value of type ``ty`` (see the module docstring)."""
    ty = ty.strip()
    m = re.match(r"<(\d+) x (\w+)>", ty)
    if m:
        return int(m.group(1)) * value_registers(m.group(2))
    if ty in ("double", "ptr") or ty.endswith("*"):
        return 2
    if ty in ("i1", "void", ""):
        return 0
    return 1


@dataclass(frozen=True)
class _Instr:
    pos: int
    label: str
    name: str
    opcode: str
    ty: str
    uses: tuple[str, ...]
    phi_from: tuple[tuple[str, str], ...]  # (value, incoming block) of a phi


def _instrs(fn, labels: set[str]) -> list[_Instr]:
    """The instructions of the blocks ``labels`` of ``fn`` in function order."""
    out = []
    for b in fn.blocks:
        if b.label not in labels:
            continue
        for ins in b.instrs:
            body = ins.text.split(", !dbg")[0]
            if ins.opcode == "call" and (ins.callee or "").startswith(("llvm.dbg",
                                                                      "llvm.lifetime")):
                continue
            phi = tuple((v.strip().lstrip("%").strip('"'), f.strip('"'))
                        for v, f in _PHI_IN.findall(body)) if ins.opcode == "phi" else ()
            uses = tuple(u.strip('"') for u in _VALUE.findall(body))
            out.append(_Instr(len(out), b.label, (ins.result or "").lstrip("%").strip('"'),
                              ins.opcode, loopbody._result_type(ins.opcode, body), uses, phi))
    return out


_ADDRESS_OPS = frozenset({"getelementptr", "sext", "zext", "trunc", "add", "mul", "shl", "or"})


def _feeds_address(u: _Instr, users: dict[str, list[_Instr]], depth: int = 0) -> bool:
    """Whether use ``u`` only computes an address: a ``getelementptr``, or integer arithmetic
    and casts whose own users only compute addresses."""
    if u.opcode == "getelementptr":
        return True
    if u.opcode not in _ADDRESS_OPS or not u.name or depth > 8:
        return False
    us = users.get(u.name, [])
    return bool(us) and all(_feeds_address(w, users, depth + 1) for w in us)


def _reach(succ: dict[str, list[str]], start: set[str], avoid: str) -> set[str]:
    """Blocks reachable from the blocks ``start`` lead to, not through block ``avoid``."""
    seen: set[str] = set()
    todo = [t for s in start for t in succ.get(s, ()) if t not in start]
    while todo:
        b = todo.pop()
        if b in seen or b == avoid:
            continue
        seen.add(b)
        todo += succ.get(b, ())
    return seen


def _live_across(code: list[_Instr], inside: set[str], succ: dict[str, list[str]],
                 users: dict[str, list[_Instr]]) -> int:
    """L_S: registers of the values defined in the thread's code outside the section (labels
    ``inside``) that the section uses other than for an address, or that are used after it:
    in a block the section's exits lead to (``succ``: the thread's control flow) before the
    value is defined anew (a ``phi`` use is one in its incoming block)."""
    total = 0
    after_memo: dict[str, set[str]] = {}
    for d in code:
        if not d.name or d.label in inside:
            continue
        us = users.get(d.name, [])
        if any(u.label in inside and not _feeds_address(u, users) for u in us):
            total += value_registers(d.ty)
            continue
        if d.label not in after_memo:
            after_memo[d.label] = _reach(succ, inside, d.label)
        later = after_memo[d.label]
        if any(_use_blocks(u, d.name) & later for u in us if u.label not in inside):
            total += value_registers(d.ty)
    return total


def _use_blocks(u: _Instr, name: str) -> set[str]:
    """Where ``u`` uses ``name``: its block, or for a ``phi`` the incoming blocks."""
    if u.opcode == "phi":
        return {f for v, f in u.phi_from if v == name}
    return {u.label}


def _thread_cfg(fn, labels: set[str], mapped_heads: set[str]) -> dict[str, list[str]]:
    """Successors among ``labels``: the thread's control flow, the mapped loops' back edges
    left out (a thread runs one iteration of them)."""
    return {b.label: [t for t in b.successors if t in labels and t not in mapped_heads]
            for b in fn.blocks if b.label in labels}


def _users(code: list[_Instr]) -> dict[str, list[_Instr]]:
    out: dict[str, list[_Instr]] = {}
    for i in code:
        for u in set(i.uses):
            out.setdefault(u, []).append(i)
    return out


def _labels(h, loop) -> set[str]:
    return {h.blocks[b].label for b in loop.blocks}


def _ancestors(h, loop, grid: int) -> list:
    """The sequential loops around ``loop`` (depth > grid), innermost first."""
    out, p = [], loop.parent
    while p >= 0 and h.loops[p].depth > grid:
        out.append(h.loops[p])
        p = h.loops[p].parent
    return out


def working_set(body: loopbody.LoopBody) -> int:
    """W_S: the peak over one iteration of ``body`` of the registers of the values it
    computes and still needs (from each op to its last use in the iteration): arithmetic
    results, not loads (U_S D_S), addresses (P_S) or predicates."""
    ops = body.ops
    last = {}
    for o in ops:
        for u in o.operands:
            last[u] = o.index
    held = [o for o in ops if o.index in last and o.klass not in
            ("load", "phi", "gep", "cast", "icmp", "store", "br")]
    peak = 0
    for k in range(len(ops)):
        peak = max(peak, sum(value_registers(o.type) for o in held
                             if o.index <= k < last[o.index]))
    return peak


def _mem_terms(body: loopbody.LoopBody, staged: frozenset[str]) -> tuple[int, int, int, bool]:
    """(P_S, A_S, D_S, whether a global store is among them) of a section's body: its global
    address bases, staged arrays' shared addresses, 4-byte registers loaded per iteration."""
    bases = address_bases(body, set())
    glob = {b for k, b in bases.items() if b[0] not in staged}
    shared = {b for k, b in bases.items() if b[0] in staged}
    loaded = sum(value_registers(o.type) for o in body.mem_ops if o.klass == "load")
    store = any(o.klass == "store" and o.array not in staged for o in body.mem_ops)
    return len(glob), len(shared), loaded, store


def _loop_section(h, fn, code, users, succ, lp, grid: int, unroll: int, restrict: bool,
                  staged: frozenset[str], mem) -> list[SectionRegisters]:
    """The section of innermost sequential loop ``lp`` and, when it reads staged tiles and
    a strip loop runs it, the strip loop's staging section (eq. (RG1))."""
    labels = _labels(h, lp)
    body = loopbody.loop_body(fn, [lp.header] + sorted(labels - {lp.header}), mem)
    p, a, d, store = _mem_terms(body, staged)
    u = max(unroll, 1) if restrict or not store else 1
    carried = sum(value_registers(i.ty) for i in code if i.label == lp.header
                  and i.opcode == "phi")
    outer = _ancestors(h, lp, grid)
    live = _live_across(code, labels, succ, users)
    out = [SectionRegisters(f"loop {lp.header}", carried, live, p, a, d, u,
                            working=working_set(body))]
    if a and outer:
        t = outer[0]
        t_labels = _labels(h, t)
        out.append(SectionRegisters(
            f"staging {t.header}",
            sum(value_registers(i.ty) for i in code if i.label == t.header and i.opcode == "phi"),
            _live_across(code, t_labels, succ, users),
            0, a, 1, UNROLL_RUNTIME, staging=STAGE_STATE))
    return out


def _straight_section(h, fn, code, region_loops, grid: int, mem,
                      staged: frozenset[str]) -> SectionRegisters:
    """The code a thread runs once: its indices (the mapped loops' header ``phi``), the
    pointers and loads of its accesses, all loads in flight."""
    seq = {lb for lp in region_loops if lp.depth > grid for lb in _labels(h, lp)}
    mapped = [lp for lp in region_loops if lp.depth <= grid]
    labels = {lb for lp in mapped for lb in _labels(h, lp)} - seq
    heads = {lp.header for lp in mapped}
    index = sum(value_registers(i.ty) for i in code if i.label in heads and i.opcode == "phi")
    body = loopbody.loop_body(fn, [b.label for b in fn.blocks if b.label in labels], mem)
    p, a, d, _ = _mem_terms(body, staged)
    return SectionRegisters("straight-line", 0, index, p, a, d, 1, working=working_set(body))


def estimate_registers(trace: Trace, region: int, grid: int, unroll: dict[int, int],
                       restrict: bool = False, budget: int = 32) -> RegisterEstimate | None:
    """Eq. (RG1) for region ``region`` of ``trace`` mapped on ``grid`` thread dimensions;
    ``unroll``: per sequential loop id, the iterations the port's code runs a trip
    (kernel.launch_loops.loop_unroll_at); ``restrict``: the ``__restrict__`` port. None when the
    region's code is not in the IR (a kernel with no loop)."""
    h = trace.header
    loops = [lp for lp in h.loops if lp.region == region]
    mod = ir_module(h.ir_text)
    if not loops or loops[0].function not in mod.functions:
        return None
    fn = mod.functions[loops[0].function]
    thread = {lb for lp in loops for lb in _labels(h, lp)}
    code = _instrs(fn, thread)
    users = _users(code)
    succ = _thread_cfg(fn, thread, {lp.header for lp in loops if lp.depth <= grid})
    mem = loopbody.mem_by_label(h, region)
    staged = frozenset(s[0] for s in h.region(region).shared)
    sections = [_straight_section(h, fn, code, loops, grid, mem, staged)]
    for lp in loops:
        if lp.depth > grid and not any(c.parent == lp.id for c in loops):
            sections += _loop_section(h, fn, code, users, succ, lp, grid, unroll.get(lp.id, 1),
                                      restrict, staged, mem)
    base = RESERVED + STACK_POINTER
    low = base + max(s.minimum for s in sections)
    high = base + max(s.hoisted for s in sections)
    return RegisterEstimate(max(low, min(high, budget)), low, high, budget, tuple(sections))
