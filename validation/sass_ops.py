#!/usr/bin/env python3
"""What one arithmetic operation expands to in sm_90 SASS, by pipe class (the source of
``cgpredict/compute.py``'s ``SASS_EXPANSION`` table, checked by ``tests/test_sass_ops.py``).

``cuda/ops/arith_ops.cu`` holds one kernel per operation (``o[i] = a[i] / b[i]``,
``o[i] = sinf(a[i]) + b[i]``, ...) and one baseline per type (``base_i32``: ``o[i] = a[i] +
b[i]``). This

1. compiles it with ``nvcc -cubin -O3 -arch=sm_90`` (no fast-math: IEEE division and square
   root, CUDA's default) and disassembles it with ``nvdisasm -c``;
2. follows each kernel's **fast path**: the shortest path from its first instruction to an
   ``EXIT``. A predicated branch may go either way; the path that skips a slow path (the
   ``CALL`` to IEEE division's ``$__internal_..._slowpath``, sinf's Payne-Hanek reduction
   for |x| >= 105615) is the shorter one, and it is the one ordinary operands take (the
   CUDA C Programming Guide, "Sine and Cosine": the slow path is for large arguments);
   subroutines appended after the kernel are not followed, a ``CALL`` counts where it stands;
3. counts the path's instructions by pipe (``sass_pipe``: the classes of
   ``cgpredict/pipes.py``; moves, branches, memory and uniform-datapath instructions have
   none) and subtracts the baseline of the operation's type; a binary operation that
   replaces the baseline's add gets that add back (``BINARY``).

Usage::

    python validation/sass_ops.py [--json]

Stdlib only (nvcc on PATH; nvdisasm: ``pip install nvidia-cuda-nvdisasm``).
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import sass_counts  # noqa: E402

from cgpredict.pipes import PIPE_CLASSES  # noqa: E402

SOURCE = HERE / "cuda" / "ops" / "arith_ops.cu"
NVCC_FLAGS = ("-cubin", "-O3", "-arch=sm_90")
#: operations that replace the add (their kernel has no ``+ b[i]`` of its own)
BINARY = frozenset(
    "sdiv_i32 srem_i32 udiv_i32 urem_i32 mul_i32 fdiv_f32 pow_f32 fadd_f64 fmul_f64 fma_f64 "
    "fdiv_f64".split()
)
#: the class of each baseline's add
BASE_CLASS = {"i32": "int_add", "f32": "fp32", "f64": "fp64"}
#: a remainder whose quotient is computed too (``x / y`` and ``x % y``, an index
#: decomposition): nvcc computes it from the quotient, x - (x / y) * y; its expansion is the
#: kernel of both (the xor that keeps them replaces the baseline's add) less the division's
DIVREM = {"srem_quotient_i32": ("sdivrem_i32", "sdiv_i32"),
          "urem_quotient_i32": ("udivrem_i32", "udiv_i32")}

_SECTION = re.compile(r"^\s*\.section\s+\.text\.(\w+)\s*,", re.M)
_INST = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*$")
_LABEL = re.compile(r"^\s*(\.L[\w$]+):\s*$")
_TARGET = re.compile(r"`\(\s*(\.L[\w$]+)\s*\)")
_PRED = re.compile(r"^@!?U?P[T0-9]+\s+")

_CMP = frozenset("FSETP FSEL FMNMX FSET ISETP IMNMX VIMNMX SEL ICMP DSETP".split())
#: instructions besides MUFU that issue to the SFU (XU) pipe on sm_90: FCHK, IEEE division's
#: range check (ncu's smsp__inst_executed_pipe_xu: 2 a float division, RCP and FCHK, in the
#: user kernels sfu_heavy, softmax and nbody, validation/measured/h100-session-2026-11-26)
_XU = frozenset(("MUFU", "FCHK"))
_FP32 = frozenset("FADD FMUL FFMA FADD32I FMUL32I FFMA32I".split())
_FP64 = frozenset("DADD DMUL DFMA".split())
_ADD = frozenset("IADD3 IADD VIADD LOP3 LOP IABS LEA PLOP3 IADD32I".split())
_SHIFT = frozenset("SHF SHL SHR".split())
_CVT = frozenset("I2F F2I F2F I2FP F2FP I2I FRND".split())


def sass_pipe(text: str) -> str | None:
    """The pipe class (cgpredict/pipes.py) of one SASS instruction's text without its
    predicate, or None (moves, branches, memory, uniform-datapath ``U*`` instructions)."""
    opcode, _, operands = text.partition(" ")
    op, *mods = opcode.split(".")
    if op in _XU:
        return "sfu"
    if op in _FP64:
        return "fp64"
    if op in _FP32:
        return "fp32"
    if op in _CMP:
        return "int_cmp"
    if op in _CVT:
        return "cvt64" if any("64" in m for m in mods) else "cvt"
    if op in _SHIFT:
        return "int_shift"
    if op in _ADD:
        return "int_add"
    if op in ("IMAD", "IMUL"):
        if "MOV" in mods or re.search(r"\bRZ,\s*RZ\b", operands):
            return None  # IMAD.MOV / IMAD.U32 Rd, RZ, RZ, x: a move on the FMA pipe
        if "IADD" in mods:
            return "int_add"
        if "SHL" in mods:
            return "int_shift"
        return "int_mul"
    return None


def kernel_bodies(sass: str) -> dict[str, list[tuple[str, str | None]]]:
    """Each kernel's instructions up to its first subroutine, as (text, label) pairs: the
    instruction's text without predicate-free stripping, and the label that precedes it."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    parts = _SECTION.split(sass)
    for name, body in zip(parts[1::2], parts[2::2]):
        insts: list[tuple[str, str | None]] = []
        label = None
        for line in body.splitlines():
            if line.strip().startswith("$"):  # a subroutine: not the kernel's own code
                break
            m = _LABEL.match(line)
            if m:
                label = m.group(1)
                continue
            m = _INST.match(line)
            if m:
                insts.append((m.group(2), label))
                label = None
        out[name] = insts
    return out


#: what a path through a CALL costs on top of its instructions: the call is the slow path
#: (IEEE division's and sqrtf's ``$__internal_..._slowpath``), never the fast one, even where
#: its set-up (MOV, CALL, MOV, BRA) is no longer than the inline code it skips (sqrtf's FMUL,
#: FMUL, FFMA, FFMA after MUFU.RSQ: the branch to them is the one ordinary operands take)
SLOW_CALL = 1000


def fast_path(insts: list[tuple[str, str | None]]) -> list[str]:
    """The instructions (with their predicates) of the shortest path from the first
    instruction to an EXIT that calls no subroutine (SLOW_CALL)."""
    at = {label: i for i, (_, label) in enumerate(insts) if label}
    dist, prev, heap = {0: 1}, {}, [(1, 0)]
    while heap:
        d, i = heapq.heappop(heap)
        text = insts[i][0]
        predicated = bool(_PRED.match(text))
        op = _PRED.sub("", text).split(" ")[0].split(".")[0]
        if op == "EXIT" and not predicated:
            path = [i]
            while path[-1] in prev:
                path.append(prev[path[-1]])
            return [insts[j][0] for j in reversed(path)]
        nexts = []
        if op in ("BRA", "JMP"):
            m = _TARGET.search(text)
            nexts.append(at[m.group(1)] if m else i)
            if predicated:
                nexts.append(i + 1)
        elif op not in ("RET", "EXIT") or predicated:
            nexts.append(i + 1)
        step = 1 + (SLOW_CALL if op == "CALL" else 0)
        for j in nexts:
            if j < len(insts) and d + step < dist.get(j, 1 << 30):
                dist[j], prev[j] = d + step, i
                heapq.heappush(heap, (d + step, j))
    raise ValueError("no path to EXIT")


_REG = re.compile(r"\b(U?R\d+|U?P[T\d])\b")
_SETS_PRED_ONLY = frozenset("ISETP FSETP DSETP FCHK PLOP3 FSET ICMP".split())
_NO_DEST = frozenset("STG STS ST RED ATOM BRA CALL RET EXIT BSSY BSYNC BAR NOP".split())


def _operands(text: str) -> tuple[str, list[str], list[str], str | None]:
    """(opcode, destination and source registers of ``text``, its guard predicate): a
    leading run of predicates and at most one register are written (``IADD3 R2, P0, R4``,
    ``LOP3.LUT P1, R6, R5``; only predicates for a compare)."""
    guard = None
    m = _PRED.match(text)
    if m:
        guard = m.group(0).strip().lstrip("@!").strip()
        text = text[m.end():]
    opcode, _, rest = text.partition(" ")
    op, *mods = opcode.split(".")
    types = [m for m in mods if m[:1] in "FSU" and m[1:].isdigit()]  # F64, S32, U64 ...
    double = op.startswith("D") and op != "DEPBAR"
    wide_dest = double or "WIDE" in mods or "64" in mods or (types[:1] and "64" in types[0])
    wide_src = double or any("64" in t for t in types[1:] or types)
    ops = [o.strip() for o in rest.split(",") if o.strip()]
    dests: list[str] = []
    k = 0
    if opcode.split(".")[0] not in _NO_DEST:
        reg_seen = opcode.split(".")[0] in _SETS_PRED_ONLY
        while k < len(ops):
            name = _REG.search(ops[k])
            if not name or ops[k].startswith(("[", "desc", "c[")):
                break
            is_pred = name.group(1).lstrip("U").startswith("P")
            if not is_pred and reg_seen:
                break
            reg_seen = reg_seen or not is_pred
            dests.append(name.group(1))
            k += 1
    srcs = [r for o in ops[k:] for r in _REG.findall(o)]
    if "WIDE" in mods and srcs:  # IMAD.WIDE Rd, Ra, b, Rc: only the addend is a pair
        srcs = srcs[:-1] + _widen(srcs[-1:], True)
    return opcode, _widen(dests, bool(wide_dest)), _widen(srcs, wide_src), guard


def _widen(regs: list[str], wide: bool) -> list[str]:
    """``regs`` with the second register of each pair when the instruction is 64-bit."""
    if not wide:
        return regs
    out = list(regs)
    for r in regs:
        if r.startswith("R"):
            out.append(f"R{int(r[1:]) + 1}")
    return out


def op_slice(path: list[str]) -> list[str]:
    """The instructions of ``path`` that compute the stored value from the loaded ones:
    those reading a loaded value (forward, through registers and predicates), the constants
    they read (backward: the moves of immediates and constant-bank values that set them
    up), the branches on such a predicate and
    the convergence barriers (BSSY/BSYNC) around them. Address arithmetic, the loads and
    the store are not in it."""
    parsed = [_operands(t) for t in path]
    tainted: set[str] = set()
    keep = [False] * len(path)
    for i, (opcode, dests, srcs, guard) in enumerate(parsed):
        op = opcode.split(".")[0]
        if op == "LDG":
            tainted.update(dests)
        elif op in ("BSSY", "BSYNC"):
            keep[i] = True
        elif op not in ("STG", "EXIT") and (
            any(r in tainted for r in srcs) or (guard and guard in tainted)
        ):
            keep[i] = True
            tainted.update(d for d in dests if d not in ("PT", "RZ"))
        elif not guard:
            tainted.difference_update(dests)  # overwritten by an unrelated value
    needed = {r for i, p in enumerate(parsed) if keep[i] for r in p[2]}
    for i in range(len(path) - 1, -1, -1):  # the constants the kept instructions read
        opcode, dests, srcs, _ = parsed[i]
        constant = all(r in ("RZ", "PT") or r.startswith("U") for r in srcs)
        if not keep[i] and constant and opcode.split(".")[0] not in ("LDG", "S2R", "LDC") \
                and any(d in needed for d in dests if d not in ("PT", "RZ")):
            keep[i] = True
            needed.update(srcs)
    return [t for t, k in zip(path, keep) if k]


def path_classes(path: list[str]) -> dict[str, int]:
    """Instructions of ``path`` per pipe class, plus ``total`` (every instruction)."""
    counts = dict.fromkeys(PIPE_CLASSES, 0)
    for text in path:
        cls = sass_pipe(_PRED.sub("", text))
        if cls:
            counts[cls] += 1
    counts["total"] = len(path)
    return counts


def expansions(sass: str) -> dict[str, dict[str, int]]:
    """Per operation kernel of arith_ops.cu: the SASS instructions by class of its
    operation (``op_slice`` of its fast path), less the add a unary kernel's ``+ b[i]``
    adds (the baseline kernels check that an add is one instruction of its class)."""
    out = {}
    for name, insts in kernel_bodies(sass).items():
        counts = path_classes(op_slice(fast_path(insts)))
        ty = name.rsplit("_", 1)[1]
        if name not in BINARY and not name.startswith("base_"):
            counts[BASE_CLASS[ty]] -= 1
            counts["total"] -= 1
        out[name] = counts
    for key, (both, div) in DIVREM.items():
        if both in out and div in out:
            out[key] = {c: out[both][c] - out[div][c] for c in out[both]}
    return out


#: the SASS check's class (sass_counts.sass_class) of each baseline's add: FADD fp32, IADD3
#: integer, DADD other (the check keeps FP64 in other)
BASE_CHECK_CLASS = {"i32": "integer", "f32": "fp32", "f64": "other"}


def check_classes(path: list[str]) -> dict[str, int]:
    """Instructions of ``path`` (no memory instruction: an ``op_slice``) per SASS check class
    (``sass_counts.sass_class``): fp32, integer, branch, other."""
    counts = dict.fromkeys(("fp32", "integer", "branch", "other"), 0)
    for text in path:
        counts[sass_counts.sass_class(_PRED.sub("", text).split(" ")[0])] += 1
    return counts


def check_expansions(sass: str) -> dict[str, dict[str, int]]:
    """Per operation kernel of arith_ops.cu: its operation's fast-path instructions
    (``op_slice``) in the SASS check's classes (``sass_counts.sass_class``: FFMA and FCHK
    fp32, IADD3/ISETP/IMAD integer, the test branch, MUFU/BSSY/BSYNC/moves other), less a
    unary kernel's add as ``expansions`` does: how the check splits what cgpredict counts
    (validation/sass_model.EXPANSION_CLASSES)."""
    out = {}
    for name, insts in kernel_bodies(sass).items():
        counts = check_classes(op_slice(fast_path(insts)))
        ty = name.rsplit("_", 1)[1]
        if name not in BINARY and not name.startswith("base_"):
            counts[BASE_CHECK_CLASS[ty]] -= 1
        out[name] = counts
    for key, (both, div) in DIVREM.items():
        if both in out and div in out:
            out[key] = {c: out[both][c] - out[div][c] for c in out[both]}
    return out


#: the kinds of a dependent step (compute.SASS_CHAIN): MUFU (sfu), FP64 arithmetic (fp64),
#: any other instruction that writes a register (alu: FP32, integer, moves, compares); the
#: latencies rank the paths only (H100's calibrated ones, calibrated.raw.json)
CHAIN_WEIGHTS = {"sfu": 17.0, "fp64": 8.0, "alu": 4.0}


def _step_kind(text: str) -> str:
    """The dependent-step kind (CHAIN_WEIGHTS) of one SASS instruction."""
    cls = sass_pipe(_PRED.sub("", text))
    return cls if cls in ("sfu", "fp64") else "alu"


def dependent_chain(slice_: list[str]) -> dict[str, int]:
    """The steps, by kind (CHAIN_WEIGHTS), of the longest register-dependence path through
    an operation's slice (op_slice): from its loaded operands to the last value it computes.
    Branches, barriers and the predicate a branch tests are control, not data: the fast
    path's result does not wait for them (the warp's issue does, which the model prices as
    instructions)."""
    ready: dict[str, tuple[float, dict[str, int]]] = {}
    best: tuple[float, dict[str, int]] = (0.0, dict.fromkeys(CHAIN_WEIGHTS, 0))
    for text in slice_:
        opcode, dests, srcs, guard = _operands(text)
        if opcode.split(".")[0] in _NO_DEST or not dests:
            continue
        ins = [ready[r] for r in srcs + ([guard] if guard else []) if r in ready]
        t0, steps = max(ins, key=lambda x: x[0], default=(0.0, dict.fromkeys(CHAIN_WEIGHTS, 0)))
        kind = _step_kind(text)
        out = (t0 + CHAIN_WEIGHTS[kind], {**steps, kind: steps[kind] + 1})
        for d in dests:
            if d not in ("PT", "RZ"):
                ready[d] = out
        best = max(best, out, key=lambda x: x[0])
    return best[1]


def chains(sass: str) -> dict[str, dict[str, int]]:
    """Per operation kernel of arith_ops.cu: dependent_chain of its operation's slice, less
    the add a unary kernel's ``+ b[i]`` puts at the end of the path (one step of its type's
    class: fp64 for double, alu otherwise)."""
    out = {}
    for name, insts in kernel_bodies(sass).items():
        steps = dependent_chain(op_slice(fast_path(insts)))
        ty = name.rsplit("_", 1)[1]
        if name not in BINARY and not name.startswith("base_"):
            kind = "fp64" if ty == "f64" else "alu"
            steps[kind] = max(steps[kind] - 1, 0)
        out[name] = steps
    return out


def compile_sass(nvcc: str = "nvcc") -> str:
    """The ``nvdisasm -c`` listing of arith_ops.cu built for sm_90."""
    tool = sass_counts.find_nvdisasm()
    if tool is None:
        raise RuntimeError(f"nvdisasm not found: {sass_counts.INSTALL_HINT}")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "arith_ops.cubin"
        subprocess.run([nvcc, *NVCC_FLAGS, "-o", str(cubin), str(SOURCE)], check=True,
                       capture_output=True, text=True)
        return subprocess.run([tool, "-c", str(cubin)], check=True, capture_output=True,
                              text=True).stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--chain", action="store_true",
                    help="print each operation's dependent chain (steps by kind) instead")
    ap.add_argument("--check-classes", action="store_true",
                    help="print each operation's instructions in the SASS check's classes")
    args = ap.parse_args(argv)
    sass = compile_sass(args.nvcc)
    table = (chains(sass) if args.chain else check_expansions(sass) if args.check_classes
             else expansions(sass))
    if args.json:
        print(json.dumps(table, indent=1, sort_keys=True))
        return 0
    cols = next(iter(table.values())).keys() if args.check_classes else (
        tuple(CHAIN_WEIGHTS) if args.chain else (*PIPE_CLASSES, "total"))
    print(f"{'op':16}" + "".join(f"{c:>10}" for c in cols))
    for name, row in sorted(table.items()):
        print(f"{name:16}" + "".join(f"{row[c]:>10}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
