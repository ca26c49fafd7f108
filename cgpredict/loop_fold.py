"""Folding across the iterations of a loop nvcc unrolls whole, eq. (12f) (docs/models.md).

A loop of a constant trip count of at most ``compute.UNROLL_WHOLE`` iterations is unrolled
whole (``compute.loop_unroll``); the model counts its body's operations once an iteration.
After the unrolling, LLVM's instruction combining (nvcc's front end) simplifies the
straight-line code across the iterations: the blind int_hash's 16 rounds of murmur3's fmix32
lose a round's last ``h ^= h >> 16`` against the next round's first (x ^ (x >> 16) twice is
x for 32 bits) and merge the multiply by c2 with the next round's by c1 (one IMAD by their
product in its sm_90 SASS). Here each such loop is compiled at that level and its count taken
from the result:

* the loop alone becomes a function (``probe_text``): its live-ins parameters, its
  live-outs stored through pointer parameters, its back edge marked
  ``llvm.loop.unroll.full`` (what nvcc does to a constant trip of at most 32);
* LLVM's O3 pipeline runs on it (``optimise``: llvmlite's new pass manager, no
  vectorisation);
* both the loop as traced and the result are counted the model's way (``kept_counts``):
  every operation at its PTX-equivalent cost (``compute.compute_counts``) but the integer and
  branch ones that follow only induction variables and invariants (the affine share the
  model folds already, ``parallelism.affine_share``, ``ThreadBodies.unrolled_savings``)::

    fold(L) = sum_b execs_b x K(b) - entries(L) x K(opt(L))   when > 0, else 0       (12f)

``K(b)`` the kept instructions of one execution of the loop's block b, ``K(opt(L))`` those of
the optimised straight-line code (one entry), ``execs_b``/``entries(L)`` per thread. A loop
whose optimised code is not one straight-line block (still a loop, or branches left) or
that the probe cannot express (a call to a function of the program, more than one way in)
has no fold.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from .compute import ComputeCounts, compute_counts, integer_insts
from .frontend.tracefile import Trace
from .instrument.irtext import CAST_OPCODES, Function, Instr, Module, parse_module, split_operands
from .instrument.opkeys import _leading_type, _op_key, _strip_flags, _use_map
from .parallelism import ir_module

__all__ = ["LoopFold", "LoopFolds", "fold_counts", "kept_counts", "loop_folds", "optimise",
           "probe_text"]

PROBE = "__cgp_fold"  # the probe function's name
_LLVM = threading.Lock()  # held by optimise (its own LLVM context, fd 2 redirected)
_ENTRY, _EXIT, _OUT = "__cgp_entry", "__cgp_exit", "__cgp_out"
_NAME = r"(?:[\w.$-]+|\"[^\"]+\")"
_VALUE_REF = re.compile(r"%(" + _NAME[3:-1] + r")")
_LABEL_REF = re.compile(r"label %(" + _NAME[3:-1] + r")")
_PHI_PAIR = re.compile(r"\[\s*([^,\]]+),\s*%(" + _NAME[3:-1] + r")\s*\]")
_GLOBAL_REF = re.compile(r"@(" + _NAME[3:-1] + r")")
_ATTACHMENT = re.compile(r",\s*![\w.]+\s+!\d+")
_ATTR_GROUP = re.compile(r"\s#\d+\b")
_NUMBERED = re.compile(r"%(\d+)\b")
#: intrinsics that are no instruction of the thread (hints, debug, lifetimes)
_NO_CODE = ("llvm.assume", "llvm.lifetime", "llvm.dbg", "llvm.experimental.noalias",
            "llvm.invariant", "llvm.pseudoprobe")
_TYPE_WORD = re.compile(r"^(?:i\d+|half|bfloat|float|double|ptr|void|<.*>|\{.*\}|\[.*\])$")


@dataclass(frozen=True)
class LoopFold:
    """One loop nvcc unrolls whole and its fold: what one execution of each of its blocks
    keeps (trace block id, counts) and what the optimised straight-line code of one entry
    keeps (eq. (12f))."""

    loop: int
    header: int  # the trace block id of the loop's header
    header_per_entry: float  # the header's executions an entry (its trips when rotated)
    kept: tuple[tuple[int, ComputeCounts], ...]
    folded: ComputeCounts

    def saving(self, per_thread: Mapping[int, float]) -> ComputeCounts | None:
        """The instructions a thread saves (eq. (12f)), ``per_thread`` its executions of each
        block; None when the optimised code keeps as many or more."""
        ref = ComputeCounts(0.0, 0.0, 0.0)
        for block, counts in self.kept:
            ref = ref.plus(counts, per_thread.get(block, 0.0))
        entries = per_thread.get(self.header, 0.0) / self.header_per_entry
        diff = ref.plus(self.folded, -entries)
        return diff if diff.total > 1e-9 else None


@dataclass(frozen=True)
class LoopFolds:
    """The folds of a region's loops (eq. (12f)); empty: none."""

    folds: tuple[LoopFold, ...] = ()

    def saving(self, per_thread: Mapping[int, float]) -> ComputeCounts:
        """What every fold saves a thread together (zero counts when none does)."""
        out = ComputeCounts(0.0, 0.0, 0.0)
        for fold in self.folds:
            got = fold.saving(per_thread)
            if got is not None:
                out = out.plus(got)
        return out


def loop_folds(trace: Trace, loops: Iterable[int], unroll: Callable[[int], int]) -> LoopFolds:
    """The folds (eq. (12f)) of the ``loops`` (trace loop ids; -1 ignored) that nvcc unrolls
    whole: ``unroll(loop)`` equals the loop's trips an entry, the same in every entry
    (a constant trip count), at least 2."""
    h = trace.header
    out = []
    for lid in loops:
        if lid < 0:
            continue
        entries = float(trace.loop_entries[:, lid].sum())
        trips = float(trace.loop_iters[:, lid].sum()) / entries if entries else 0.0
        if trips < 2 or abs(trips - round(trips)) > 1e-9 or unroll(lid) != round(trips):
            continue
        lp = h.loops[lid]
        labels = (lp.header, *(h.blocks[b].label for b in lp.blocks
                               if h.blocks[b].label != lp.header))
        got = fold_counts(h.ir_text, lp.function, labels)
        if got is None:
            continue
        kept, folded = got
        ids = {h.blocks[b].label: b for b in lp.blocks}
        head = ids[lp.header]
        per_entry = float(trace.bb_counts[:, head].sum()) / entries
        out.append(LoopFold(lid, head, per_entry,
                            tuple((ids[lab], c) for lab, c in kept if lab in ids), folded))
    return LoopFolds(tuple(out))


@functools.lru_cache(maxsize=256)
def fold_counts(ir_text: str, function: str, labels: tuple[str, ...]):
    """((label, kept counts of one execution) per loop block, kept counts of the optimised
    code), or None (no probe, no straight-line result)."""
    mod = ir_module(ir_text)
    if function not in mod.functions:
        return None
    probe = probe_text(mod, mod.functions[function], labels)
    if probe is None:
        return None
    text, data = probe
    try:
        optimised = optimise(text)
    except (RuntimeError, ValueError):
        return None
    fn = parse_module(optimised).functions.get(PROBE)
    if fn is None or len(fn.blocks) != 1:
        return None
    before = kept_counts(parse_module(text).functions[PROBE], data)
    kept = tuple((lab, before[_label(lab)]) for lab in labels if _label(lab) in before)
    return kept, kept_counts(fn, data)[fn.blocks[0].label]


@functools.cache
def _machine():
    """The host's target machine (llvmlite), created once."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple().create_target_machine()


def optimise(text: str) -> str:
    """``text`` (a module) after LLVM's O3 pipeline (llvmlite's new pass manager) with loop
    unrolling and without vectorisation (the GPU's threads are its vectors)."""
    import llvmlite.binding as llvm

    with _LLVM:  # a region's kernels are analysed in threads: one probe at a time
        mod = llvm.parse_assembly(text, context=llvm.create_context())
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_unrolling = True
        pto.loop_vectorization = False
        pto.slp_vectorization = False
        pto.loop_interleaving = False
        pb = llvm.create_pass_builder(_machine(), pto)
        with _llvm_warnings_dropped():
            pb.getModulePassManager().run(mod, pb)
        return str(mod)


@contextlib.contextmanager
def _llvm_warnings_dropped():
    """Run the block with LLVM's warnings on file descriptor 2 dropped: a loop O3 cannot
    unroll whole draws "loop not unrolled" (the loop then has no fold); any other line
    written meanwhile is passed on (held by ``_LLVM``: two redirections interleaved would
    lose the descriptor)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            for line in held.read().decode(errors="replace").splitlines(keepends=True):
                if "loop not unrolled" not in line:
                    sys.stderr.write(line)


def _label(name: str) -> str:
    """A label or value name as the probe spells it: a numbered one renamed (the probe's
    numbering would differ), any other unchanged."""
    return f"__cgp_v{name}" if name.isdigit() else name


def _clean(text: str) -> str:
    """An instruction's text without metadata attachments and attribute groups."""
    return _ATTR_GROUP.sub("", _ATTACHMENT.sub("", text.split(", !dbg")[0]))


def operands(ins: Instr) -> list[str]:
    """The value names an instruction uses (labels not included)."""
    body = _clean(ins.text)
    if ins.opcode == "phi":
        return [v.strip()[1:].strip('"') for v, _ in _PHI_PAIR.findall(body)
                if v.strip().startswith("%")]
    return [m.strip('"') for m in _VALUE_REF.findall(_LABEL_REF.sub("", body))]


def value_type(ins: Instr) -> str | None:
    """The IR type of an instruction's result, or None where the probe does not express it
    (aggregates, vector compares)."""
    op = ins.opcode
    words = ins.text.split()
    rest = " ".join(_strip_flags(words[words.index(op) + 1:])) if op in words else ""
    if op in ("icmp", "fcmp"):
        return None if "<" in rest.split(",")[0] else "i1"
    if op in ("getelementptr", "alloca"):
        return "ptr"
    if op in CAST_OPCODES:
        m = re.search(r"\bto\s+(\S+)", _clean(ins.text))
        return m.group(1) if m else None
    if op == "call":
        for w in _strip_flags(rest.split()):
            if w in ("noundef", "zeroext", "signext", "inreg", "nonnull", "fastcc"):
                continue
            return w if _TYPE_WORD.match(w) and w != "void" else None
        return None
    if op == "select":
        parts = split_operands(rest)
        return _leading_type(parts[1]) if len(parts) > 1 else None
    if op in ("load", "phi", "freeze", "fneg") or op in _BINARY:
        return _leading_type(rest) or None
    return None


_BINARY = frozenset("add sub mul shl lshr ashr and or xor sdiv udiv srem urem fadd fsub fmul "
                    "fdiv frem".split())


def _param_types(mod: Module, fn: Function) -> dict[str, str]:
    """The types of ``fn``'s parameters by name, from its ``define`` line."""
    line = mod.lines[fn.define_line]
    start = line.index("(", line.index("@"))
    depth, end = 0, start
    for end, ch in enumerate(line[start:], start):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            break
    out = {}
    for p in split_operands(line[start + 1:end]):
        names = re.findall(r"%(" + _NAME[3:-1] + r")\s*$", p)
        if names:
            out[names[0].strip('"')] = _leading_type(p)
    return out


def _induction(header: list[Instr], defs: Mapping[str, Instr], inside: set[str]) -> set[str]:
    """The header phis that are induction variables: an integer phi whose value from the
    loop is an add or subtract of itself and a constant or loop-invariant value
    (loopbody's definition)."""
    out = set()
    for ins in header:
        if ins.opcode != "phi" or not ins.result or not (value_type(ins) or "").startswith("i"):
            continue
        me = ins.result[1:].strip('"')
        for name in operands(ins):
            upd = defs.get(name)
            if name in inside and upd is not None and upd.opcode in ("add", "sub"):
                used = operands(upd)
                others = [u for u in used if u != me]
                if used.count(me) == 1 and not any(u in inside for u in others):
                    out.add(me)
    return out


def _tainted(fn: Function, data: frozenset[str]) -> set[str]:
    """The values of ``fn`` that depend on data (parallelism.affine_share's taint): loads,
    calls (not the plain port's opaque pointer), phis that are not induction variables, the
    ``data`` parameters (the loop's carried values as it is entered), and what uses them."""
    instrs = [ins for b in fn.blocks for ins in b.instrs]
    defs = {ins.result[1:].strip('"'): ins for ins in instrs if ins.result}
    induction = _induction(instrs, defs, set(defs))
    out = set(data)
    for name, ins in defs.items():
        if ins.opcode in ("load", "atomicrmw", "cmpxchg") or (
            ins.opcode == "call" and not re.search(r"\basm\b", ins.text)
        ) or (ins.opcode == "phi" and name not in induction):
            out.add(name)
    changed = True
    while changed:
        changed = False
        for name, ins in defs.items():
            if name not in out and any(o in out for o in operands(ins)):
                out.add(name)
                changed = True
    return out


def kept_counts(fn: Function, data: frozenset[str]) -> dict[str, ComputeCounts]:
    """What one execution of each block of ``fn`` keeps in the model's count, by label
    (eq. (12f)'s K): every operation at its PTX-equivalent cost but the integer and branch
    ones (compute.integer_insts) that no ``data`` reaches (``_tainted``: the affine ones,
    which the model folds per unrolled trip already) and intrinsics that are no code."""
    uses = _use_map(fn)
    tainted = _tainted(fn, data)
    out = {}
    for b in fn.blocks:
        ops: Counter = Counter()
        for ins in b.instrs:
            if ins.opcode == "call" and (ins.callee or "").startswith(_NO_CODE):
                continue
            key = _op_key(ins, uses)
            name = ins.result[1:].strip('"') if ins.result else ""
            data_op = name in tainted or any(o in tainted for o in operands(ins))
            if integer_insts([(*key, 1)]) > 0 and not data_op:
                continue
            ops[key] += 1
        out[b.label] = compute_counts(ops)
    return out


def _declarations(mod: Module, texts: list[str]) -> list[str] | None:
    """The declarations the probe needs for the globals and functions ``texts`` (cleaned
    instructions) name: a global as an external one of its type (its contents unknown, as a
    kernel's arrays are), a declared function's ``declare`` line; None when one names a
    function the program defines (the probe would not see its code)."""
    out: dict[str, str] = {}
    for text in texts:
        for raw in _GLOBAL_REF.findall(text):
            name = raw.strip('"')
            if raw in out:
                continue
            if name in mod.functions:
                return None
            line = _global_line(mod, raw)
            if line is None:
                return None
            out[raw] = line
    return list(out.values())


def _global_line(mod: Module, raw: str) -> str | None:
    """The probe's declaration of global or function ``@raw``."""
    for line in mod.lines:
        if line.startswith("declare") and f"@{raw}(" in line:
            return _ATTR_GROUP.sub("", line.split(" !dbg")[0]).rstrip()
        if line.startswith(f"@{raw} = "):
            m = re.match(r"@\S+ = .*?\b(?:global|constant)\s+(.*)$", line)
            return f"@{raw} = external global {_leading_type(m.group(1))}" if m else None
    return None


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[\w.$-]+", name) else f'"{name}"'


def _loop_values(mod: Module, fn: Function, labels: tuple[str, ...]):
    """(live-ins {name: type}, live-outs [(name, type)], data parameters) of the loop
    ``labels`` of ``fn``, or None when one's type is not expressible or the header has more
    than one way in."""
    inside = set(labels)
    blocks = [b for lab in labels for b in fn.blocks if b.label == lab]
    defs = {ins.result[1:].strip('"'): ins for b in fn.blocks for ins in b.instrs if ins.result}
    defined = {ins.result[1:].strip('"') for b in blocks for ins in b.instrs if ins.result}
    got = _live_ins([i for b in blocks for i in b.instrs], defined, defs, _param_types(mod, fn))
    if got is None:
        return None
    live_in, pre = got
    phis = [ins for ins in blocks[0].instrs if ins.opcode == "phi"]
    ways = {lab.strip('"') for ins in phis for _, lab in _PHI_PAIR.findall(_clean(ins.text))
            if lab.strip('"') not in inside}
    if len(ways) > 1 or any(value_type(ins) is None for ins in phis):
        return None
    induction = _induction(phis, defs, defined)
    data = {v.strip()[1:].strip('"') for ins in phis if ins.result[1:].strip('"') not in induction
            for v, lab in _PHI_PAIR.findall(_clean(ins.text))
            if lab.strip('"') not in inside and v.strip().startswith("%")}
    outs: list[tuple[str, str]] = []
    for ins in (i for b in fn.blocks if b.label not in inside for i in b.instrs):
        for name in operands(ins):
            if name in defined and name not in dict(outs):
                ty = value_type(defs[name])
                if ty is None:
                    return None
                outs.append((name, ty))
    return live_in, pre, outs, frozenset(data)


#: what a loop's exit test may be computed from outside the loop and copied into the probe
_BOUND_OPS = frozenset("add sub mul shl and or xor trunc zext sext".split())


def _live_ins(instrs: list[Instr], defined: set[str], defs: Mapping[str, Instr],
              params: Mapping[str, str]):
    """({name: type} of the loop's live-ins, the instructions outside the loop that compute
    its exit tests' bounds, copied into the probe so that O3 sees a constant trip count:
    ``k < kk + 32`` with ``kk + 32`` computed before the loop; integer arithmetic only, at
    most 3 deep), or None when a live-in's type is not expressible."""
    live_in: dict[str, str] = {}
    pre: dict[str, Instr] = {}

    def need(name: str, depth: int) -> bool:
        ins = defs.get(name)
        if name in defined or name in live_in or name in pre:
            return True
        if depth and depth <= 3 and ins is not None and ins.opcode in _BOUND_OPS \
                and "@" not in ins.text:
            if all(need(o, depth + 1) for o in operands(ins)):
                pre[name] = ins
                return True
            return False
        ty = params.get(name) or (value_type(ins) if ins is not None else None)
        live_in[name] = ty or ""
        return bool(ty)

    for ins in instrs:
        if not all(need(o, int(ins.opcode == "icmp")) for o in operands(ins)):
            return None
    return live_in, tuple(pre.values())


def probe_text(mod: Module, fn: Function, labels: tuple[str, ...]
               ) -> tuple[str, frozenset[str]] | None:
    """The loop of blocks ``labels`` (header first) of ``fn`` as a module of its own
    (eq. (12f)): a function ``PROBE`` whose parameters are the loop's live-ins and one
    pointer per live-out (stored at the exit), whose back edge asks for full unrolling; and
    the names of the parameters that enter the loop's carried values (its data). None when
    the loop cannot be expressed so."""
    if not labels or any(lab not in {b.label for b in fn.blocks} for lab in labels):
        return None
    values = _loop_values(mod, fn, labels)
    if values is None:
        return None
    live_in, pre, outs, data = values
    inside = set(labels)
    lines: list[str] = [f"{_ENTRY}:", *(f"  {i.result} = {_clean(i.text)}" for i in pre),
                        f"  br label %{_quoted(labels[0])}"]
    for lab in labels:
        b = fn.block(lab)
        lines.append(f"{_quoted(_label(lab))}:")
        for ins in b.instrs:
            text = _clean(ins.text)
            if ins.opcode == "phi":
                text = _PHI_PAIR.sub(lambda m: m.group(0) if m.group(2).strip('"') in inside
                                     else f"[ {m.group(1)}, %{_ENTRY} ]", text)
            text = _LABEL_REF.sub(lambda m: m.group(0) if m.group(1).strip('"') in inside
                                  else f"label %{_EXIT}", text)
            if ins.opcode in ("br", "switch") and labels[0] in b.successors:
                text += ", !llvm.loop !0"
            lines.append(f"  {ins.result} = {text}" if ins.result else f"  {text}")
    decls = _declarations(mod, lines)
    if decls is None:
        return None
    lines += [f"{_EXIT}:"] + [f"  store {ty} %{_quoted(n)}, ptr %{_OUT}{k}"
                              for k, (n, ty) in enumerate(outs)] + ["  ret void"]
    args = [f"{ty} %{_quoted(n)}" for n, ty in live_in.items()]
    args += [f"ptr %{_OUT}{k}" for k in range(len(outs))]
    targets = [line for line in mod.lines[:40] if line.startswith("target ")]
    text = "\n".join([*targets, *decls, f"define void @{PROBE}({', '.join(args)}) {{",
                      *lines, "}", "!0 = distinct !{!0, !1}",
                      '!1 = !{!"llvm.loop.unroll.full"}', ""])
    return _NUMBERED.sub(r"%__cgp_v\1", text), frozenset(_label(d) for d in data)
