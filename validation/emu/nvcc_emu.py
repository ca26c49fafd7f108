#!/usr/bin/env python3
"""A stand-in for ``nvcc`` that builds a validation/cuda port for host emulation (no GPU).

    python validation/emu/nvcc_emu.py [-DNAME=V ...] [-O3 -arch=... ignored] -o EXE PORT.cu

The kernel launches ``k<<<grid, block[, smem]>>>(args)`` are rewritten to
``::emu::Launcher(grid, block[, smem])(k, args)`` and the source is compiled with g++ (C++20)
against validation/emu/cuda_runtime.h. ``--version`` and ``-c`` (object-only probes) are
accepted so that ``measure.py --nvcc validation/emu/nvcc_emu.py`` runs its whole pipeline on a
machine without a GPU (with a fake nvidia-smi). Used by tests/test_cuda_ports.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EMU_DIR = Path(__file__).resolve().parent
_LAUNCH = re.compile(r"([A-Za-z_]\w*(?:<[^<>;]*>)?)<<<([^;]*?)>>>\(")
_SMEM = re.compile(r"extern\s+__shared__\s+float\s+(\w+)\[\];")


def translate(text: str) -> str:
    text = _LAUNCH.sub(r"::emu::Launcher(\2)(\1, ", text)
    return _SMEM.sub(r"float* \1 = ::emu::dyn_smem();", text)


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print("nvcc_emu: host emulation of the cgpredict CUDA ports (g++ -std=c++20)")
        return 0
    defines, out, srcs, compile_only = [], None, [], False
    it = iter(argv)
    for a in it:
        if a.startswith("-D"):
            defines.append(a)
        elif a == "-o":
            out = next(it)
        elif a == "-c":
            compile_only = True
        elif a in ("-Xcompiler", "-ccbin"):
            next(it)
        elif a.endswith(".cu"):
            srcs.append(Path(a))
    if compile_only:  # an architecture probe or an object build: check the syntax only
        for src in srcs:
            r = build(src, defines, None)
            if r:
                return r
        if out:
            Path(out).write_bytes(b"")
        return 0
    if len(srcs) != 1 or not out:
        print("nvcc_emu: want exactly one .cu source and -o EXE", file=sys.stderr)
        return 2
    return build(srcs[0], defines, Path(out))


def build(src: Path, defines: list[str], out: Path | None) -> int:
    cxx = os.environ.get("CXX", "g++")
    with tempfile.TemporaryDirectory() as tmp:
        # the port's headers beside it, its parent folder's one level up (the user ports of
        # validation/cuda/user include "../common.cuh")
        work = Path(tmp) / "port"
        work.mkdir()
        for folder, dest in ((src.parent, work), (src.parent.parent, Path(tmp))):
            for header in folder.glob("*.cuh"):
                shutil.copy(header, dest)
        # and the headers of its sibling folders there (the blind ports of validation/cuda/blind
        # include "../user/user.cuh")
        for folder in src.parent.parent.iterdir():
            if folder.is_dir() and folder != src.parent and any(folder.glob("*.cuh")):
                (Path(tmp) / folder.name).mkdir(exist_ok=True)
                for header in folder.glob("*.cuh"):
                    shutil.copy(header, Path(tmp) / folder.name)
        cpp = work / (src.stem + ".cpp")
        cpp.write_text(translate(src.read_text()))
        cmd = [cxx, "-std=c++20", "-O1", "-pthread", f"-I{EMU_DIR}", f"-I{work}", *defines]
        texts = [src.read_text()] + [h.read_text() for h in Path(tmp).rglob("*.cuh")]
        if any("__shfl" in t for t in texts):  # shuffles need every block threaded
            cmd.append("-DCGP_EMU_WARP_SYNC=1")
        cmd += ["-fsyntax-only", str(cpp)] if out is None else ["-o", str(out), str(cpp)]
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
