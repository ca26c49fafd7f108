"""A small reader of textual LLVM IR as clang prints it: functions, blocks, instructions, debug
locations and the control-flow graph.

llvmlite's binding parses and verifies IR but cannot insert instructions into a parsed module,
so the instrumentation pass works on the text: it needs the position of every instruction line,
which this reader keeps, and llvmlite verifies both the input and the instrumented output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# LLVM conversion instructions: `%r = <op> <from type> %v to <to type>`.
CAST_OPCODES = frozenset(
    {
        "sext",
        "zext",
        "trunc",
        "fpext",
        "fptrunc",
        "sitofp",
        "uitofp",
        "fptosi",
        "fptoui",
        "bitcast",
        "ptrtoint",
        "inttoptr",
        "addrspacecast",
    }
)

#: Bytes of the element types a global array can hold (array layouts, sizes).
ELEM_BYTES = {"float": 4, "double": 8, "i32": 4, "i64": 8, "i16": 2, "i8": 1}
_GLOBAL_ARRAY = re.compile(r"^@([\w.$]+) = .*?(?:global|constant) ((?:\[\d+ x )*)(\w+)")


def global_arrays(ir_text: str) -> dict[str, tuple[tuple[int, ...], int]]:
    """(dimensions, element bytes) of every global of a module whose element type is in
    ELEM_BYTES, from its IR type (``@A = global [128 x [128 x float]]``); a scalar global has
    no dimensions."""
    out = {}
    for line in ir_text.split("\n"):
        if line.startswith("@"):
            m = _GLOBAL_ARRAY.match(line)
            if m and m.group(3) in ELEM_BYTES:
                dims = tuple(int(x) for x in re.findall(r"\[(\d+) x ", m.group(2)))
                out[m.group(1)] = (dims, ELEM_BYTES[m.group(3)])
    return out


_DEFINE = re.compile(r"^define\b[^@]*@(\"[^\"]+\"|[\w.$-]+)\(")
_LABEL = re.compile(r"^(\"[^\"]+\"|[\w.$-]+):")
_RESULT = re.compile(r"^\s*(%[\w.$-]+|%\"[^\"]+\")\s*=\s*(.*)$")
_DBG = re.compile(r"!dbg (![0-9]+)")
_META = re.compile(r"^(![0-9]+) = (?:distinct )?!(\w+)\((.*)\)\s*$")
_FIELD = re.compile(r"(\w+): (\"(?:[^\"\\]|\\.)*\"|[^,]+)")
_LABEL_REF = re.compile(r"label %(\"[^\"]+\"|[\w.$-]+)")
_CALLEE = re.compile(r"@(\"[^\"]+\"|[\w.$-]+)\(")

TERMINATORS = frozenset(
    {"br", "switch", "ret", "unreachable", "indirectbr", "invoke", "resume", "callbr"}
)


@dataclass
class Instr:
    """One instruction: its line index in the module text, result name, opcode and text."""

    line: int
    result: str | None
    opcode: str
    text: str  # the instruction without the `%x = ` prefix and without leading space
    dbg: str | None

    @property
    def callee(self) -> str | None:
        if self.opcode != "call":
            return None
        m = _CALLEE.search(self.text)
        return m.group(1).strip('"') if m else None


@dataclass
class Block:
    label: str
    label_line: int | None  # None for an unlabelled entry block
    instrs: list[Instr] = field(default_factory=list)

    @property
    def successors(self) -> list[str]:
        term = self.instrs[-1] if self.instrs else None
        if term is None or term.opcode not in TERMINATORS:
            return []
        return [m.strip('"') for m in _LABEL_REF.findall(term.text)]

    @property
    def first_non_phi(self) -> int:
        """Index in ``instrs`` of the first instruction that is not a phi."""
        for k, ins in enumerate(self.instrs):
            if ins.opcode not in ("phi", "landingpad"):
                return k
        return len(self.instrs)


@dataclass
class Function:
    name: str
    define_line: int
    end_line: int
    blocks: list[Block]

    def block(self, label: str) -> Block:
        for b in self.blocks:
            if b.label == label:
                return b
        raise KeyError(label)


@dataclass
class Module:
    lines: list[str]
    functions: dict[str, Function]
    declared: set[str]
    metadata: dict[str, tuple[str, dict[str, str]]]  # !N -> (kind, fields)

    def location(self, dbg: str | None) -> tuple[str, int, int]:
        """(file name, line, column) of a !DILocation, ('', 0, 0) when unknown."""
        if dbg is None or dbg not in self.metadata:
            return ("", 0, 0)
        kind, fields = self.metadata[dbg]
        if kind != "DILocation":
            return ("", 0, 0)
        return (
            self._file_of(fields.get("scope")),
            int(fields.get("line", 0)),
            int(fields.get("column", 0)),
        )

    def _file_of(self, scope: str | None) -> str:
        seen = 0
        while scope and scope in self.metadata and seen < 64:
            kind, fields = self.metadata[scope]
            if kind == "DIFile":
                return fields.get("filename", "").strip('"')
            if "file" in fields:
                scope = fields["file"]
            else:
                scope = fields.get("scope")
            seen += 1
        return ""


def split_operands(text: str) -> list[str]:
    """Split an operand list at top-level commas (not inside (), [], {}, <> or quotes)."""
    parts, depth, cur, quote = [], 0, [], False
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "([{<":
            depth += 1
        elif not quote and ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return parts


def _opcode(body: str) -> str:
    words = body.split()
    if not words:
        return ""
    if words[0] in ("tail", "musttail", "notail") and len(words) > 1:
        return words[1]
    return words[0]


def _parse_instr(idx: int, line: str) -> Instr:
    m = _RESULT.match(line)
    result, body = (m.group(1), m.group(2)) if m else (None, line.strip())
    dbg = _DBG.search(body)
    return Instr(idx, result, _opcode(body), body, dbg.group(1) if dbg else None)


def parse_module(text: str) -> Module:
    """Parse clang's textual IR into functions, blocks and instructions (line-indexed)."""
    lines = text.split("\n")
    functions: dict[str, Function] = {}
    declared: set[str] = set()
    metadata: dict[str, tuple[str, dict[str, str]]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("declare"):
            m = _CALLEE.search(line)
            if m:
                declared.add(m.group(1).strip('"'))
        elif line.startswith("!"):
            m = _META.match(line)
            if m:
                metadata[m.group(1)] = (m.group(2), dict(_FIELD.findall(m.group(3))))
        elif line.startswith("define"):
            i = _parse_function(lines, i, functions)
        i += 1
    return Module(lines, functions, declared, metadata)


def _parse_function(lines: list[str], start: int, out: dict[str, Function]) -> int:
    name = _DEFINE.match(lines[start]).group(1).strip('"')
    blocks: list[Block] = []
    i = start + 1
    pending: list[str] = []
    while lines[i] != "}":
        raw = lines[i]
        stripped = raw.strip()
        lab = _LABEL.match(raw)
        if lab:
            blocks.append(Block(lab.group(1).strip('"'), i))
        elif stripped and not stripped.startswith((";", "#dbg_")):
            if not blocks:
                blocks.append(Block("<entry>", None))
            if (
                pending
                or (stripped.startswith("switch") or " switch " in stripped)
                and "]" not in stripped
            ):
                pending.append(stripped)
                if "]" in stripped:
                    ins = _parse_instr(i, " ".join(pending))
                    ins.line = i - len(pending) + 1
                    blocks[-1].instrs.append(ins)
                    pending = []
            else:
                blocks[-1].instrs.append(_parse_instr(i, raw))
        i += 1
    out[name] = Function(name, start, i, blocks)
    return i
