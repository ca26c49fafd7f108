"""The blind set (examples/blind, ports in validation/cuda/blind): kernels written after the
model, predicted before they were timed (validation/blind_predict.py, validation/gpu_blind.sh).

* every C file has a port with the same size macros (a number or ``(1 << k)``), kernel names
  in the C order and grid dimensionality, and every port a C file;
* measure.py ``--set blind`` plans them at their C files' work sizes (the macros' defaults,
  not the corpus's reference sizes), ``--configs-1d`` other 1-D blocks;
* the predictions committed before the timing name every entry the device run measured;
* each port passes its check against the host reference under emulation (slow).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
C_DIR = ROOT / "examples" / "blind"
CU_DIR = ROOT / "validation" / "cuda" / "blind"
MEASURE = ROOT / "validation" / "measure.py"
NAMES = sorted(p.stem for p in C_DIR.glob("*.c"))

_C_SIZE = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s+([^\n]+?)\s*$", re.M)
_C_KERNEL = re.compile(r"^\s*#\s*pragma\s+cgp\s+kernel\s+(\w+)\s+grid=([12])\b", re.M)
_CU_LAUNCH = re.compile(r'rec\.launch\("(\w+)"')


def _value(expr: str) -> int | None:
    """A size macro's value written as a number or ``(a << b)``; None for anything else
    (a constant such as ``(K)`` that is not a size)."""
    m = re.fullmatch(r"\(?\s*(\d+)\s*(?:<<\s*(\d+))?\s*\)?", expr)
    return int(m.group(1)) << int(m.group(2) or 0) if m else None


def _sizes(text: str) -> dict[str, int]:
    return {k: v for k, e in _C_SIZE.findall(text) if (v := _value(e)) is not None}


def test_the_blind_set_has_twelve_kernels_each_with_a_port() -> None:
    assert len(NAMES) == 12
    assert sorted(p.stem for p in CU_DIR.glob("*.cu")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_blind_port_mirrors_its_c_file(name: str) -> None:
    c_text = (C_DIR / f"{name}.c").read_text()
    cu_text = (CU_DIR / f"{name}.cu").read_text()
    assert _sizes(cu_text) == _sizes(c_text) and _sizes(c_text)
    kernels = _C_KERNEL.findall(c_text)
    assert list(dict.fromkeys(_CU_LAUNCH.findall(cu_text))) == [k for k, _ in kernels]
    (grid,) = {g for _, g in kernels}
    assert re.search(rf"GRID_DIMS\s*=\s*{grid}\b", cu_text)
    assert '#include "../user/user.cuh"' in cu_text


def _plan(*args: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, str(MEASURE), "--set", "blind", "--dry-run", *args],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return {line.split()[0]: line for line in out.splitlines() if line.strip()}


def test_measure_plans_the_blind_ports_at_their_c_files_work_sizes() -> None:
    plan = _plan()
    assert sorted(plan) == NAMES
    # 'N' of conv1d is the C file's 2^24, not a corpus reference size
    assert "work {'N': 16777216}" in plan["conv1d"] and "blocks 256x1 " in plan["conv1d"]
    assert "'M': 16384, 'N': 2048" in plan["colsum"]
    assert "blocks 32x32,32x8" in plan["mandelbrot"]


def test_measure_configs_1d_sets_the_1d_blocks_only() -> None:
    plan = _plan("--configs-1d", "32x1,1024x1", "--configs", "16x16")
    assert "blocks 32x1,1024x1 " in plan["gather"]
    assert "blocks 16x16 " in plan["bilinear"]


def test_user_and_blind_name_different_ports() -> None:
    r = subprocess.run([sys.executable, str(MEASURE), "--user", "--set", "blind", "--dry-run"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "name different ports" in r.stderr


def test_the_committed_predictions_cover_every_measured_entry() -> None:
    """validation/results/blind/predictions.json (made before the device run) has a
    prediction for each entry of the three measured files, with the sources' hashes."""
    preds = json.loads((ROOT / "validation" / "results" / "blind" / "predictions.json")
                       .read_text())
    measured = ROOT / "validation" / "measured"
    files = {"plain": "nvidia-h100-80gb-hbm3-blind.json",
             "restrict": "nvidia-h100-80gb-hbm3-blind-restrict.json",
             "blocks": "nvidia-h100-80gb-hbm3-blind-blocks.json"}
    for p in preds:
        timed = json.loads((measured / files[p["run"]]).read_text())["results"]
        assert {(e["kernel"], e["config"]) for e in timed} == {
            (r["kernel"], r["config"]) for r in p["rows"]}
        assert all(r["predicted_ms"] > 0 for r in p["rows"])
        assert set(p["sources"]) == {f"{n}.c" for n in NAMES} | {f"{n}.cu" for n in NAMES}


def _gxx20() -> bool:
    gxx = shutil.which("g++")
    if gxx is None:
        return False
    r = subprocess.run([gxx, "-std=c++20", "-x", "c++", "-fsyntax-only", "-"],
                       input="#include <barrier>\nint main() {}\n", capture_output=True, text=True)
    return r.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_blind_port_matches_its_host_reference_under_emulation(name: str,
                                                               tmp_path: Path) -> None:
    """The CPU twin of the GPU's --check runs (all passed on the H100): odd sizes exercise
    the guards."""
    if not _gxx20():
        pytest.skip("g++ with C++20 <barrier> not found: host emulation unavailable")
    src = CU_DIR / f"{name}.cu"
    defines = [f"-D{k}=37" for k in _sizes(src.read_text())]
    exe = tmp_path / name
    subprocess.run([sys.executable, str(ROOT / "validation" / "emu" / "nvcc_emu.py"), *defines,
                    "-o", str(exe), str(src)], check=True, timeout=300)
    block = "32x8" if "GRID_DIMS = 2" in src.read_text() else "64x1"
    r = subprocess.run([str(exe), "--check", "--reps", "1", "--block", block],
                       capture_output=True, text=True, timeout=300)
    assert json.loads(r.stdout)["check"] == "pass", r.stdout
