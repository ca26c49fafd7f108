"""The GPU and the CUDA compiler of a calibration: find them (`nvidia-smi`, `nvcc`), build the
micro-benchmarks (`nvcc -O3 -arch=native`, else the GPU's `sm_XY`) and run one (it prints one
JSON line of raw numbers)."""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cgpredict.calibration.errors import CalibrationError, NoGPUError

__all__ = ["DEFAULT_NVCC", "GPUInfo", "build", "find_nvcc", "microbench_dir", "pick_arch",
           "query_gpu", "run_program", "visible_gpu_id"]


@dataclass(frozen=True)
class GPUInfo:
    name: str
    compute_cap: str = ""
    pci_bus_id: str = ""


def query_gpu(nvidia_smi: str | None = None, gpu_id: str = "") -> GPUInfo:
    """The GPU `gpu_id` (an nvidia-smi --id: index, UUID or PCI bus id), else the first GPU
    `nvidia-smi` lists; NoGPUError when there is no driver or no GPU."""
    smi = nvidia_smi or shutil.which("nvidia-smi")
    if not smi:
        raise NoGPUError(
            "no NVIDIA GPU: nvidia-smi not found (calibrate needs an NVIDIA GPU, "
            "its driver and the CUDA toolkit)"
        )
    for fields in ("name,compute_cap,pci.bus_id", "name"):
        try:
            r = subprocess.run(
                [
                    smi,
                    f"--query-gpu={fields}",
                    "--format=csv,noheader",
                    *([f"--id={gpu_id}"] if gpu_id else []),
                ],
                check=False,
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise NoGPUError(f"no usable NVIDIA GPU: nvidia-smi failed ({exc})") from None
        if r.returncode == 0:
            break
    else:
        msg = (r.stderr or r.stdout).strip().splitlines()
        why = msg[0] if msg else f"exit status {r.returncode}"
        raise NoGPUError(f"no usable NVIDIA GPU: nvidia-smi failed ({why})")
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    if not lines:
        raise NoGPUError("no NVIDIA GPU: nvidia-smi lists no GPU")
    parts = [p.strip() for p in lines[0].split(",")]
    return GPUInfo(*parts[:3])


def visible_gpu_id() -> str:
    """nvidia-smi's id of the GPU the benchmarks run on (CUDA device 0), as far as
    CUDA_VISIBLE_DEVICES tells it before any CUDA program ran: its first entry (an index or a
    UUID; MIG instances and an empty list give ""). `calibrate` re-selects by the PCI bus id
    that `props` reports."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if first.isdigit() or first.startswith("GPU-"):
        return first
    return ""


DEFAULT_NVCC = "/usr/local/cuda/bin/nvcc"


def find_nvcc(explicit: str | None = None) -> str:
    """nvcc: `explicit`, $NVCC, nvcc on PATH or DEFAULT_NVCC."""
    for cand in (explicit, os.environ.get("NVCC"), shutil.which("nvcc"), DEFAULT_NVCC):
        if cand and Path(cand).is_file():
            return cand
    raise NoGPUError(
        "no CUDA compiler: nvcc not found (install the CUDA toolkit, put nvcc on PATH or set $NVCC)"
    )


def microbench_dir() -> Path:
    """The folder of the micro-benchmark sources shipped with cgpredict."""
    return Path(str(resources.files("cgpredict.calibration") / "microbench"))


def pick_arch(nvcc: str, gpu: GPUInfo, work: Path) -> str:
    """`native` when nvcc accepts it here, else sm_XY from nvidia-smi's compute capability."""
    probe = work / "_probe.cu"
    probe.write_text("__global__ void k() {}\n")
    r = subprocess.run(
        [nvcc, "-arch=native", "-c", str(probe), "-o", str(work / "_probe.o")],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode == 0:
        return "native"
    if gpu.compute_cap:
        return "sm_" + gpu.compute_cap.replace(".", "")
    raise CalibrationError(
        "nvcc rejects -arch=native and nvidia-smi reports no compute "
        "capability: cannot choose a GPU architecture"
    )


def build(nvcc: str, arch: str, sources: Sequence[str], out_dir: Path) -> dict[str, Path]:
    """Compile each source (`nvcc -O3 -arch=ARCH`) in parallel; returns source -> executable."""
    src_dir = microbench_dir()

    def one(src: str) -> Path:
        exe = out_dir / Path(src).stem
        cmd = [
            nvcc,
            "-O3",
            f"-arch={arch}",
            "-std=c++17",
            "-I",
            str(src_dir),
            "-o",
            str(exe),
            str(src_dir / src),
        ]
        r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-3:])
            raise CalibrationError(f"nvcc failed on {src}: {tail}")
        return exe

    uniq = sorted(set(sources))
    with concurrent.futures.ThreadPoolExecutor(min(8, len(uniq) or 1)) as pool:
        return dict(zip(uniq, pool.map(one, uniq)))


def run_program(exe: Path, args: Sequence[str], timeout_s: float) -> dict[str, Any]:
    """Run one micro-benchmark; its last stdout line is its JSON result."""
    try:
        r = subprocess.run(
            [str(exe), *args], check=False, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        raise CalibrationError(
            f"{exe.name} {' '.join(args)}: timed out after {timeout_s:g} s"
        ) from None
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise CalibrationError(f"{exe.name} {' '.join(args)}: {why}")
    try:
        result = json.loads(lines[-1])
    except ValueError as exc:  # e.g. nan or inf printed by %g
        raise CalibrationError(
            f"{exe.name} {' '.join(args)}: unreadable result ({exc}): {lines[-1][:200]}"
        ) from None
    if not isinstance(result, dict):
        raise CalibrationError(f"{exe.name} {' '.join(args)}: result is not a JSON object")
    return result
