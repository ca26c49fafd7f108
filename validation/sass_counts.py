#!/usr/bin/env python3
"""Per-loop instruction counts of the CUDA ports by class, from the sm_90 SASS the GPU runs
(the machine-code counterpart of ``ptx_counts.py``; checked against cgpredict by
``sass_check.py`` and ``tests/test_port_sass.py``).

For one port (``validation/cuda/NAME.cu``) and one pointer model (``plain`` or ``restrict``,
``-DCGP_PORT_RESTRICT=1``) this

1. compiles the port with ``nvcc -cubin -O3 -arch=sm_90 -std=c++17`` (ptxas runs: register
   allocation, address folding, vectorised shared loads; ``--no-unroll``, the default, first
   puts ``_Pragma("unroll 1")`` before every ``for`` as ``ptx_counts.py`` does);
2. disassembles the cubin with ``nvdisasm -c`` (``find_nvdisasm``: PATH, then the
   ``nvidia-cuda-nvdisasm`` wheel; the model never needs it);
3. splits the listing into its kernels, finds the loops (a ``BRA`` to a label at or above it
   is a back edge; the loop runs from the label to its last back edge; loops nest by
   containment) and counts, per loop, the instructions in its own body (inner loops
   excluded) and outside every loop, by class (``sass_class``): global loads and stores,
   shared loads and stores by width, FP32, integer/address, branch, barrier and other.

Padding after the kernel (the ``BRA`` to itself and the ``NOP`` after it) is not counted,
nor are the subroutines ptxas appends after it (``$__internal_..._slowpath``: the slow paths
of IEEE division and square root, called only for operands out of the fast path's range); the
``CALL`` to one is counted where it stands.
A predicated instruction counts as issued whatever its predicate (a warp issues it).

Unrolling. ptxas keeps nvcc's unrolling and unrolls further: a loop bounded by a size (a
run-time kernel parameter in these ports, as in the measured PolyBench/GPU kernels:
``cuda/common.cuh``, "Sizes") is unrolled 4 times by nvcc and mostly 4 times more by ptxas,
with a remainder; a constant one, such as the 32-step loop of a tile, fully. With
``#pragma unroll 1`` one SASS loop trip is one source iteration, so the
counts can be multiplied by the C program's trip counts (``sass_check.py``). ``--unroll``
keeps the compiler's unrolling: what the measured binaries run; ``sass_check.py`` measures
how far that is from the counts without unrolling, per source iteration of the hot loop.

Usage::

    python validation/sass_counts.py gemm_tiled [--port plain|restrict] [--unroll] [--json]

Stdlib only (nvcc on PATH or ``--nvcc``; nvdisasm: ``pip install nvidia-cuda-nvdisasm
nvidia-cuda-cuobjdump``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ptx_counts  # noqa: E402

CUDA_DIR = ptx_counts.CUDA_DIR
PORTS = ptx_counts.PORTS
NVCC_FLAGS = ("-cubin", "-O3", "-arch=sm_90", "-std=c++17")
INSTALL_HINT = "pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump"

CLASSES = (
    "ld_global", "st_global",
    "ld_shared_32", "ld_shared_64", "ld_shared_128",
    "st_shared_32", "st_shared_64", "st_shared_128",
    "fp32", "integer", "branch", "barrier", "other",
)  # fmt: skip

_INTEGER = frozenset(
    "IMAD IADD3 IADD IABS IMNMX VIADD VIADDMNMX VIMNMX LEA SHF SHL SHR LOP LOP3 ISETP ICMP "
    "SEL PRMT POPC FLO BREV BMSK IDP ISCADD IMUL SGXT PLOP3".split()
)
_FP32 = frozenset(
    "FADD FMUL FFMA FMNMX FSETP FSEL FSET FCHK FRND FSWZADD FADD32I FMUL32I FFMA32I".split()
)
_BRANCH = frozenset("BRA BRX JMP JMX CALL RET EXIT".split())

_SECTION = re.compile(r"^\s*\.section\s+\.text\.([\w$.]+)\s*,", re.M)
_INST = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*$")
_LABEL = re.compile(r"^\s*(\.L[\w$]+):\s*$")
_SUBROUTINE = re.compile(r"^\s*(\$[\w$.]+):\s*$")  # e.g. $__internal_0_$__cuda_sm3x_div_rn...
_TARGET = re.compile(r"`\(\s*(\.L[\w$]+)\s*\)")


def sass_class(opcode: str) -> str:
    """The class of one SASS instruction from its opcode with modifiers (``LDS.128``,
    ``IMAD.WIDE``, ``BAR.SYNC.DEFER_BLOCKING``); uniform-datapath ops (``UIADD3``) are
    classed as their vector counterparts."""
    parts = opcode.split(".")
    op, mods = parts[0], parts[1:]
    if op in ("LDG", "STG"):
        return "ld_global" if op == "LDG" else "st_global"
    if op in ("LDS", "STS"):
        width = "128" if "128" in mods else "64" if "64" in mods else "32"
        return f"{'ld' if op == 'LDS' else 'st'}_shared_{width}"
    base = op[1:] if op.startswith("U") and op[1:] in _INTEGER else op
    if base in _INTEGER:
        return "integer"
    if op in _FP32:
        return "fp32"
    if op in _BRANCH:
        return "branch"
    if op == "BAR":
        return "barrier"
    return "other"  # moves, S2R, LDC, BSSY/BSYNC, MUFU, conversions, LDSM, local memory ...


@dataclass
class ClassCounts:
    """Instruction counts of a stretch of SASS, by class (``CLASSES``)."""

    counts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))

    def add(self, cls: str, n: float = 1) -> None:
        """Count ``n`` instructions of class ``cls``."""
        self.counts[cls] += n

    def plus(self, other: "ClassCounts", times: float = 1.0) -> "ClassCounts":
        """A new count: this one plus ``times`` x ``other`` (a loop's trips)."""
        return ClassCounts({k: v + times * other.counts[k] for k, v in self.counts.items()})

    def __getitem__(self, cls: str) -> float:
        return self.counts[cls]

    @property
    def total(self) -> float:
        return sum(self.counts.values())

    @property
    def ld_shared(self) -> float:
        return sum(v for k, v in self.counts.items() if k.startswith("ld_shared"))

    @property
    def st_shared(self) -> float:
        return sum(v for k, v in self.counts.items() if k.startswith("st_shared"))


@dataclass
class SassInst:
    """One SASS instruction: its address, opcode with modifiers and branch target label."""

    addr: int
    opcode: str
    target: str | None = None
    guarded: bool = False  # predicated (@P0 ...)
    slow: bool = False  # in the block that calls a slow path (slow_call_blocks): not counted


@dataclass
class SassLoop:
    """One loop of a kernel: instructions ``start`` (its header label) to ``end`` (its last
    back edge), nesting ``depth``, ``parent`` (index in the kernel's loop list, -1 for none)
    and its ``own`` counts (one trip, inner loops excluded)."""

    label: str
    start: int
    end: int
    depth: int = 1
    parent: int = -1
    own: ClassCounts = field(default_factory=ClassCounts)


@dataclass
class SassKernel:
    """One kernel of a cubin: mangled and plain name, loops in layout order (a preorder of
    the loop tree), the counts outside every loop, and its instructions."""

    mangled: str
    name: str
    loops: list[SassLoop]
    outside: ClassCounts
    insts: list[SassInst]
    cold: int = 0  # instructions of called subroutines (slow paths), not counted
    labels: dict[str, int] = field(default_factory=dict)  # label -> instruction index

    @property
    def slow_insts(self) -> int:
        """Instructions of the blocks that call a slow path (slow_call_blocks), not counted."""
        return sum(inst.slow for inst in self.insts)

    def range_counts(self, lo: int, hi: int) -> ClassCounts:
        """Counts of instructions ``lo`` to ``hi`` inclusive, inner loops included once."""
        c = ClassCounts()
        for inst in self.insts[lo : hi + 1]:
            if not inst.slow:
                c.add(sass_class(inst.opcode))
        return c


def _read_body(lines: list[str]) -> tuple[list[SassInst], dict[str, int], int]:
    """Instructions and label positions of one kernel's listing, padding removed, and the
    number of instructions of the called subroutines after it (left out)."""
    insts: list[SassInst] = []
    label_at: dict[str, int] = {}
    for k, line in enumerate(lines):
        if insts and _SUBROUTINE.match(line):
            cold = sum(bool(_INST.match(x)) for x in lines[k:])
            return insts, label_at, cold
        m = _LABEL.match(line)
        if m:
            label_at[m.group(1)] = len(insts)
            continue
        m = _INST.match(line)
        if not m:
            continue
        text = m.group(2).split(";")[0].strip()
        t = _TARGET.search(text)
        insts.append(SassInst(int(m.group(1), 16), ptx_counts.opcode(text),
                              t.group(1) if t else None, text.startswith("@")))
    return _unpadded(insts, label_at), label_at, 0


def _unpadded(insts: list[SassInst], label_at: dict[str, int]) -> list[SassInst]:
    """``insts`` without the end-of-kernel padding (a BRA to itself, then NOPs)."""
    for i, inst in enumerate(insts):
        if inst.opcode.startswith("BRA") and inst.target and label_at.get(inst.target) == i:
            return insts[:i]
    return insts


def _ends_block(inst: SassInst) -> bool:
    """Whether control may leave at ``inst`` (a branch, return or exit; a CALL returns)."""
    return sass_class(inst.opcode) == "branch" and not inst.opcode.startswith("CALL")


def slow_call_blocks(insts: list[SassInst], label_at: dict[str, int]) -> None:
    """Mark (``slow``) each basic block that calls a subroutine and that a predicated branch
    skips: IEEE division's and sqrt's slow-path call (MOV of the return address, CALL, a
    move of the result, maybe a BRA past the inline fast path), which ordinary operands do
    not run (``sass_ops.fast_path``'s premise; sfu_heavy: 4 for the sqrtf, 3 for the
    division). A block reached otherwise (a label, an unconditional path) stays counted."""
    starts = set(label_at.values())
    for i, inst in enumerate(insts):
        if not inst.opcode.startswith("CALL"):
            continue
        lo = i
        while lo > 0 and lo not in starts and not _ends_block(insts[lo - 1]):
            lo -= 1
        skipped = lo > 0 and insts[lo - 1].guarded and insts[lo - 1].opcode.startswith("BRA")
        if lo in starts or not skipped:
            continue
        hi = i
        while hi + 1 < len(insts) and hi + 1 not in starts and not _ends_block(insts[hi]):
            hi += 1
        for inst_ in insts[lo : hi + 1]:
            inst_.slow = True


def _find_loops(insts: list[SassInst], label_at: dict[str, int]) -> list[SassLoop]:
    """Loops from back edges, nested by containment, in layout order."""
    ends: dict[str, int] = {}
    for i, inst in enumerate(insts):
        if sass_class(inst.opcode) == "branch" and inst.target in label_at:
            if label_at[inst.target] <= i:
                ends[inst.target] = max(ends.get(inst.target, -1), i)
    return ptx_counts.nest_loops([SassLoop(lbl, label_at[lbl], end) for lbl, end in ends.items()])


def parse_kernel(mangled: str, lines: list[str]) -> SassKernel:
    """Loops and counts of one kernel whose listing lines are ``lines``."""
    insts, label_at, cold = _read_body(lines)
    label_at = {k: v for k, v in label_at.items() if v < len(insts)}
    slow_call_blocks(insts, label_at)
    loops = _find_loops(insts, label_at)
    outside = ClassCounts()
    for i, inst in enumerate(insts):
        if inst.slow:
            continue
        inner = [k for k, lp in enumerate(loops) if lp.start <= i <= lp.end]
        target = loops[max(inner, key=lambda k: loops[k].start)].own if inner else outside
        target.add(sass_class(inst.opcode))
    return SassKernel(mangled, ptx_counts.demangle(mangled), loops, outside, insts, cold,
                      label_at)


def parse_sass(text: str) -> list[SassKernel]:
    """Every kernel (``.text.<name>`` section) of an ``nvdisasm -c`` listing, in file order."""
    marks = list(_SECTION.finditer(text))
    kernels = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        kernels.append(parse_kernel(m.group(1), text[m.end() : end].splitlines()))
    return kernels


def find_nvdisasm() -> str | None:
    """nvdisasm on PATH, else the one the ``nvidia-cuda-nvdisasm`` wheel installs (under
    ``site-packages/nvidia/*/bin``), else None."""
    found = shutil.which("nvdisasm")
    if found:
        return found
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    roots |= {p for p in sys.path if p.endswith("site-packages")}
    for root in sorted(roots):
        for cand in sorted(Path(root).glob("nvidia/*/bin/nvdisasm")):
            if cand.is_file():
                return str(cand)
    return None


def compile_cubin(
    name: str,
    port: str,
    out_dir: Path,
    *,
    unroll: bool = False,
    defines: dict[str, int] | None = None,
    nvcc: str | None = None,
) -> Path:
    """Compile validation/cuda/``name``.cu for ``port`` to an sm_90 cubin in ``out_dir``
    (reused when it exists); returns its path. RuntimeError with nvcc's message on failure."""
    if port not in PORTS:
        raise ValueError(f"unknown port {port!r} (want {' or '.join(PORTS)})")
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc not found on PATH")
    out_dir.mkdir(parents=True, exist_ok=True)
    tag = "unroll" if unroll else "nounroll"
    tag += "".join(f".{k}={v}" for k, v in sorted((defines or {}).items()))
    cubin = out_dir / f"{name}.{port}.{tag}.cubin"
    if cubin.exists():
        return cubin
    cubin.parent.mkdir(parents=True, exist_ok=True)  # user/NAME: a folder of its own
    src = CUDA_DIR / f"{name}.cu" if unroll else ptx_counts.nounroll_sources(name, out_dir)
    cmd = [nvcc, *NVCC_FLAGS, f"-DCGP_PORT_RESTRICT={int(port == 'restrict')}"]
    cmd += [f"-D{k}={v}" for k, v in (defines or {}).items()]
    tmp = cubin.with_suffix(".tmp")
    cmd += ["-o", str(tmp), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
    tmp.replace(cubin)
    return cubin


def disassemble(cubin: Path, nvdisasm: str | None = None) -> str:
    """The ``nvdisasm -c`` listing of ``cubin`` (cached beside it as ``.sass``)."""
    out = cubin.with_suffix(".sass")
    if out.exists():
        return out.read_text()
    tool = nvdisasm or find_nvdisasm()
    if tool is None:
        raise RuntimeError(f"nvdisasm not found: {INSTALL_HINT}")
    r = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"nvdisasm -c {cubin} failed:\n{r.stderr}")
    out.write_text(r.stdout)
    return r.stdout


def kernels_by_launch(
    name: str, sass_text: str, defines: dict[str, int] | None = None
) -> dict[str, SassKernel]:
    """The SASS kernel of every launch name of port ``name`` (template kernels matched by
    their size arguments, as ``ptx_counts.kernels_by_launch`` does)."""
    text = (CUDA_DIR / f"{name}.cu").read_text()
    sizes = {k: int(v) for k, v in ptx_counts._SIZE_MACRO.findall(text)}
    sizes.update(defines or {})
    kernels = parse_sass(sass_text)
    out: dict[str, SassKernel] = {}
    for launch, func, targs in ptx_counts._launches(name):
        cands = [k for k in kernels if k.name == func]
        if targs:
            tag = f"_Z{len(func)}{func}{ptx_counts._template_mangling(targs, sizes)}"
            cands = [k for k in cands if k.mangled.startswith(tag)]
        if len(cands) != 1:
            raise KeyError(f"{name}: {len(cands)} SASS kernels for {func}{targs} ({launch})")
        out[launch] = cands[0]
    return out


def port_kernels(
    name: str, port: str, out_dir: Path, *, unroll: bool = False
) -> dict[str, SassKernel]:
    """Compile, disassemble and parse port ``name`` for ``port``: its kernels by launch."""
    cubin = compile_cubin(name, port, out_dir, unroll=unroll)
    return kernels_by_launch(name, disassemble(cubin))


def _fmt(c: ClassCounts) -> str:
    return " ".join(f"{k} {v:g}" for k, v in c.counts.items() if v)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ports", nargs="*", help="port names (default: all)")
    ap.add_argument("--port", choices=PORTS, default="plain")
    ap.add_argument("--unroll", action="store_true", help="keep the compiler's unrolling")
    ap.add_argument("--keep", type=Path, default=None, help="write cubins and listings here")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    names = a.ports or ptx_counts.port_names()
    with tempfile.TemporaryDirectory(prefix="cgp-sass-") as tmp:
        out_dir = a.keep or Path(tmp)
        result = {n: port_kernels(n, a.port, out_dir, unroll=a.unroll) for n in names}
    if a.json:
        json.dump(
            {n: {k: asdict(v) for k, v in ks.items()} for n, ks in result.items()},
            sys.stdout, indent=1,
        )  # fmt: skip
        print()
        return 0
    for name, ks in result.items():
        for launch, k in ks.items():
            print(f"{name} {launch} ({k.mangled}, port {a.port}): outside loops: {_fmt(k.outside)}")
            for lp in k.loops:
                print(f"  {'  ' * lp.depth}loop {lp.label} depth {lp.depth}: {_fmt(lp.own)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
