#!/usr/bin/env python3
"""Kepler (sm_35) SASS of the CUDA ports, counted per k step by class, beside sm_90's: does
Kepler's ptxas vectorise shared loads, fold address arithmetic, unroll the tile's 32-step
loop as sm_90's does (issue 26: the TK1 is sm_32, Kepler's ISA family)?

No current toolkit builds Kepler (CUDA 12 dropped it), so the build is split:

1. nvcc (13.x, on PATH) writes PTX for the lowest architecture it has (``compute_75``);
2. the PTX's ``.version`` and ``.target`` lines are set to what CUDA 11.8 accepts (PTX ISA
   7.8, ``sm_35``; the ports' PTX uses nothing newer) and ptxas 11.8 compiles it for sm_35
   (``-O3``; the 11.8 ptxas no longer takes sm_32, the TK1's, which differs from sm_35 in
   neither its instruction set for these kernels nor its scheduling rules);
3. nvdisasm 11.8 lists it (nvdisasm 12+ refuses Kepler cubins).

Where the tools come from: ptxas 11.8 from the PyPI wheel ``nvidia-cuda-nvcc-cu11==11.8.89``
(``pip install --target DIR``; ``--ptxas`` or ``CGP_PTXAS11``), nvdisasm 11.8 from Debian
bookworm's ``nvidia-cuda-toolkit`` 11.8.89 (non-free; ``dpkg -x`` of the .deb is enough;
``--nvdisasm`` or ``CGP_NVDISASM11``). Without them ``main`` says so and exits 0 (a skip).

Counting reuses ``sass_counts`` (loops from back edges, classes) with the Kepler opcodes
added (``kepler_class``): ``LD``/``ST`` are global loads and stores on Kepler (``ld.global``
compiles to ``LD.E``; ``LDG`` is its read-only texture path), ``IADD32I``, ``ISCADD``,
``BFE`` ... are integer, ``TEXDEPBAR`` (the wait for an ``LDG``) is other. A k step is one
``FFMA`` (each of the three GEMM kernels has one a k step), so a loop's counts per k step
are its counts divided by its FFMAs.

Usage::

    python validation/kepler_sass.py [PORT ...] [--port plain|restrict] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sass_counts  # noqa: E402

DEFAULT_PORTS = ("gemm", "gemm_tiled", "textbook/gemm_textbook")
PTX_ARCH = "compute_75"  # the lowest nvcc 13 writes PTX for
KEPLER = "sm_35"
PTX_VERSION = "7.8"  # the newest PTX ISA ptxas 11.8 reads
TOOL_HINT = (
    "ptxas 11.8: pip install --target DIR nvidia-cuda-nvcc-cu11==11.8.89 (CGP_PTXAS11=DIR/"
    "nvidia/cuda_nvcc/bin/ptxas); nvdisasm 11.8: Debian bookworm non-free nvidia-cuda-toolkit "
    "11.8.89 (CGP_NVDISASM11=.../usr/bin/nvdisasm)"
)

_KEPLER_INTEGER = frozenset(
    "IADD32I ISUB IMUL32I IMAD32I ISCADD32I LOP32I BFE BFI ISAD IMADSP SHR SHL IMNMX".split()
)
_KEPLER_OTHER = frozenset("TEXDEPBAR MOV32I".split())


def kepler_class(opcode: str) -> str:
    """The class of one Kepler SASS instruction: ``sass_counts.sass_class`` with Kepler's own
    opcodes (generic ``LD``/``ST`` of global data, the ``32I`` immediate forms) added."""
    op = opcode.split(".")[0]
    if op in ("LD", "ST"):
        return "ld_global" if op == "LD" else "st_global"
    if op in _KEPLER_INTEGER:
        return "integer"
    if op in _KEPLER_OTHER:
        return "other"
    return sass_counts.sass_class(opcode)


def _version(tool: str) -> str:
    """The ``release X.Y`` of a CUDA tool's ``--version``, or '' if it does not run."""
    try:
        r = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return ""
    m = re.search(r"release (\d+\.\d+)", r.stdout)
    return m.group(1) if m else ""


def _kepler_capable(tool: str | None) -> str | None:
    """``tool`` if it is a CUDA 11.x (or older) binary, the last to handle Kepler; else None."""
    if not tool or not Path(tool).is_file():
        return None
    v = _version(tool)
    return tool if v and int(v.split(".")[0]) <= 11 else None


def find_ptxas11(explicit: str | None = None) -> str | None:
    """ptxas 11.x: ``explicit``, ``CGP_PTXAS11``, a ``nvidia-cuda-nvcc-cu11`` wheel on
    sys.path, or PATH; None when none is found."""
    cands = [explicit, os.environ.get("CGP_PTXAS11")]
    cands += [
        str(p) for root in sys.path for p in Path(root or ".").glob("nvidia/cuda_nvcc/bin/ptxas")
    ]
    cands.append(shutil.which("ptxas"))
    return next((t for t in map(_kepler_capable, cands) if t), None)


def find_nvdisasm11(explicit: str | None = None) -> str | None:
    """nvdisasm 11.x: ``explicit``, ``CGP_NVDISASM11``, Debian's toolkit paths, or PATH."""
    cands = [explicit, os.environ.get("CGP_NVDISASM11"), "/usr/bin/nvdisasm",
             "/usr/lib/nvidia-cuda-toolkit/bin/nvdisasm", shutil.which("nvdisasm")]  # fmt: skip
    return next((t for t in map(_kepler_capable, cands) if t), None)


def retarget_ptx(text: str, version: str = PTX_VERSION, target: str = KEPLER) -> str:
    """PTX text with its ``.version`` and ``.target`` lines set for an older ptxas."""
    text, nv = re.subn(r"^\.version\s+\S+", f".version {version}", text, count=1, flags=re.M)
    text, nt = re.subn(r"^\.target\s+\S+", f".target {target}", text, count=1, flags=re.M)
    if nv != 1 or nt != 1:
        raise ValueError("PTX without a .version or .target line")
    return text


def _run(cmd: list[str]) -> None:
    """Run ``cmd``; RuntimeError with its message when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")


def kepler_listing(name: str, port: str, out_dir: Path, ptxas: str, nvdisasm: str) -> str:
    """The sm_35 ``nvdisasm -c`` listing of port ``name`` (compiler's unrolling kept: the
    binary as it would run), built through PTX as the module docstring says."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc not found on PATH")
    stem = f"{name}.{port}.{KEPLER}"
    (out_dir / stem).parent.mkdir(parents=True, exist_ok=True)
    ptx = out_dir / f"{stem}.ptx"
    _run([nvcc, "-ptx", "-O3", f"-arch={PTX_ARCH}", "-std=c++17",
          f"-DCGP_PORT_RESTRICT={int(port == 'restrict')}", "-o", str(ptx),
          str(sass_counts.CUDA_DIR / f"{name}.cu")])  # fmt: skip
    kptx = out_dir / f"{stem}.retargeted.ptx"
    kptx.write_text(retarget_ptx(ptx.read_text()))
    cubin = out_dir / f"{stem}.cubin"
    _run([ptxas, "-O3", f"-arch={KEPLER}", "-o", str(cubin), str(kptx)])
    r = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"nvdisasm -c {cubin} failed:\n{r.stderr}")
    (out_dir / f"{stem}.sass").write_text(r.stdout)
    return r.stdout


def recount(kernel: sass_counts.SassKernel, classify=kepler_class) -> sass_counts.SassKernel:
    """``kernel`` with its loops' and outside counts redone by ``classify`` (Kepler opcodes)."""
    outside = sass_counts.ClassCounts()
    for lp in kernel.loops:
        lp.own = sass_counts.ClassCounts()
    for i, inst in enumerate(kernel.insts):
        if inst.slow:
            continue
        inner = [lp for lp in kernel.loops if lp.start <= i <= lp.end]
        target = max(inner, key=lambda lp: lp.start).own if inner else outside
        target.add(classify(inst.opcode))
    kernel.outside = outside
    return kernel


@dataclass(frozen=True)
class KStep:
    """One kernel's hot loop (the loop whose own body has the most FFMAs): its label, the k
    steps a trip (its FFMAs) and its counts a trip by class, inner loops added once each."""

    label: str
    k_steps: int
    counts: dict[str, float]

    @property
    def per_k(self) -> dict[str, float]:
        """Counts a k step by class."""
        return {k: v / self.k_steps for k, v in self.counts.items() if v}

    @property
    def total_per_k(self) -> float:
        """Instructions a k step, every class."""
        return sum(self.counts.values()) / self.k_steps


def _ffmas(kernel: sass_counts.SassKernel, lo: int, hi: int) -> int:
    """FFMAs among instructions ``lo``..``hi``."""
    return sum(i.opcode.split(".")[0] == "FFMA" for i in kernel.insts[lo : hi + 1] if not i.slow)


def _own_ffmas(kernel: sass_counts.SassKernel, k: int) -> int:
    """FFMAs in loop ``k``'s own body (its inner loops' taken away): its k steps a trip."""
    lp = kernel.loops[k]
    inner = [x for x in kernel.loops if x.parent == k]
    return _ffmas(kernel, lp.start, lp.end) - sum(_ffmas(kernel, x.start, x.end) for x in inner)


def hot_loop_index(kernel: sass_counts.SassKernel) -> int:
    """Index in ``kernel.loops`` of the loop with the most FFMAs in its own body."""
    return max(range(len(kernel.loops)), key=lambda k: _own_ffmas(kernel, k))


def hot_loop(kernel: sass_counts.SassKernel, classify) -> KStep:
    """The loop with the most FFMAs in its own body, and its trip's counts (inner loops, the
    staging loops of ``cgp::stage``, added once: one trip each, as at 32x32 blocks)."""
    k = hot_loop_index(kernel)
    lp = kernel.loops[k]
    counts = sass_counts.ClassCounts()
    for inst in kernel.insts[lp.start : lp.end + 1]:
        if not inst.slow:
            counts.add(classify(inst.opcode))
    return KStep(label=lp.label, k_steps=_own_ffmas(kernel, k), counts=dict(counts.counts))


def compare(name: str, port: str, out_dir: Path, ptxas: str, nvdisasm: str) -> dict[str, dict]:
    """Per launch of port ``name``: the hot loop a k step on sm_35 and on sm_90."""
    kep = kepler_steps(name, kepler_listing(name, port, out_dir, ptxas, nvdisasm))
    cubin = sass_counts.compile_cubin(name, port, out_dir, unroll=True)
    h90 = sass_counts.kernels_by_launch(name, sass_counts.disassemble(cubin))
    return {
        launch: {"sm_35": step, "sm_90": hot_loop(h90[launch], sass_counts.sass_class)}
        for launch, step in kep.items()
    }


def kepler_steps(name: str, listing: str) -> dict[str, KStep]:
    """The hot loop of every launch of port ``name`` in its sm_35 ``listing`` (a k step's
    counts; also reads the listings committed in validation/kepler/ without any tool)."""
    kernels = sass_counts.kernels_by_launch(name, listing)
    return {launch: hot_loop(recount(k), kepler_class) for launch, k in kernels.items()}


def _line(arch: str, s: KStep) -> str:
    per = " ".join(f"{k} {v:.3g}" for k, v in s.per_k.items())
    return (
        f"  {arch}: loop {s.label}, {s.k_steps} k steps a trip, {s.total_per_k:.3f} a k step: {per}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ports", nargs="*", default=list(DEFAULT_PORTS))
    ap.add_argument("--port", choices=sass_counts.PORTS, default="restrict")
    ap.add_argument("--ptxas", default=None)
    ap.add_argument("--nvdisasm", default=None)
    ap.add_argument("--keep", type=Path, default=None, help="write PTX, cubins and listings here")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    ptxas, nvdisasm = find_ptxas11(a.ptxas), find_nvdisasm11(a.nvdisasm)
    if not (ptxas and nvdisasm and shutil.which("nvcc") and sass_counts.find_nvdisasm()):
        print(f"skipped: Kepler tools not found ({TOOL_HINT})")
        return 0
    with tempfile.TemporaryDirectory(prefix="cgp-kepler-") as tmp:
        out_dir = a.keep or Path(tmp)
        result = {n: compare(n, a.port, out_dir, ptxas, nvdisasm) for n in a.ports}
    if a.json:
        json.dump({n: {ln: {arch: {"label": s.label, "k_steps": s.k_steps, "per_k": s.per_k}
                            for arch, s in v.items()} for ln, v in r.items()}
                   for n, r in result.items()}, sys.stdout, indent=1)  # fmt: skip
        print()
        return 0
    for name, r in result.items():
        for launch, v in r.items():
            print(f"{name} {launch} (port {a.port}):")
            for arch, s in v.items():
                print(_line(arch, s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
