"""Calibration micro-benchmarks (cgpredict/calibration/microbench): every CUDA source
compiles, and every kernel launch fits the register file without a spill, from nvcc where it
is, and from its recorded ``-Xptxas -v`` logs (tests/data/nvcc, the CPU twins) everywhere."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cgpredict.calibration import benchmarks, toolchain


# ---- the CUDA sources compile --------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("nvcc") or os.environ.get("NVCC")), reason="no nvcc")
def test_every_microbenchmark_compiles(tmp_path):
    sources = sorted(p.name for p in toolchain.microbench_dir().glob("*.cu"))
    assert set(sources) == {s for s in benchmarks.BENCHMARKS.values() if s}
    exes = toolchain.build(toolchain.find_nvcc(), "sm_90", sources, tmp_path)
    assert all(exes[s].is_file() for s in sources)


# ---- micro-benchmark launch resources (B1) --------------------------------------------------
# Kernel name -> the most threads per block its program launches it with.
LAUNCH_THREADS = {"stream": 1024, "read_stream": 512, "smem_chase": 1024, "k_barrier": 1024,
                  "k_inst": 256, "k_idle": 256, "init_chain": 256, "flush_l2": 256, "chase": 1,
                  "cgp_spin_kernel": 32}


def _assert_launches_fit_the_register_file(logs: dict[str, str]) -> None:
    """``logs``: what ``nvcc -Xptxas -v`` said for each micro-benchmark source. Every kernel
    spills nothing and its registers x launch threads <= 65536 (registers a block may use
    since Kepler); every kernel of LAUNCH_THREADS is met."""
    seen = set()
    for cu, log in logs.items():
        for fn, body in re.findall(r"Compiling entry function '(\w+)'(.*?)(?=Compiling entry|$)",
                                   log, re.S):
            name = next(k for k in sorted(LAUNCH_THREADS, key=len, reverse=True)
                        if re.match(rf"_Z\d+{k}", fn))
            regs = int(re.search(r"Used (\d+) registers", body).group(1))
            assert "0 bytes spill stores" in body, (cu, fn)
            assert regs * LAUNCH_THREADS[name] <= 65536, (cu, fn, regs)
            seen.add(name)
    assert seen == set(LAUNCH_THREADS)


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("nvcc") or os.environ.get("NVCC")), reason="no nvcc")
def test_every_kernel_launch_fits_the_register_file(tmp_path):
    nvcc = toolchain.find_nvcc()
    src = toolchain.microbench_dir()

    def ptxas_log(cu):
        # -cubin: the device code only, as ptxas compiles it for the executable (the host
        # side, a quarter of the time, is built by test_every_microbenchmark_compiles)
        r = subprocess.run([nvcc, "-O3", "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-I",
                            str(src), "-cubin", str(cu), "-o",
                            str(tmp_path / f"{cu.stem}.cubin")],
                           capture_output=True, text=True, check=True, timeout=600)
        return r.stdout + r.stderr

    sources = sorted(src.glob("*.cu"))
    with ThreadPoolExecutor(8) as pool:
        logs = dict(zip((cu.name for cu in sources), pool.map(ptxas_log, sources)))
    _assert_launches_fit_the_register_file(logs)


# ---- the CPU twins of the two nvcc tests above: what nvcc said, recorded (tests/data/nvcc) --
RECORDED = Path(__file__).resolve().parent / "data" / "nvcc"


def _recorded_ptxas_logs() -> dict[str, str]:
    """The recorded ``-Xptxas -v`` logs, by source name, checked to be of the sources as they
    are now (else: run tests/data/nvcc/record.py where nvcc is)."""
    manifest = json.loads((RECORDED / "manifest.json").read_text())
    root = RECORDED.parents[2]
    for rel, digest in manifest["ptxas"].items():
        got = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        assert got == digest, f"{rel} changed since its ptxas log was recorded"
    assert {Path(r).name for r in manifest["ptxas"]} == {
        p.name for p in toolchain.microbench_dir().iterdir() if p.suffix in (".cu", ".cuh", ".h")}
    return {p.stem + ".cu": p.read_text() for p in (RECORDED / "ptxas").glob("*.log")}


def test_every_microbenchmark_compiled_when_recorded():
    """Twin of test_every_microbenchmark_compiles: each benchmark source has a ptxas log of
    its current text, and each log compiled at least one kernel without an error."""
    logs = _recorded_ptxas_logs()
    assert set(logs) == {s for s in benchmarks.BENCHMARKS.values() if s}
    for cu, log in logs.items():
        assert "Compiling entry function" in log and "error" not in log.lower(), cu


def test_every_kernel_launch_fits_the_register_file_recorded():
    _assert_launches_fit_the_register_file(_recorded_ptxas_logs())


def test_register_check_catches_a_spill_and_a_big_block():
    """The register check can fail: the recorded logs with the stream kernels at 65
    registers (x 1024 threads > 65536), or with a spill."""
    logs = _recorded_ptxas_logs()
    for bad in (re.sub(r"Used \d+ registers", "Used 65 registers", logs["stream.cu"]),
                logs["stream.cu"].replace("0 bytes spill stores", "8 bytes spill stores")):
        assert bad != logs["stream.cu"]
        with pytest.raises(AssertionError):
            _assert_launches_fit_the_register_file({**logs, "stream.cu": bad})
