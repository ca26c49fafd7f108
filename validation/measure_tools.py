"""The tools ``measure.py`` drives on the GPU machine: the GPU's name and clocks
(nvidia-smi), nvcc (found, its -arch picked, a port built), a port's binary run for its
JSON, and Nsight Compute (found, one run profiled for NCU_METRICS). Standalone (python3
standard library only), as measure.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Nsight Compute metrics recorded per launch (cgpredict/stats/counters.py METRICS reads them; a
# test keeps the two lists equal): DRAM bytes, L2/L1 sectors and hit rates, achieved occupancy,
# issued warp instructions by class, stall reasons, and the GPU's name for the device check.
NCU_METRICS = (
    "device__attribute_display_name",
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sectors.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum",
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_global_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_pipe_xu.sum",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
)


def gpu_info() -> dict[str, str]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        raise SystemExit("measure.py: nvidia-smi not found: this script needs an NVIDIA GPU "
                         "and its driver")
    query = "name,clocks.max.sm,clocks.max.mem,driver_version"
    try:
        out = subprocess.run([smi, f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    except (subprocess.SubprocessError, OSError) as exc:
        raise SystemExit(f"measure.py: nvidia-smi failed ({exc}): no usable NVIDIA GPU") from exc
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if not lines:
        raise SystemExit("measure.py: nvidia-smi lists no GPU")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    idx = int(visible) if visible.isdigit() and int(visible) < len(lines) else 0
    name, sm, mem, driver = [f.strip() for f in lines[idx].split(",")[:4]]
    return {"name": name, "clock_sm_max": sm, "clock_mem_max": mem, "driver": driver,
            "count": str(len(lines))}


def nvcc_path(explicit: str | None = None) -> str:
    if explicit:
        return explicit
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if not nvcc:
        raise SystemExit("measure.py: nvcc not found (install the CUDA toolkit or put nvcc "
                         "on PATH)")
    return nvcc


def pick_arch(nvcc: str, bin_dir: Path) -> str:
    """``-arch=native`` when this nvcc accepts it (CUDA >= 11.6 and a visible GPU), else sm_90."""
    probe = bin_dir / "_arch_probe.cu"
    bin_dir.mkdir(parents=True, exist_ok=True)
    probe.write_text("__global__ void k() {}\nint main() { return 0; }\n")
    try:
        r = subprocess.run([*nvcc_cmd(nvcc), "-arch=native", "-c", str(probe), "-o",
                            str(bin_dir / "_arch_probe.o")], capture_output=True, text=True,
                           timeout=120)
        return "native" if r.returncode == 0 else "sm_90"
    finally:
        for p in (probe, bin_dir / "_arch_probe.o"):
            p.unlink(missing_ok=True)


def nvcc_cmd(nvcc: str) -> list[str]:
    """The command for ``nvcc`` (a .py stand-in such as validation/emu/nvcc_emu.py runs under
    this interpreter)."""
    return [sys.executable, nvcc] if nvcc.endswith(".py") else [nvcc]


def build(nvcc: str, arch: str, src: Path, exe: Path, defines: dict[str, int]) -> dict:
    cmd = [*nvcc_cmd(nvcc), "-O3", f"-arch={arch}", "-std=c++17", "-o", str(exe), str(src)]
    cmd[-4:-4] = [f"-D{k}={v}" for k, v in sorted(defines.items())]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return {"cmd": " ".join(cmd), "ok": r.returncode == 0, "seconds": round(time.time() - t0, 2),
            "stderr": r.stderr[-4000:]}


def run_port(exe: Path, args: list[str], timeout: float) -> dict:
    cmd = [str(exe), *args]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s", "args": args,
                "wall_s": round(time.time() - t0, 2)}
    wall = round(time.time() - t0, 2)
    try:
        result = json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"error": f"exit {r.returncode}, no JSON on stdout", "args": args, "wall_s": wall,
                "stderr": r.stderr[-4000:], "stdout": r.stdout[-2000:]}
    result["args"] = args
    result["wall_s"] = wall
    if r.returncode not in (0, 1):
        result["error"] = f"exit {r.returncode}"
    return result


def ncu_path(explicit: str | None = None) -> str | None:
    """Nsight Compute's CLI: --ncu, $NCU, ncu on PATH or under /usr/local/cuda; None if absent."""
    if explicit:
        return explicit
    found = os.environ.get("NCU") or shutil.which("ncu")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/ncu")
    return str(default) if default.exists() else None


def profile_counters(ncu: str, exe: Path, args: list[str], result: dict, csv_path: Path,
                     max_launches: int, timeout: float) -> dict:
    """Profile one benchmark run of ``exe`` with ncu into ``csv_path`` (raw page, CSV).

    The port runs a warm-up first, then --reps 1: ncu skips the warm-up's launches and profiles
    the first ``max_launches`` of the timed run. ``launches_per_run`` (the logical launches of
    one run, from the timed result) over ``launches_profiled`` scales the profiled counters to a
    whole run; it assumes the profiled launches are representative of the run (FDTD-2D's time
    steps repeat the same three kernels).
    """
    launches = result.get("launches") or []
    timed = sum(int(ln.get("timed", ln.get("count", 0)) or 0) for ln in launches)
    per_run = sum(int(ln.get("count", 0) or 0) for ln in launches)
    if timed <= 0:
        return {"error": "the timed result lists no launches"}
    count = min(timed, max_launches)
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base",
           "--metrics", ",".join(NCU_METRICS), "--launch-skip", str(timed),
           "--launch-count", str(count), "--log-file", str(csv_path), str(exe), *args,
           "--reps", "1"]
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"ncu timed out after {timeout:.0f} s", "cmd": " ".join(cmd)}
    wall = round(time.time() - t0, 2)
    if r.returncode != 0 or not csv_path.exists():
        return {"error": f"ncu exit {r.returncode}", "cmd": " ".join(cmd), "wall_s": wall,
                "stderr": (r.stderr or r.stdout)[-2000:]}
    return {"csv": csv_path.name, "launches_per_run": per_run or timed,
            "launches_profiled": count, "cmd": " ".join(cmd), "wall_s": wall}
