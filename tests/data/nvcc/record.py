#!/usr/bin/env python3
"""Record what nvcc makes, for the CPU twins of the tests that need nvcc (tests/test_port_ptx.py
and tests/test_calibrate_microbench.py skip without it):

* ``ptx/NAME.PORT.nounroll.ptx``: the PTX of validation/cuda/NAME.cu, exactly as
  validation/ptx_counts.compile_ptx writes it (and reuses when it finds it in its folder);
* ``ptxas/NAME.log``: ``nvcc -Xptxas -v`` of each calibration micro-benchmark;
* ``manifest.json``: nvcc's version line and the sha256 of every source each file came from,
  so a twin test can tell when a recording no longer matches the sources (then run this
  again on a machine with nvcc).

Usage: python tests/data/nvcc/record.py  (nvcc on PATH)
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "validation"))
sys.path.insert(0, str(ROOT))

import ptx_counts  # noqa: E402

# one port per family: 2-D with an accumulator, 1-D, staged tiles, several kernels
PORTS = ("gemm", "atax", "syrk_tiled", "fdtd2d")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def port_sources(name: str) -> dict[str, str]:
    """The files a port's PTX depends on, by path from the repository root, and their hash."""
    files = [ptx_counts.CUDA_DIR / f"{name}.cu", ptx_counts.CUDA_DIR / "common.cuh"]
    return {str(f.relative_to(ROOT)): sha(f) for f in files}


def microbench_sources() -> dict[str, str]:
    from cgpredict.calibration.toolchain import microbench_dir

    src = microbench_dir()
    return {str(f.relative_to(ROOT)): sha(f) for f in sorted(src.iterdir())
            if f.suffix in (".cu", ".cuh", ".h")}


def ptxas_log(nvcc: str, cu: Path, out: Path) -> str:
    """What ``nvcc -Xptxas -v`` says compiling ``cu`` (the calibration test's command)."""
    r = subprocess.run([nvcc, "-O3", "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-I",
                        str(cu.parent), "-cubin", str(cu), "-o", str(out)],
                       capture_output=True, text=True, check=True, timeout=600)
    return r.stdout + r.stderr


def main() -> int:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("record.py: nvcc not found on PATH", file=sys.stderr)
        return 2
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    manifest = {"nvcc": version.strip().splitlines()[-1], "ptx": {}, "ptxas": {}}
    ptx_dir, log_dir = HERE / "ptx", HERE / "ptxas"
    for d in (ptx_dir, log_dir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    for name in PORTS:
        for port in ptx_counts.PORTS:
            ptx = ptx_counts.compile_ptx(name, port, ptx_dir, nvcc=nvcc)
            manifest["ptx"][ptx.name] = port_sources(name)
    shutil.rmtree(ptx_dir / "src-nounroll", ignore_errors=True)
    from cgpredict.calibration.toolchain import microbench_dir

    for cu in sorted(microbench_dir().glob("*.cu")):
        log = ptxas_log(nvcc, cu, log_dir / f"{cu.stem}.cubin")
        (log_dir / f"{cu.stem}.cubin").unlink()
        (log_dir / f"{cu.stem}.log").write_text(log)
    manifest["ptxas"] = microbench_sources()
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(manifest['ptx'])} PTX files and "
          f"{len(list(log_dir.glob('*.log')))} ptxas logs with {manifest['nvcc']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
