"""Record in a measurement file the registers a thread of each measured binary uses (issue 24).

Without ``--registers`` cgpredict estimates a kernel's register count from its C
(``cgpredict/registers.py``, docs/models.md eq. (RG1)), which stays at the 32 of full
occupancy unless one loop iteration needs more. A measured binary that uses more
runs fewer blocks an SM (SYRK and SYR2K tiled at 32x32: 40 and 45 registers, one 1024-thread
block an SM instead of two; Nsight Compute ``launch__registers_per_thread`` and
``launch__occupancy_limit_registers`` of the same rows agree). ``cgpredict validate`` predicts
an entry that carries ``"registers"`` with that count, as a user would pass ``--registers``.

For every entry of a measurement file this compiles the port as validation/measure.py builds
it (``nvcc -O3 -std=c++17``, ``-D`` each work size, ``-DCGP_PORT_RESTRICT=1`` for the restrict
port) for ``-arch=sm_90`` to a cubin with ``-Xptxas -v`` and writes the largest count over the
file's kernels into the entry (the model takes one count a file; a port whose kernels differ
gets its largest). Needs nvcc, not a GPU:

    python validation/port_registers.py validation/measured/nvidia-h100-80gb-hbm3.json
    python validation/port_registers.py validation/measured/nvidia-h100-80gb-hbm3-user.json \\
        --src validation/cuda/user
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
_USED = re.compile(r"Used (\d+) registers")


def ptxas_registers(src: Path, defines: dict[str, str], nvcc: str = "nvcc",
                    arch: str = "sm_90") -> int:
    """The largest ``Used N registers`` ptxas reports over the kernels of ``src``."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, "-O3", f"-arch={arch}", "-std=c++17", f"-I{ROOT / 'cuda'}", "-cubin",
               "-o", str(Path(tmp) / "k.cubin"), "-Xptxas", "-v", str(src)]
        cmd += [f"-D{k}={v}" for k, v in sorted(defines.items())]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    counts = [int(n) for n in _USED.findall(out.stdout + out.stderr)]
    if not counts:
        raise RuntimeError(f"{src}: ptxas reported no register count")
    return max(counts)


def annotate(path: Path, src_dir: Path, nvcc: str, arch: str) -> list[tuple[str, str, int]]:
    """Write ``registers`` into every entry of the measurement file ``path``; returns
    (kernel, block, registers) per entry."""
    text = path.read_text()
    data = json.loads(text)
    restrict = data.get("port") == "restrict"
    seen: dict[tuple, int] = {}
    rows = []
    for e in data["results"]:
        defines = {k: str(v) for k, v in e.get("work_sizes", {}).items()}
        if restrict:
            defines["CGP_PORT_RESTRICT"] = "1"
        key = (e["kernel"], tuple(sorted(defines.items())))
        if key not in seen:
            seen[key] = ptxas_registers(src_dir / f"{e['kernel']}.cu", defines, nvcc, arch)
        e["registers"] = seen[key]
        rows.append((e["kernel"], e.get("config", ""), seen[key]))
    data["registers_from"] = (f"ptxas -v of nvcc -O3 -arch={arch} -std=c++17 (work sizes as -D), "
                              "the largest count over a port's kernels: "
                              "validation/port_registers.py")
    end = "\n" if text.endswith("\n") else ""
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + end)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measured", type=Path, nargs="+")
    ap.add_argument("--src", type=Path, default=ROOT / "cuda", help="folder of the ports")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    for path in args.measured:
        for kernel, block, regs in annotate(path, args.src, args.nvcc, args.arch):
            print(f"{path.name}: {kernel} {block} {regs} registers")


if __name__ == "__main__":
    main()
