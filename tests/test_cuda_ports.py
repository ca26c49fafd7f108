"""The CUDA reference ports in validation/cuda (the measured side of cgpredict's validation).

* every C file of the corpus has a port with the same size macros, kernel names and grid
  dimensionality (the pragmas' ``grid=N`` hints);
* the ports compile with nvcc (skipped without nvcc);
* the ports' results match their host references under host emulation (skipped without a
  C++20 g++), and on a real GPU (skipped without nvidia-smi);
* validation/measure.py plans the reference configurations of SPEC section 8.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
C_DIR = ROOT / "polybench_c"
CUDA_DIR = ROOT / "validation" / "cuda"
MEASURE = ROOT / "validation" / "measure.py"
NVCC_EMU = ROOT / "validation" / "emu" / "nvcc_emu.py"

_SIZE_MACRO = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s+(\d+)\s*$", re.M)
_C_KERNEL = re.compile(r"^\s*#\s*pragma\s+cgp\s+kernel\s+(\w+)", re.M)
_C_GRID = re.compile(r"^\s*#\s*pragma\s+cgp\s+kernel\s+(\w+)\s+grid=([12])\b", re.M)
_CU_LAUNCH = re.compile(r'rec\.launch\("(\w+)"')
_CU_BLOCK_VAR = re.compile(r"\b(\w+) = cgp::block([12])d\(opt\)")
_CU_LAUNCH_BLOCK = re.compile(r'rec\.launch\("(\w+)".*?<<<\s*\w+\s*,\s*(\w+)', re.S)

C_FILES = sorted(C_DIR.glob("*.c"))
REPRESENTATIVE = ["gemm", "atax", "syrk_tiled", "fdtd2d"]


def _nvcc() -> str | None:
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)


def _small_sizes(port: str, size: int = 64) -> list[str]:
    macros = _SIZE_MACRO.findall((CUDA_DIR / f"{port}.cu").read_text())
    return [f"-D{name}={6 if name == 'TMAX' else size}" for name, _ in macros]


@pytest.mark.parametrize("c_file", C_FILES, ids=[p.stem for p in C_FILES])
def test_every_c_file_has_a_matching_port(c_file: Path) -> None:
    port = CUDA_DIR / f"{c_file.stem}.cu"
    assert port.exists(), f"no CUDA port {port.relative_to(ROOT)} for {c_file.name}"
    c_text, cu_text = c_file.read_text(), port.read_text()
    # same size macros with the same defaults (overridable with -D as in the C file)
    assert dict(_SIZE_MACRO.findall(cu_text)) == dict(_SIZE_MACRO.findall(c_text))
    # one CUDA kernel launch name per `#pragma cgp kernel NAME`, in the C order
    launches = list(dict.fromkeys(_CU_LAUNCH.findall(cu_text)))
    assert launches == _C_KERNEL.findall(c_text)
    assert re.search(r"GRID_DIMS\s*=\s*[12]\b", cu_text), "port must declare GRID_DIMS"
    # each launch uses a 1-D or 2-D block as the pragma's grid=N hint says
    block_dims = {var: int(d) for var, d in _CU_BLOCK_VAR.findall(cu_text)}
    launch_dims = {name: block_dims.get(var) for name, var in _CU_LAUNCH_BLOCK.findall(cu_text)}
    for name, grid in _C_GRID.findall(c_text):
        assert launch_dims.get(name) == int(grid), f"{name}: C grid={grid}, port {launch_dims}"


def test_measure_plans_the_reference_configurations() -> None:
    out = subprocess.run([sys.executable, str(MEASURE), "--dry-run"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    plan = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert set(plan) == {p.stem for p in CUDA_DIR.glob("*.cu")}
    assert "'NI': 1024" in plan["gemm"] and "blocks 32x32,32x8" in plan["gemm"]
    assert "'NX': 4096" in plan["atax"] and "blocks 256x1" in plan["atax"]
    assert "'TMAX': 500" in plan["fdtd2d"] and "'NX': 4096" in plan["fdtd2d"]
    assert "'NI': 8192" in plan["gramschmidt"] and "sample 64" in plan["gramschmidt"]
    assert "'NI': 256" in plan["3dconv"]


@pytest.mark.slow
@pytest.mark.parametrize("port", REPRESENTATIVE)
def test_port_compiles_with_nvcc(port: str, tmp_path: Path) -> None:
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: the CUDA ports cannot be compiled here")
    obj = tmp_path / f"{port}.o"
    r = subprocess.run([nvcc, "-c", "-O3", "-arch=sm_90", "-std=c++17", "-o", str(obj),
                        str(CUDA_DIR / f"{port}.cu")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert obj.stat().st_size > 0


def _gxx_has_cxx20() -> bool:
    gxx = shutil.which("g++")
    if gxx is None:
        return False
    r = subprocess.run([gxx, "-std=c++20", "-x", "c++", "-fsyntax-only", "-"],
                       input="#include <barrier>\nint main() {}\n", capture_output=True,
                       text=True)
    return r.returncode == 0


# the ports run under host emulation, with a block each
EMULATED = [("gemm", "32x8"), ("syrk_tiled", "32x8"), ("fdtd2d", "16x16"),
            ("gramschmidt", "256x1"), ("atax", "256x1")]


def test_every_port_compiled_with_nvcc_is_also_emulated() -> None:
    assert set(REPRESENTATIVE) <= {port for port, _ in EMULATED}


@pytest.mark.slow
@pytest.mark.parametrize("port,block", EMULATED)
def test_port_matches_host_reference_under_emulation(port: str, block: str,
                                                     tmp_path: Path) -> None:
    """The CPU twin of test_port_compiles_with_nvcc (every REPRESENTATIVE port's source
    compiled, here by g++ through validation/emu) and of test_gemm_passes_its_check_on_the_gpu
    (the same ``--check`` against the host reference, on emulated threads)."""
    if not _gxx_has_cxx20():
        pytest.skip("g++ with C++20 <barrier> not found: host emulation unavailable")
    size = 64 if port.endswith("_tiled") else 37  # odd sizes exercise the guards
    exe = tmp_path / port
    subprocess.run([sys.executable, str(NVCC_EMU), *_small_sizes(port, size), "-o", str(exe),
                    str(CUDA_DIR / f"{port}.cu")], check=True, timeout=120)
    r = subprocess.run([str(exe), "--check", "--reps", "1", "--block", block],
                       capture_output=True, text=True, timeout=120)
    result = json.loads(r.stdout)
    assert result["check"] == "pass", result
    assert result["block"] == ([int(v) for v in block.split("x")])
    assert r.returncode == 0


@pytest.mark.slow
def test_measure_end_to_end_under_emulation(tmp_path: Path) -> None:
    """measure.py's whole flow (build, check, time, JSON) with the host emulation standing in
    for nvcc and a stand-in nvidia-smi; cgpredict.validate then reads what it wrote."""
    if not _gxx_has_cxx20():
        pytest.skip("g++ with C++20 <barrier> not found: host emulation unavailable")
    fake = tmp_path / "fakebin"
    fake.mkdir()
    smi = fake / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'Emulated GPU, 1000 MHz, 2000 MHz, 0.0'\n")
    smi.chmod(0o755)
    out = tmp_path / "measured.json"
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run([sys.executable, str(MEASURE), "--nvcc", str(NVCC_EMU), "--only",
                        "gemm,atax", "--sizes", "NI=40,NJ=40,NK=40,NX=48,NY=48",
                        "--check-size", "37", "--reps", "1", "--configs", "16x16",
                        "--bin-dir", str(tmp_path / "bin"), "--out", str(out)],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["gpu"]["name"] == "Emulated GPU"
    assert data["checks"] == {
        "gemm": {"status": "pass", "max_rel_err": data["checks"]["gemm"]["max_rel_err"],
                 "sizes": {"NI": 37, "NJ": 37, "NK": 37}},
        "atax": {"status": "pass", "max_rel_err": data["checks"]["atax"]["max_rel_err"],
                 "sizes": {"NX": 37, "NY": 37}}}
    runs = {(e["kernel"], e["config"]): e for e in data["results"]}
    assert set(runs) == {("gemm", "16x16"), ("atax", "256x1")}
    assert runs[("gemm", "16x16")]["work_sizes"] == {"NI": 40, "NJ": 40, "NK": 40}
    assert runs[("atax", "256x1")]["result"]["total_ms"] > 0
    # the host clock around each repetition's launches (common.cuh, thirteenth round t7)
    issued = runs[("atax", "256x1")]["result"]["all_host_issue_ms"]
    assert len(issued) == 1 and issued[0] > 0

    from cgpredict.validate import load_measured

    gpu, entries = load_measured(out)
    assert gpu == "Emulated GPU" and {(e["kernel"], e["config"]) for e in entries} == set(runs)


def test_gpu_session_without_a_gpu_says_so(tmp_path: Path) -> None:
    if shutil.which("nvidia-smi") is not None:
        pytest.skip("this machine has nvidia-smi")
    r = subprocess.run(["bash", str(ROOT / "validation" / "gpu_session.sh"), str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 5
    assert r.stderr.strip() == ("gpu_session.sh: nvidia-smi found no NVIDIA GPU: run this on a "
                                "machine with one")


@pytest.mark.slow
def test_gemm_passes_its_check_on_the_gpu(tmp_path: Path) -> None:
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi not found: no NVIDIA GPU to run the ports on")
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: the CUDA ports cannot be compiled here")
    exe = tmp_path / "gemm"
    for arch in ("native", "sm_90"):
        r = subprocess.run([nvcc, "-O3", f"-arch={arch}", "-std=c++17", *_small_sizes("gemm"),
                            "-o", str(exe), str(CUDA_DIR / "gemm.cu")], capture_output=True,
                           text=True, timeout=120)
        if r.returncode == 0:
            break
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe), "--check", "--reps", "2"], capture_output=True, text=True,
                       timeout=120)
    result = json.loads(r.stdout)
    assert result["check"] == "pass", result
    assert result["launches"][0]["name"] == "gemm" and result["total_ms"] > 0


def test_measure_profiles_the_binary_it_timed(tmp_path: Path, monkeypatch) -> None:
    """ncu profiles the port that was timed: the restrict binary under --port restrict."""
    import argparse
    import importlib.util

    spec = importlib.util.spec_from_file_location("measure_under_test", MEASURE)
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    ran, profiled = [], []
    monkeypatch.setattr(measure, "run_port",
                        lambda exe, args, timeout: ran.append(exe) or {"total_ms": 1.0})
    monkeypatch.setattr(measure, "profile_counters",
                        lambda ncu, exe, *a, **kw: profiled.append(exe) or {"error": "stand-in"})
    args = argparse.Namespace(bin_dir=tmp_path, reps=1, timeout=1.0, budget=1e9, ncu_launches=60)
    port = {"name": "gemm", "dims": 2, "work": {"NI": 8}, "sample": 0}
    for suffix in ("", "_restrict"):
        measure._time_config(port, "16x16", args, suffix, "ncu", tmp_path, t_start=1e18)
    assert ran == profiled == [tmp_path / "gemm", tmp_path / "gemm_restrict"]
