"""What one IR instruction is to the trace: its operation key (opcode, type, the detail the
SASS count needs: a division's divisor kind, a remainder beside its quotient, a negation folded
into an FFMA operand), a memory access's kind and width, and the type layouts behind them.

Split out of ``memtrace.py`` (the instrumentation pass), which keys every recorded operation
with ``_op_key`` and describes every access with ``_access``.
"""

from __future__ import annotations

import re

from .irtext import CAST_OPCODES, Function, Instr, split_operands


class InstrumentError(ValueError):
    """The IR could not be instrumented (e.g. too many memory instructions). ``region``: the
    region it is about, when it is about one (callers name it)."""

    def __init__(self, message: str, region: int | None = None):
        super().__init__(message)
        self.region = region


_VALUE = re.compile(r"%(\"[^\"]+\"|[\w.$-]+)")
_FLAGS = frozenset(
    "nsw nuw exact disjoint samesign fast nnan ninf nsz arcp contract afn reassoc inbounds "
    "volatile atomic tail musttail notail".split()
)

_SCALARS = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "i32": 4,
    "i64": 8,
    "i128": 16,
    "half": 2,
    "bfloat": 2,
    "float": 4,
    "double": 8,
    "ptr": 8,
    "x86_fp80": 16,
    "fp128": 16,
}


def _layout(ty: str) -> tuple[int, int]:
    """(ABI size, ABI alignment) in bytes of an IR type (x86-64 data layout)."""
    ty = ty.strip()
    if ty in _SCALARS:
        size = _SCALARS[ty]
        return size, min(size, 16)
    m = re.fullmatch(r"i(\d+)", ty)
    if m:  # bit-field storage (i24, i40, ...): aligned like the next standard integer
        bits = int(m.group(1))
        align = next((b // 8 for b in (8, 16, 32, 64, 128) if bits <= b), 16)
        store = (bits + 7) // 8
        return (store + align - 1) // align * align, align
    if ty.startswith("ptr"):
        return 8, 8
    m = re.fullmatch(r"<(\d+) x (.+)>", ty)
    if m:
        elem = _layout(m.group(2))[0]
        size = int(m.group(1)) * elem
        align = 1 << max(size - 1, 0).bit_length()  # vectors align to their power-of-two size
        return (size + align - 1) // align * align, align
    m = re.fullmatch(r"\[(\d+) x (.+)\]", ty)
    if m:
        size, align = _layout(m.group(2))
        return int(m.group(1)) * size, align
    packed = ty.startswith("<{") and ty.endswith("}>")
    if packed or (ty.startswith("{") and ty.endswith("}")):
        inner = ty[2:-2] if packed else ty[1:-1]
        offset, align = 0, 1
        for field in split_operands(inner):
            if not field:
                continue
            fsize, falign = _layout(field)
            falign = 1 if packed else falign
            offset = (offset + falign - 1) // falign * falign + fsize
            align = max(align, falign)
        return (offset + align - 1) // align * align, align
    raise InstrumentError(f"cannot size the IR type {ty!r}")


def type_bytes(ty: str) -> int:
    """ABI size in bytes of a first-class IR type as it appears in loads and stores."""
    return _layout(ty)[0]


def _leading_type(text: str) -> str:
    """The IR type at the start of an operand such as ``{ i32, i32 } { i32 1, i32 2 }``."""
    text = text.strip()
    pairs = {"<": ">", "{": "}", "[": "]"}
    if text[:2] == "<{":
        depth, i = 0, 0
        for i, ch in enumerate(text):
            depth += ch in "<{[("
            depth -= ch in ">}])"
            if depth == 0:
                break
        return text[: i + 1]
    if text and text[0] in pairs:
        depth = 0
        for i, ch in enumerate(text):
            depth += ch in "<{[("
            depth -= ch in ">}])"
            if depth == 0:
                return text[: i + 1]
    return text.split()[0] if text else ""


_ORDERINGS = re.compile(
    r"\s+(?:syncscope\(\"[^\"]*\"\)\s*)?"
    r"(?:unordered|monotonic|acquire|release|acq_rel|seq_cst)\s*$"
)


def _strip_flags(words: list[str]) -> list[str]:
    while words and words[0] in _FLAGS:
        words = words[1:]
    return words


def mem_kind(opcode: str) -> str:
    """'load' or 'store' for an instruction the trace records, '' for any other. An atomic
    read-modify-write (``atomicrmw``, ``cmpxchg``) is one access that writes: a GPU performs
    it as one atomic operation at the L2."""
    return {"load": "load", "store": "store", "atomicrmw": "store", "cmpxchg": "store"}.get(
        opcode, ""
    )


def _access(ins: Instr) -> tuple[str, str]:
    """(value type, pointer operand text) of a load, store, atomicrmw or cmpxchg."""
    args = _strip_flags(ins.text.split(None, 1)[1].split())
    if ins.opcode in ("atomicrmw", "cmpxchg"):
        args = [w for w in args if w not in ("weak", "volatile")]
        args = args[1:] if ins.opcode == "atomicrmw" else args  # the operation: add, xchg...
        ops = split_operands(" ".join(args))
        value = ops[1] if ins.opcode == "atomicrmw" else ops[2]
        return _leading_type(value), _ORDERINGS.sub("", ops[0])
    ops = split_operands(" ".join(args))
    if ins.opcode == "load":
        ptr = next(o for o in ops[1:] if o.startswith("ptr"))
        return ops[0], _ORDERINGS.sub("", ptr)
    return _leading_type(ops[0]), _ORDERINGS.sub("", ops[1])


def gep_variable_indices(ins: Instr) -> int:
    """The variable indices of a ``getelementptr``: its PTX-level instructions (SPEC §2.4)."""
    return int(_op_key(ins, {})[2] or 0)


def _op_key(ins: Instr, uses: dict[str, list[Instr]]) -> tuple[str, str, str]:
    """(opcode, type, detail) of an instruction for the computation analysis (SPEC §2.4)."""
    op = ins.opcode
    words = _strip_flags(ins.text.split()[1:]) if op not in ("call",) else []
    detail = ""
    if mem_kind(op):
        return (op, _access(ins)[0], "")
    if op == "call":
        if re.search(r"\basm\b", ins.text):  # an inline asm (the plain port's opaque pointer)
            return ("call", "", "asm")
        callee = ins.callee or "?"
        m = re.search(r"call\s+(?:\w+\s+)*?([\w<>\s x]+?)\s+@", ins.text)
        return ("call", m.group(1).strip() if m else "", callee)
    if op in ("icmp", "fcmp"):
        words = words[1:]
        users = uses.get(ins.result.lstrip("%"), []) if ins.result else []
        if len(users) == 1 and users[0].opcode == "br":
            detail = "branch"  # compare-and-branch: the setp of a PTX loop test
        return (op, words[0] if words else "", detail)
    if op == "getelementptr":
        ops = split_operands(" ".join(words))
        variable = sum(1 for o in ops[2:] if _VALUE.search(o))
        return (op, "ptr", str(variable))
    if op == "br":
        return (op, "", "cond" if ins.text.count("label") > 1 else "")
    ty = words[0] if words else ""
    if op in ("fmul",) and ins.result:
        users = uses.get(ins.result.lstrip("%"), [])
        if len(users) == 1 and users[0].opcode in ("fadd", "fsub"):
            detail = "fma"
    if op == "fneg" and ins.result and _negation_folds(uses.get(ins.result.lstrip("%"), [])):
        detail = "operand"
    if op in CAST_OPCODES:
        m = re.search(r"\bto ([^\s,]+)", ins.text)
        detail = m.group(1) if m else ""
    if op in ("sdiv", "udiv", "srem", "urem"):
        detail = _divisor_kind(words[1:])
        if not detail and op in ("srem", "urem") and _has_quotient(ins, words[1:], uses):
            detail = "quotient"
    return (op, ty, detail)


def _has_quotient(ins: Instr, operands: list[str], uses: dict[str, list[Instr]]) -> bool:
    """True when the function also divides the same dividend by the same run-time divisor
    (``x / y`` beside ``x % y``, an index decomposition): nvcc then computes the remainder
    from the quotient, x - (x / y) * y (compute.SASS_EXPANSION "srem_quotient_i32")."""
    div = "sdiv" if ins.opcode == "srem" else "udiv"
    pair = _div_operands(operands)
    if len(pair) != 2 or not pair[0].startswith("%"):
        return False
    return any(
        u.opcode == div and _div_operands(_strip_flags(u.text.split()[1:])[1:]) == pair
        for u in uses.get(pair[0].lstrip("%"), [])
    )


def _div_operands(words: list[str]) -> list[str]:
    """The two operands of a division's words after its type (``%a, %b, !dbg !7``)."""
    text = " ".join(words).split("!")[0]
    return [w.strip() for w in text.split(",") if w.strip()][:2]


_NEGATING = ("fadd", "fsub", "fmul")
_NEGATING_CALLS = ("llvm.fmuladd", "llvm.fma")


def _negation_folds(users: list[Instr]) -> bool:
    """Whether an ``fneg`` whose result has ``users`` costs no instruction of its own: the
    SASS FADD, FMUL and FFMA negate any operand for free (a modifier: ``FFMA R0, -R2, R3,
    R4``), so ptxas folds a negation every user of which is one of them (GRAMSCHMIDT's
    ``A[i][j] -= Q[i][k] * R[k][j]``: clang's fneg + fmuladd is one FFMA)."""
    return bool(users) and all(
        u.opcode in _NEGATING
        or (u.opcode == "call" and (u.callee or "").startswith(_NEGATING_CALLS))
        for u in users
    )


def _divisor_kind(operands: list[str]) -> str:
    """'pow2' or 'const' for an integer division or remainder by a literal (nvcc turns it
    into shifts, or a multiply by a magic number), '' for a run-time divisor (the
    I2F/MUFU.RCP/IMAD.HI sequence: cgpredict/compute.py SASS_EXPANSION)."""
    values = [w for w in operands[:next(
        (i for i, w in enumerate(operands) if w.startswith("!")), len(operands))]]
    last = values[-1].rstrip(",") if values else ""  # before the metadata (", !dbg !68")
    try:
        value = abs(int(last))
    except ValueError:
        return ""
    return "pow2" if value and value & (value - 1) == 0 else "const"


def _use_map(fn: Function) -> dict[str, list[Instr]]:
    uses: dict[str, list[Instr]] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            body = ins.text.split("!dbg")[0]
            for name in set(_VALUE.findall(body)):
                uses.setdefault(name, []).append(ins)
    return uses
