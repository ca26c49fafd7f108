#!/usr/bin/env python3
"""Per-loop instruction counts of the CUDA ports, from the PTX nvcc emits (the ground truth
that cgpredict's per-thread counts are checked against; ``tests/test_port_ptx.py``).

For one port (``validation/cuda/NAME.cu``) and one pointer model (``plain``: ``float*`` as in
PolyBench/GPU, ``restrict``: ``-DCGP_PORT_RESTRICT=1``) this

1. compiles the port with ``nvcc -ptx -O3 -arch=sm_90 -std=c++17`` (``--no-unroll``, the
   default, first copies the port and ``common.cuh`` into a scratch directory and puts
   ``_Pragma("unroll 1")`` before every ``for``, so that one trip of each PTX loop is one
   iteration of the source loop: see "Unrolling" below);
2. splits the PTX into its ``.entry`` kernels and finds each kernel's loops: a branch to a
   label at or above it is a back edge, the loop is the instructions from the label to the
   last back edge to it, and loops nest by containment (nvcc lays a loop out contiguously);
3. counts, per loop, the instructions that belong to it and to none of its inner loops
   (``own`` counts: one trip of the loop), and the instructions outside every loop
   (``outside``): global loads (``ld.global``, ``ld.global.nc``, ``ldu.global``) and stores
   (``st.global``), the other state spaces separately (shared, local, param, const, generic),
   atomics, barriers, and everything else as compute instructions.

Unrolling. nvcc unrolls constant-trip loops by 4 or 8 (with a remainder loop when the trip
count is not a multiple), so a PTX loop trip is several source iterations and address
increments are shared between them. Dividing by a factor read off the induction variable is
fragile (remainder loops, several induction variables, loops whose bounds are not constant).
``#pragma unroll 1`` is what CUDA programmers write to forbid it; nvcc honours it for every
loop (the PTX then carries ``.pragma "nounroll"`` so that ptxas keeps it too), and it changes
nothing but the unrolling: the memory instructions of one trip are those of one source
iteration. The measured builds (measure.py) are not touched. ``--unroll`` keeps nvcc's
unrolling, to look at the PTX that is timed.

Usage::

    python validation/ptx_counts.py gemm [--port plain|restrict] [--json] [--keep DIR]

Stdlib only (nvcc must be on PATH, or given with ``--nvcc``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CUDA_DIR = ROOT / "validation" / "cuda"
PORTS = ("plain", "restrict")
NVCC_FLAGS = ("-ptx", "-O3", "-arch=sm_90", "-std=c++17")

_FOR = re.compile(r"\bfor\s*\(")
_LAUNCH = re.compile(r'rec\.launch\(\s*"(\w+)"\s*,\s*\[&\]\s*\{\s*(\w+)\s*(<[^<>]*>)?\s*<<<')
_SIZE_MACRO = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s+(\d+)\s*$", re.M)
_ENTRY = re.compile(r"^\.(?:visible\s+|weak\s+)?\.?entry\s+([\w$]+)\s*\(", re.M)
_LABEL = re.compile(r"^([\w$]+):$")
_BRANCH_TARGET = re.compile(r"\bbra(?:\.uni)?\s+([\w$]+)\s*;")


@dataclass
class Counts:
    """Static instruction counts of a stretch of PTX, by kind."""

    ld_global: int = 0
    st_global: int = 0
    ld_shared: int = 0
    st_shared: int = 0
    ld_local: int = 0
    st_local: int = 0
    ld_param: int = 0
    ld_const: int = 0
    generic: int = 0  # ld/st without a state space (generic addressing)
    atomic: int = 0  # atom.* / red.*
    barrier: int = 0  # bar.* / barrier.*
    compute: int = 0  # every other instruction (branches, setp, mov, cvta and arithmetic)

    def add(self, opcode: str) -> None:
        """Count one instruction with PTX opcode ``opcode`` (e.g. ``ld.global.nc.f32``)."""
        parts = opcode.split(".")
        op = parts[0]
        spaces = set(parts[1:])
        if op in ("ld", "ldu", "st"):
            load = op != "st"
            for space in ("global", "shared", "local", "param", "const"):
                if space in spaces:
                    name = f"{'ld' if load else 'st'}_{space}"
                    if hasattr(self, name):
                        setattr(self, name, getattr(self, name) + 1)
                    else:  # st.param (call arguments) / st.const cannot be global memory
                        self.compute += 1
                    return
            self.generic += 1
        elif op in ("atom", "red"):
            self.atomic += 1
        elif op in ("bar", "barrier"):
            self.barrier += 1
        else:
            self.compute += 1

    def __iadd__(self, other: "Counts") -> "Counts":
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)
        return self


@dataclass
class PtxLoop:
    """One loop of a kernel: instructions ``start`` (its header label) to ``end`` (its last
    back edge), nesting ``depth`` (1 = outermost loop of the kernel), ``parent`` (index in the
    kernel's loop list, -1 for none) and its ``own`` counts (one trip, inner loops excluded)."""

    label: str
    start: int
    end: int
    depth: int = 1
    parent: int = -1
    own: Counts = field(default_factory=Counts)


@dataclass
class PtxKernel:
    """One ``.entry`` of a PTX file: its mangled and plain name, its loops in layout order
    (a preorder of the loop tree) and the counts of the instructions outside every loop."""

    mangled: str
    name: str
    loops: list[PtxLoop]
    outside: Counts
    instructions: int


def demangle(mangled: str) -> str:
    """The function name of an Itanium-mangled ``_Z<len><name>...`` symbol (the symbol itself
    for an ``extern "C"`` kernel)."""
    m = re.match(r"_Z(\d+)", mangled)
    if not m:
        return mangled
    n = int(m.group(1))
    return mangled[m.end() : m.end() + n]


def _instructions(body: str) -> list[tuple[str, str]]:
    """(kind, text) per PTX statement of a kernel body: kind ``label`` or ``inst``."""
    out: list[tuple[str, str]] = []
    for raw in body.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line or line in ("{", "}"):
            continue
        m = _LABEL.match(line)
        if m:
            out.append(("label", m.group(1)))
            continue
        if line.startswith("."):  # .reg, .pragma, .loc, .local ... directives
            continue
        for stmt in line.split(";"):
            stmt = stmt.strip().lstrip("{").strip()
            if stmt and not stmt.startswith("."):
                out.append(("inst", stmt + ";"))
    return out


def opcode(stmt: str) -> str:
    """The opcode (with modifiers) of a PTX statement or a SASS instruction's text, its
    predicate guard (``@p``, ``@!P0``) dropped: both listings write it alike."""
    tok = stmt.split()
    if tok and tok[0].startswith("@"):
        tok = tok[1:]
    return tok[0].rstrip(";") if tok else ""


def nest_loops(loops: list) -> list:
    """Loops (each with ``start``/``end`` instruction indices) in layout order, nested by
    containment: each one's ``parent`` (the innermost loop around it) and ``depth`` set; the
    PTX and the SASS check find loops alike, from back edges."""
    loops = sorted(loops, key=lambda lp: (lp.start, -lp.end))
    for k, lp in enumerate(loops):
        encl = [p for p in range(k) if loops[p].start <= lp.start and lp.end <= loops[p].end]
        if encl:
            lp.parent = max(encl, key=lambda p: loops[p].start)
            lp.depth = loops[lp.parent].depth + 1
    return loops


def parse_kernel(mangled: str, body: str) -> PtxKernel:
    """Loops and counts of one kernel whose body (between its braces) is ``body``."""
    stmts = _instructions(body)
    insts: list[str] = []
    label_at: dict[str, int] = {}
    for kind, text in stmts:
        if kind == "label":
            label_at[text] = len(insts)
        else:
            insts.append(text)
    ends: dict[str, int] = {}
    for i, stmt in enumerate(insts):
        if opcode(stmt).startswith("bra"):
            m = _BRANCH_TARGET.search(stmt)
            if m and m.group(1) in label_at and label_at[m.group(1)] <= i:
                ends[m.group(1)] = max(ends.get(m.group(1), -1), i)
    loops = nest_loops([PtxLoop(lbl, label_at[lbl], end) for lbl, end in ends.items()])
    outside = Counts()
    for i, stmt in enumerate(insts):
        inner = [k for k, lp in enumerate(loops) if lp.start <= i <= lp.end]
        if inner:
            loops[max(inner, key=lambda k: loops[k].start)].own.add(opcode(stmt))
        else:
            outside.add(opcode(stmt))
    return PtxKernel(mangled, demangle(mangled), loops, outside, len(insts))


def parse_ptx(text: str) -> list[PtxKernel]:
    """Every ``.entry`` kernel of a PTX module, in file order."""
    kernels = []
    for m in _ENTRY.finditer(text):
        open_brace = text.index("{", text.index(")", m.end()))
        depth, pos = 0, open_brace
        while True:
            c = text[pos]
            depth += (c == "{") - (c == "}")
            if depth == 0:
                break
            pos += 1
        kernels.append(parse_kernel(m.group(1), text[open_brace + 1 : pos]))
    return kernels


def no_unroll_source(text: str) -> str:
    """``text`` with ``_Pragma("unroll 1")`` before every ``for`` statement."""
    return _FOR.sub('_Pragma("unroll 1") for (', text)


def nounroll_sources(name: str, out_dir: Path) -> Path:
    """Port ``name`` (``user/saxpy``: a port of validation/cuda/user) and the headers it may
    include (common.cuh, the ``.cuh`` beside the port) with ``#pragma unroll 1`` before every
    ``for``, written under ``out_dir/src-nounroll`` at their paths relative to CUDA_DIR (so
    that ``#include "../common.cuh"`` still resolves); returns the port's copy."""
    src_dir = out_dir / "src-nounroll"
    port = CUDA_DIR / f"{name}.cu"
    heads = {*port.parent.glob("*.cuh"), *USER_DIR.glob("*.cuh")}  # blind: ../user/user.cuh
    for f in (CUDA_DIR / "common.cuh", *sorted(heads), port):
        dest = src_dir / f.relative_to(CUDA_DIR)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(no_unroll_source(f.read_text()))
    return src_dir / f"{name}.cu"


def compile_ptx(
    name: str,
    port: str,
    out_dir: Path,
    *,
    unroll: bool = False,
    defines: dict[str, int] | None = None,
    nvcc: str | None = None,
) -> Path:
    """Compile validation/cuda/``name``.cu for ``port`` to PTX in ``out_dir`` (reused when it
    exists); returns the .ptx path. Raises RuntimeError with nvcc's message on failure."""
    if port not in PORTS:
        raise ValueError(f"unknown port {port!r} (want {' or '.join(PORTS)})")
    out_dir.mkdir(parents=True, exist_ok=True)
    tag = "unroll" if unroll else "nounroll"
    tag += "".join(f".{k}={v}" for k, v in sorted((defines or {}).items()))
    ptx = out_dir / f"{name}.{port}.{tag}.ptx"
    if ptx.exists():  # reused: no nvcc needed (the recorded PTX of tests/data/nvcc)
        return ptx
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc not found on PATH")
    ptx.parent.mkdir(parents=True, exist_ok=True)
    src = CUDA_DIR / f"{name}.cu" if unroll else nounroll_sources(name, out_dir)
    cmd = [nvcc, *NVCC_FLAGS, f"-DCGP_PORT_RESTRICT={int(port == 'restrict')}"]
    cmd += [f"-D{k}={v}" for k, v in (defines or {}).items()]
    tmp = ptx.with_suffix(".tmp")
    cmd += ["-o", str(tmp), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
    tmp.replace(ptx)
    return ptx


def launches(name: str) -> list[tuple[str, str]]:
    """(kernel name as timed and as in the C pragma, CUDA function) per ``rec.launch`` of the
    port, in source order."""
    return [(launch, func) for launch, func, _ in _launches(name)]


def _launches(name: str) -> list[tuple[str, str, str]]:
    return _LAUNCH.findall((CUDA_DIR / f"{name}.cu").read_text())


def _template_mangling(targs: str, sizes: dict[str, int]) -> str:
    """The Itanium mangling ``ILi64ELi96EE`` of integer template arguments ``<NI, NJ>`` whose
    names are size macros (values from ``sizes``)."""
    vals = []
    for a in targs.strip("<>").split(","):
        a = a.strip()
        v = sizes[a] if a in sizes else int(a)
        vals.append(f"Li{v}E" if v >= 0 else f"Lin{-v}E")
    return "I" + "".join(vals) + "E"


def kernels_by_launch(
    name: str, ptx_text: str, defines: dict[str, int] | None = None
) -> dict[str, PtxKernel]:
    """The PTX kernel of every launch name of port ``name`` (compiled with ``defines``). A
    template kernel (the tiled matrix products) is matched by its template arguments, size
    macros evaluated as in the build."""
    sizes = {k: int(v) for k, v in _SIZE_MACRO.findall((CUDA_DIR / f"{name}.cu").read_text())}
    sizes.update(defines or {})
    kernels = parse_ptx(ptx_text)
    out: dict[str, PtxKernel] = {}
    for launch, func, targs in _launches(name):
        cands = [k for k in kernels if k.name == func]
        if targs:
            tag = f"_Z{len(func)}{func}{_template_mangling(targs, sizes)}"
            cands = [k for k in cands if k.mangled.startswith(tag)]
        if len(cands) != 1:
            raise KeyError(f"{name}: {len(cands)} PTX entries for {func}{targs} ({launch})")
        out[launch] = cands[0]
    return out


def port_names() -> list[str]:
    """Every port of validation/cuda."""
    return sorted(p.stem for p in CUDA_DIR.glob("*.cu"))


#: the ports of the user kernels (examples/user/NAME.c): validation/cuda/user/NAME.cu, named
#: ``user/NAME`` wherever a port name is asked for
USER_DIR = CUDA_DIR / "user"


def user_port_names() -> list[str]:
    """Every port of validation/cuda/user, as ``user/NAME``."""
    return sorted(f"user/{p.stem}" for p in USER_DIR.glob("*.cu"))


#: the ports of the blind kernels (examples/blind/NAME.c): validation/cuda/blind/NAME.cu,
#: named ``blind/NAME``
BLIND_DIR = CUDA_DIR / "blind"


def blind_port_names() -> list[str]:
    """Every port of validation/cuda/blind, as ``blind/NAME``."""
    return sorted(f"blind/{p.stem}" for p in BLIND_DIR.glob("*.cu"))


def check_ports(names: list[str], check, folder: Path, prefix: str) -> list:
    """``check(name, port, folder)`` of every port ``name`` for both PORTS, its results
    concatenated (ptx_check.py, sass_check.py), into ``folder`` or, when None, a temporary
    folder named with ``prefix``; a line on stderr per port done."""
    out: list = []
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for name in names:
            for port in PORTS:
                out += check(name, port, folder or Path(tmp))
                print(f"{name} {port} done", file=sys.stderr)
    return out


def write_result(path: Path, text: str) -> None:
    """Write a check's table to ``path`` (its folder made) and say so on stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ports", nargs="*", help="port names (default: all)")
    ap.add_argument("--port", choices=PORTS, default="plain")
    ap.add_argument("--unroll", action="store_true", help="keep nvcc's unrolling")
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--keep", type=Path, default=None, help="write the PTX files here")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    names = a.ports or port_names()
    with tempfile.TemporaryDirectory(prefix="cgp-ptx-") as tmp:
        out_dir = a.keep or Path(tmp)
        result = {}
        for name in names:
            ptx = compile_ptx(name, a.port, out_dir, unroll=a.unroll, nvcc=a.nvcc)
            result[name] = kernels_by_launch(name, ptx.read_text())
    if a.json:
        json.dump(
            {n: {k: asdict(v) for k, v in ks.items()} for n, ks in result.items()},
            sys.stdout,
            indent=1,
        )
        print()
        return 0
    for name, ks in result.items():
        for launch, k in ks.items():
            o = k.outside
            print(f"{name} {launch} ({k.mangled}, port {a.port}): outside loops "
                  f"ld.global {o.ld_global} st.global {o.st_global} compute {o.compute}")
            for lp in k.loops:
                c = lp.own
                print(f"  {'  ' * lp.depth}loop {lp.label} depth {lp.depth}: ld.global "
                      f"{c.ld_global} st.global {c.st_global} ld.shared {c.ld_shared} "
                      f"st.shared {c.st_shared} local {c.ld_local + c.st_local} generic "
                      f"{c.generic} bar {c.barrier} compute {c.compute}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
