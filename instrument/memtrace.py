"""The instrumentation pass: marked regions of clang's IR -> IR that calls the trace runtime.

For every region (between ``__cgp_region_begin(R)`` and ``__cgp_region_end(R)``, or a whole
function given by name) it inserts

* before each load/store: ``__cgp_mem((id << 48) | address)``: one 8-byte event (through
  ``__cgp_mem_fast``, inlined, which skips the call while the launch is not recorded);
* at each loop header: ``__cgp_loop(loop_id)``: iteration markers and trip counts (through
  ``__cgp_loop_fast``, inlined, which counts a continuing iteration without a call while it
  writes no marker: loopfast.py);
* at each block start: an inline increment of ``__cgp_bbc[block_id]`` (executed-op counts).

Functions defined in the module and called from a region are instrumented too (their events
count only while a region is active); calls to external functions are recorded as operations.
It returns the new IR and the static tables (instructions, loops, blocks) the trace stores.

Its record types (``MemInstr``, ``LoopInfo``, ``BlockInfo``, ``CallSite``: what the trace file
stores) are defined in ``records`` and re-exported here; the marked regions are found by
``region_spans``. The pass's steps (loops, helper functions, the emitter, the rendering)
share the emitter's state.
"""

from __future__ import annotations

import re
from collections import Counter

from .dominators import natural_loops
from .irtext import Block, Function, Instr, Module, parse_module, split_operands
from .loopfast import probe_call, state_globals
from .opkeys import (  # noqa: F401  (InstrumentError, type_bytes, gep_variable_indices, _layout,
    # _op_key, _divisor_kind, _negation_folds: read from memtrace across the package and tests)
    _VALUE,
    InstrumentError,
    _access,
    _divisor_kind,
    _layout,
    _negation_folds,
    _op_key,
    _strip_flags,
    _use_map,
    gep_variable_indices,
    mem_kind,
    type_bytes,
)
from .records import (  # noqa: F401  (re-exported: the package and the tests import them here)
    BlockInfo,
    CallSite,
    InstrumentedModule,
    LoopInfo,
    MemInstr,
)
from .region_spans import Region, find_regions, loop_parents

MAX_MEM_IDS = 0xF000  # event tags above this are markers (see runtime/cgp_runtime.h)
MARKED_DEPTH = 2  # loops this deep in a region emit iteration markers (1-D and 2-D grids)
_IGNORED_CALLS = ("llvm.dbg.", "llvm.lifetime.", "llvm.assume", "__cgp_")


_ARRAY_GLOBAL = re.compile(r"^@([\w.$]+) = (?:[\w]+ )*(?:global|constant) \[")


def _callees(fn: Function, spans: dict[int, tuple[int, int]]) -> list[tuple[Instr, str, int]]:
    """(call instruction, callee, block index) of every call that is not an ignored intrinsic."""
    out = []
    for bi, (lo, hi) in spans.items():
        for ins in fn.blocks[bi].instrs[lo:hi]:
            c = ins.callee
            if c and not c.startswith(_IGNORED_CALLS):
                out.append((ins, c, bi))
    return out


class _Emitter:
    """Collects the static tables and the lines to insert before given module lines."""

    def __init__(self, mod: Module):
        self.mod = mod
        self.before: dict[int, list[str]] = {}
        self.after: dict[int, list[str]] = {}
        self.mem: list[MemInstr] = []
        self.loops: list[LoopInfo] = []
        self.blocks: list[BlockInfo] = []
        self.calls: list[CallSite] = []
        self.tmp = 0
        self._defs: dict[str, dict[str, Instr]] = {}  # per function: value name -> definition

    def defs(self, fn: Function) -> dict[str, Instr]:
        if fn.name not in self._defs:
            self._defs[fn.name] = {
                ins.result.lstrip("%"): ins for b in fn.blocks for ins in b.instrs if ins.result
            }
        return self._defs[fn.name]

    def name(self, stem: str) -> str:
        self.tmp += 1
        return f"%__cgp_{stem}{self.tmp}"

    def add_block(self, region, fn, bi, lo, hi, uses, helper: bool, at_line: int, after: bool):
        b = fn.blocks[bi]
        ops = Counter(
            _op_key(ins, uses)
            for ins in b.instrs[lo:hi]
            if not (ins.callee or "").startswith(_IGNORED_CALLS)
        )
        bid = len(self.blocks)
        self.blocks.append(
            BlockInfo(
                bid,
                region,
                fn.name,
                b.label,
                tuple((o, t, d, n) for (o, t, d), n in sorted(ops.items())),
            )
        )
        if helper:
            code = [f"  call void @__cgp_bb_h(i32 {bid})"]
        else:
            c, d = self.name("c"), self.name("d")
            gep = f"getelementptr inbounds ([@NB@ x i64], ptr @__cgp_bbc, i64 0, i64 {bid})"
            code = [
                f"  {c} = load i64, ptr {gep}",
                f"  {d} = add i64 {c}, 1",
                f"  store i64 {d}, ptr {gep}",
            ]
        (self.after if after else self.before).setdefault(at_line, []).extend(code)
        return bid

    def add_mem(self, region, fn, block: Block, bid, ins: Instr):
        if len(self.mem) >= MAX_MEM_IDS:
            raise InstrumentError(f"more than {MAX_MEM_IDS} memory instructions to instrument")
        ty, ptr = _access(ins)
        mid = len(self.mem)
        file, line, col = self.mod.location(ins.dbg or _nearest_dbg(block, ins))
        if ins.dbg is None:
            col = 0  # a borrowed location: the line is right, the column is not this access's
        base = _base_name(self.defs(fn), ptr)
        kind = mem_kind(ins.opcode)
        self.mem.append(
            MemInstr(mid, region, fn.name, bid, kind, type_bytes(ty), ty, file, line, col, base)
        )
        a, r = self.name("a"), self.name("r")
        self.before.setdefault(ins.line, []).extend(
            [
                f"  {a} = ptrtoint {ptr} to i64",
                f"  {r} = or i64 {a}, {mid << 48}",
                f"  call void @__cgp_mem_fast(i64 {r})",
            ]
        )


def _nearest_dbg(block: Block, ins: Instr) -> str | None:
    """The debug location of the nearest located instruction of the same block (the compiler
    drops the location of instructions it hoists or merges)."""
    k = next(i for i, x in enumerate(block.instrs) if x is ins)
    order = sorted(range(len(block.instrs)), key=lambda i: (abs(i - k), i < k))
    return next((block.instrs[i].dbg for i in order if block.instrs[i].dbg), None)


def _base_name(defs: dict[str, Instr], ptr: str) -> str:
    """Follow getelementptr chains back to the global or argument an address derives from."""
    text = ptr
    for _ in range(16):
        m = re.search(r"@(\"[^\"]+\"|[\w.$-]+)", text)
        if m and not _VALUE.search(text.split("@")[0][4:]):
            return m.group(1).strip('"')
        m = _VALUE.search(text)
        if not m:
            return ""
        name = m.group(1).strip('"')
        ins = defs.get(name)
        if ins is None or ins.opcode not in ("getelementptr", "bitcast", "load", "phi", "select"):
            return name.split(".")[0] if ins is None else name
        if ins.opcode in ("load", "phi", "select"):
            return name
        ops = split_operands(" ".join(_strip_flags(ins.text.split()[1:])))
        text = ops[1] if len(ops) > 1 else ""
    return ""


def instrument(ir_text: str, function_regions: dict[str, int] | None = None) -> InstrumentedModule:
    """Instrument every marked region of ``ir_text`` (see the module docstring)."""
    mod = parse_module(ir_text)
    function_regions = function_regions or {}
    for name in function_regions:
        if name not in mod.functions:
            raise InstrumentError(f"no function named {name!r} is defined")
    regions = find_regions(mod, function_regions)
    em = _Emitter(mod)
    helpers: list[str] = []
    for r in regions:
        _instrument_region(mod, r, em, helpers)
    done: list[str] = []
    queue = list(helpers)
    while queue:
        name = queue.pop(0)
        if name in done:
            continue
        done.append(name)
        _instrument_helper(mod, mod.functions[name], len(done) - 1, em, queue)
    for name, idx in function_regions.items():
        fn = mod.functions[name]
        entry = fn.blocks[0].instrs[0].line
        em.before.setdefault(entry, []).insert(0, f"  call void @__cgp_region_begin(i32 {idx})")
        for b in fn.blocks:
            term = b.instrs[-1]
            if term.opcode == "ret":
                em.before.setdefault(term.line, []).append(
                    f"  call void @__cgp_region_end(i32 {idx})"
                )
    arrays = tuple(m.group(1) for line in mod.lines if (m := _ARRAY_GLOBAL.match(line)))
    text = _render(mod, em, bool(function_regions), arrays, len(done))
    return InstrumentedModule(
        text,
        tuple(em.mem),
        tuple(em.loops),
        tuple(em.blocks),
        tuple(em.calls),
        tuple(done),
        arrays,
    )


HELPER_DEPTH = 100  # helper loops: counted, never marked (their depth in a kernel varies)


def _instrument_helper(mod: Module, fn: Function, fid: int, em: _Emitter, queue: list) -> None:
    """Instrument a function called from a region: its memory accesses and blocks count while a
    region is active, and its loops are counted per call (``__cgp_fn_enter`` starts a call)."""
    spans = {k: (0, len(b.instrs)) for k, b in enumerate(fn.blocks)}
    uses = _use_map(fn)
    block_ids: dict[int, int] = {}
    for bi, b in enumerate(fn.blocks):
        line = b.instrs[b.first_non_phi].line
        block_ids[bi] = em.add_block(-1, fn, bi, 0, len(b.instrs), uses, True, line, False)
        for ins in b.instrs:
            if mem_kind(ins.opcode):
                em.add_mem(-1, fn, b, block_ids[bi], ins)
    entry = fn.blocks[0].instrs[0].line
    em.before.setdefault(entry, []).insert(0, f"  call void @__cgp_fn_enter(i32 {fid})")
    loops = natural_loops(fn)
    ids: dict[int, int] = {}
    parent_of = loop_parents(loops)
    for h, body in loops:  # outermost first
        parent = parent_of[h]
        pid = ids[parent] if parent is not None else -2 - fid  # -2 - fid: per call of fn
        depth = HELPER_DEPTH if parent is None else em.loops[ids[parent]].depth + 1
        hb = fn.blocks[h]
        lid = len(em.loops)
        ids[h] = lid
        em.loops.append(
            LoopInfo(
                lid,
                -1,
                fn.name,
                hb.label,
                pid,
                depth,
                _loop_line(mod, fn, h, body),
                rotated=_header_once_per_iteration(fn, h, body),
                blocks=tuple(sorted(block_ids[k] for k in body)),
            )
        )
        em.before.setdefault(hb.instrs[hb.first_non_phi].line, []).append(
            probe_call(lid, pid, False)
        )
    for ins, callee, bi in _callees(fn, spans):
        traced = callee in mod.functions
        em.calls.append(
            CallSite(-1, fn.name, callee, traced, mod.location(ins.dbg)[1], block_ids[bi])
        )
        if traced:
            queue.append(callee)


def _instrument_region(mod: Module, r: Region, em: _Emitter, helpers: list[str]) -> None:
    fn = r.function
    uses = _use_map(fn)
    block_ids: dict[int, int] = {}
    for bi in sorted(r.blocks):
        lo, hi = r.blocks[bi]
        b = fn.blocks[bi]
        if r.begin is not None and bi == r.begin[0] and lo > 0:
            at, after = b.instrs[lo - 1].line, True  # right after the begin marker
        else:
            k = max(lo, b.first_non_phi)
            if k >= len(b.instrs):
                continue
            at, after = b.instrs[k].line, False
        block_ids[bi] = em.add_block(r.index, fn, bi, lo, hi, uses, False, at, after)
        for ins in b.instrs[lo:hi]:
            if mem_kind(ins.opcode):
                em.add_mem(r.index, fn, b, block_ids[bi], ins)
    for ins, callee, bi in _callees(fn, r.blocks):
        traced = callee in mod.functions
        em.calls.append(
            CallSite(
                r.index, fn.name, callee, traced, mod.location(ins.dbg)[1], block_ids.get(bi, -1)
            )
        )
        if traced:
            helpers.append(callee)
    _instrument_loops(mod, r, em, block_ids)


def _instrument_loops(mod: Module, r: Region, em: _Emitter, block_ids: dict[int, int]) -> None:
    fn = r.function
    begin_block = r.begin[0] if r.begin is not None else -1
    inside = set(r.blocks)
    loops = [(h, body) for h, body in natural_loops(fn) if body <= inside and h != begin_block]
    ids: dict[int, int] = {}
    parent_of = loop_parents(loops)
    for h, body in loops:  # outermost first
        parent = parent_of[h]
        pid = ids[parent] if parent is not None else -1
        depth = 1 if pid < 0 else em.loops[pid].depth + 1
        hb = fn.blocks[h]
        line = _loop_line(mod, fn, h, body)
        lid = len(em.loops)
        ids[h] = lid
        # LLVM's loop-load elimination turns `A[j] = f(A[j-1])` into a phi named
        # store_forwarded: the loop carries a dependence through memory the trace cannot see.
        carried = any(
            i.opcode == "phi" and "store_forwarded" in (i.result or "") for i in hb.instrs
        )
        em.loops.append(
            LoopInfo(
                lid,
                r.index,
                fn.name,
                hb.label,
                pid,
                depth,
                line,
                carried=carried,
                rotated=_header_once_per_iteration(fn, h, body),
                blocks=tuple(sorted(block_ids[k] for k in body if k in block_ids)),
            )
        )
        at = hb.instrs[hb.first_non_phi].line
        em.before.setdefault(at, []).append(probe_call(lid, pid, depth <= MARKED_DEPTH))
        if depth <= MARKED_DEPTH:
            for k in sorted({s for b in body for s in _cfg_succ(fn, b)} - set(body)):
                eb = fn.blocks[k]
                lo = r.blocks.get(k, (0, 0))[0]
                i = max(eb.first_non_phi, lo)
                if i < len(eb.instrs):
                    em.before.setdefault(eb.instrs[i].line, []).insert(
                        0, f"  call void @__cgp_loop_exit(i32 {lid})"
                    )


def _header_once_per_iteration(fn: Function, h: int, body) -> bool:
    """True unless the header is the loop's exit test (a while-form loop, whose header runs once
    more per entry than the body). A header that cannot leave the loop, or a latch that can
    (bottom-tested, possibly with a `break` in the header), runs once per iteration."""
    inside = set(body)
    if not _cfg_succ(fn, h) - inside:
        return True
    latches = [b for b in inside if h in _cfg_succ(fn, b)]
    return any(_cfg_succ(fn, b) - inside for b in latches)


def _cfg_succ(fn: Function, k: int) -> set[int]:
    index = {b.label: i for i, b in enumerate(fn.blocks)}
    return {index[s] for s in fn.blocks[k].successors if s in index}


def _loop_line(mod: Module, fn: Function, h: int, body: frozenset[int]) -> int:
    """Source line of a loop: the smallest line among its header's located instructions."""
    lines = [mod.location(i.dbg)[1] for k in body for i in fn.blocks[k].instrs if i.dbg]
    lines = [x for x in lines if x > 0]
    return min(lines) if lines else 0


_GLOBAL_ALIGN = re.compile(r"^(@[\w.$\"-]+ = .*(?:global|constant) .*), align \d+(.*)$")
GLOBAL_ALIGNMENT = 256  # what cudaMalloc guarantees: arrays start where a GPU's would


def _align_global(line: str) -> str:
    """Give a global array the alignment of a cudaMalloc'ed buffer."""
    m = _GLOBAL_ALIGN.match(line)
    if not m or not re.search(r"(?:global|constant) \[", line):
        return line
    return f"{m.group(1)}, align {GLOBAL_ALIGNMENT}{m.group(2)}"


def _render(
    mod: Module, em: _Emitter, add_region_decls: bool, arrays: tuple[str, ...], n_helpers: int = 0
) -> str:
    nb = max(len(em.blocks), 1)
    out: list[str] = []
    for i, line in enumerate(mod.lines):
        if line.startswith("@"):
            line = _align_global(line)
        for extra in em.before.get(i, ()):
            out.append(extra.replace("@NB@", str(nb)))
        out.append(line)
        for extra in em.after.get(i, ()):
            out.append(extra.replace("@NB@", str(nb)))
    nl = max(len(em.loops), 1)
    parents = ", ".join(f"i32 {lp.parent}" for lp in em.loops) or "i32 -1"
    depths = ", ".join(f"i32 {lp.depth}" for lp in em.loops) or "i32 0"
    out += [
        f"@__cgp_bbc = global [{nb} x i64] zeroinitializer",
        f"@__cgp_nbb = constant i32 {len(em.blocks)}",
        f"@__cgp_loop_parent = constant [{nl} x i32] [{parents}]",
        f"@__cgp_loop_depth = constant [{nl} x i32] [{depths}]",
        f"@__cgp_nloops = constant i32 {len(em.loops)}",
        f"@__cgp_nfuncs = constant i32 {n_helpers}",
        f"@__cgp_globals = constant [{max(len(arrays), 1)} x ptr] "
        f"[{', '.join(f'ptr @{a}' for a in arrays) or 'ptr null'}]",
        f"@__cgp_nglobals = constant i32 {len(arrays)}",
        "declare void @__cgp_mem(i64)",
        # the recording check inline (the link's -O1 inlines it): an access of a launch that
        # is not recorded costs a load and a branch, not a call
        "@__cgp_recording = external global i32",
        "define internal void @__cgp_mem_fast(i64 %r) alwaysinline {",
        "entry:",
        "  %f = load i32, ptr @__cgp_recording",
        "  %c = icmp ne i32 %f, 0",
        "  br i1 %c, label %rec, label %done",
        "rec:",
        "  call void @__cgp_mem(i64 %r)",
        "  br label %done",
        "done:",
        "  ret void",
        "}",
        *state_globals(),  # the loop probe inline (loopfast.py)
        "declare void @__cgp_loop(i32)",
        "declare void @__cgp_loop_exit(i32)",
        "declare void @__cgp_fn_enter(i32)",
        "declare void @__cgp_bb_h(i32)",
    ]
    declared = "\n".join(x for x in mod.lines if x.startswith("declare"))
    if add_region_decls:
        for name in ("__cgp_region_begin", "__cgp_region_end"):
            if f"@{name}(" not in declared:
                out.append(f"declare void @{name}(i32)")
    return "\n".join(out) + "\n"
