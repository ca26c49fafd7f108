"""cgpredict's per-thread instruction counts by class against the sm_90 SASS of the user
kernels' CUDA ports (examples/user/*.c, validation/cuda/user/*.cu): kernels nobody tuned the
model on, held-back proxies of issue 24 beside the corpus's ``test_port_sass.py``.

The same comparisons as the corpus's, on the same method (``validation/sass_check.py``, run
with ``--user``): global loads and stores, shared loads and stores and barriers equal, FP32,
integer, branch, other and total within 10% of the unrolled SASS, and the classes of
cgpredict's side adding up to its own compute count. The gaps that are real are strict
xfails whose reasons ``validation/sass_user.known_gap`` keeps (the results file
``validation/results/sass-check-user.md`` prints the same). Skipped without nvcc or nvdisasm
(``pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump``); the per-kernel tests build all
13 ports twice and are marked ``slow``. The ports' agreement with their C files and the
check's own pieces (the atomics' classes) are tested without either tool.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import kernel_checks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import ptx_counts  # noqa: E402
import sass_check  # noqa: E402
import sass_counts  # noqa: E402
import sass_user  # noqa: E402

needs_tools = pytest.mark.skipif(
    shutil.which("nvcc") is None or sass_counts.find_nvdisasm() is None,
    reason=(
        "nvcc not found" if shutil.which("nvcc") is None
        else f"nvdisasm not found: {sass_counts.INSTALL_HINT}"
    ),
)  # fmt: skip

NAMES = ptx_counts.user_port_names()
CASES = [
    (name, launch, port)
    for name in NAMES
    for launch in dict.fromkeys(launch for launch, _ in ptx_counts.launches(name))
    for port in ptx_counts.PORTS
]
EXACT = ("ld_global", "st_global", "ld_shared", "st_shared", "barrier")
WITHIN = ("fp32", "integer", "branch", "other", "total")


def _params(classes: tuple[str, ...]) -> list:
    out = []
    for name, launch, port in CASES:
        for cls in classes:
            reason = sass_user.known_gap(name[5:], launch, port, cls)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(name, launch, port, cls, marks=marks,
                                    id=f"{name[5:]}-{launch}-{port}-{cls}"))
    return out


@pytest.fixture(scope="session")
def user_sass_dir(tmp_path_factory) -> Path:
    """The folder the session's cubins and listings of the user ports go to."""
    return tmp_path_factory.mktemp("user-sass")


@pytest.fixture(scope="session")
def checks(user_sass_dir, tmp_path_factory):
    """check_file results per (port, pointer model), computed once per test run."""
    return kernel_checks(tmp_path_factory, "user-sass",
                         lambda name, port: sass_check.check_file(name, port, user_sass_dir))


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("name,launch,port,cls", _params(EXACT))
def test_user_memory_instructions_and_barriers_per_thread_equal_sass(
    checks, name: str, launch: str, port: str, cls: str
) -> None:
    kc = checks(name, port)[launch]
    assert kc.sass is not None, kc.structure
    assert kc.model[cls] == pytest.approx(kc.sass[cls], rel=1e-6, abs=1e-6), (
        f"{name} {launch} ({port}) {cls}: cgpredict {kc.model[cls]:.4f}, SASS {kc.sass[cls]:.2f}"
    )


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("name,launch,port,cls", _params(WITHIN))
def test_user_compute_instructions_per_thread_within_10_percent_of_sass(
    checks, name: str, launch: str, port: str, cls: str
) -> None:
    kc = checks(name, port)[launch]
    assert kc.sass is not None, kc.structure
    assert kc.within(cls), (
        f"{name} {launch} ({port}) {cls}: cgpredict {kc.model[cls]:.1f}, SASS {kc.sass[cls]:.1f}"
    )


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize("name,launch,port",
                         [pytest.param(*c, id=f"{c[0][5:]}-{c[1]}-{c[2]}") for c in CASES])
def test_user_class_split_adds_up_to_the_models_compute_count(
    checks, name: str, launch: str, port: str
) -> None:
    """The classes of cgpredict's side (the atomics' RED, shuffles and adds among them)
    add up to the model's comp_insts of the launch its profile is of."""
    kc = checks(name, port)[launch]
    assert kc.model_split_sum == pytest.approx(kc.model_comp_insts, rel=1e-9, abs=1e-9)


# --- without nvcc or nvdisasm -----------------------------------------------------------

_C_SIZE = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s+([^\n]+?)\s*$", re.M)
_C_KERNEL = re.compile(r"^\s*#\s*pragma\s+cgp\s+kernel\s+(\w+)\s+grid=([12])\b", re.M)


def _c_value(expr: str) -> int:
    """The value of a C size macro written as a number or ``(1 << k)``."""
    m = re.fullmatch(r"\(?\s*(\d+)\s*(?:<<\s*(\d+))?\s*\)?", expr)
    assert m, f"size macro {expr!r} is neither a number nor (a << b)"
    return int(m.group(1)) << int(m.group(2) or 0)


@pytest.mark.parametrize("name", NAMES, ids=[n[5:] for n in NAMES])
def test_every_user_port_mirrors_its_c_file(name: str) -> None:
    """Same overridable size macros and defaults, one launch name per ``#pragma cgp kernel``
    in the C order, each 1-D or 2-D as the pragma says, a trace size for the check."""
    c_text = sass_check.c_source(name).read_text()
    cu_text = (ptx_counts.CUDA_DIR / f"{name}.cu").read_text()
    c_sizes = {k: _c_value(v) for k, v in _C_SIZE.findall(c_text)}
    cu_sizes = {k: int(v) for k, v in ptx_counts._SIZE_MACRO.findall(cu_text)}
    assert cu_sizes == c_sizes
    assert [launch for launch, _ in ptx_counts.launches(name)] == [
        k for k, _ in _C_KERNEL.findall(c_text)]
    grid = {int(g) for _, g in _C_KERNEL.findall(c_text)}
    assert re.search(rf"GRID_DIMS\s*=\s*{grid.pop()}\b", cu_text)
    assert set(sass_user.TRACE_SIZES[name[5:]]) == set(c_sizes)


def test_every_user_c_file_has_a_port() -> None:
    assert {f"user/{p.stem}" for p in sass_user.USER_C_DIR.glob("*.c")} == set(NAMES)


def test_user_ports_copy_for_the_unroll_1_build_keeps_their_includes(tmp_path: Path) -> None:
    """The no-unroll copy of a user port sits at its relative path, with user.cuh beside it
    and common.cuh one folder up, as ``#include "../common.cuh"`` needs."""
    src = ptx_counts.nounroll_sources("user/softmax", tmp_path)
    assert src == tmp_path / "src-nounroll" / "user" / "softmax.cu"
    assert (src.parent / "user.cuh").exists() and (src.parent.parent / "common.cuh").exists()
    text = src.read_text()
    assert text.count('_Pragma("unroll 1") for (') == text.count("for (") >= 3  # 3 in the kernel


def test_fp64_operations_are_class_other_as_in_the_sass() -> None:
    """DADD/DFMA/DMUL are not FP32 instructions (sass_class: other); the model's double
    operations go to other too, its float ones to fp32."""
    assert sass_counts.sass_class("DFMA") == "other" and sass_counts.sass_class("DADD") == "other"
    assert sass_check.model_op_class("fadd", "double", "") == ("other", 1)
    assert sass_check.model_op_class("fadd", "float", "") == ("fp32", 1)
    assert sass_counts.sass_class("REDG.E.ADD.F32.FTZ.RN.STRONG.GPU") == "other"
    assert sass_counts.sass_class("SHFL.DOWN") == "other"


def _gxx_has_cxx20() -> bool:
    gxx = shutil.which("g++")
    if gxx is None:
        return False
    r = subprocess.run(
        [gxx, "-std=c++20", "-x", "c++", "-fsyntax-only", "-"],
        input="#include <barrier>\nint main() {}\n", capture_output=True, text=True)
    return r.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES, ids=[n[5:] for n in NAMES])
def test_user_port_matches_its_host_reference_under_emulation(name: str, tmp_path: Path) -> None:
    """Every user port's --check (device result against the C's computation on the host)
    under validation/emu at odd sizes, shuffles and atomics emulated (37: a partial last
    warp and block; the grid-stride dot with 5 threads and 37 elements)."""
    if not _gxx_has_cxx20():
        pytest.skip("g++ with C++20 <barrier> not found: host emulation unavailable")
    src = ptx_counts.CUDA_DIR / f"{name}.cu"
    sizes = {k: 37 for k, _ in ptx_counts._SIZE_MACRO.findall(src.read_text())}
    sizes.update({k: v for k, v in {"NT": 5, "W": 37, "TSTEPS": 3}.items() if k in sizes})
    exe = tmp_path / "port"
    subprocess.run([sys.executable, str(ROOT / "validation" / "emu" / "nvcc_emu.py"),
                    *(f"-D{k}={v}" for k, v in sizes.items()), "-o", str(exe),
                    str(src)], check=True, timeout=300)
    r = subprocess.run([str(exe), "--check", "--reps", "1", "--block", "64x1"],
                       capture_output=True, text=True, timeout=300)
    assert json.loads(r.stdout)["check"] == "pass", r.stdout


def test_measure_plans_the_user_ports_at_their_c_files_work_sizes() -> None:
    """measure.py --user: every user port, the work sizes of its C file (the size macros'
    defaults), 1-D ports in 256x1 blocks, 2-D ones in 32x32 and 32x8."""
    out = subprocess.run([sys.executable, str(ROOT / "validation" / "measure.py"), "--user",
                          "--dry-run"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    plan = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert {f"user/{n}" for n in plan} == set(NAMES)
    assert "'N': 16777216, 'NT': 65536" in plan["dot_gridstride"]
    assert "'N': 4096, 'TSTEPS': 10" in plan["jacobi2d"] and "32x32,32x8" in plan["jacobi2d"]
    assert "'R': 16384, 'C': 1024" in plan["softmax"] and "blocks 256x1" in plan["softmax"]
