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


# A wider set for the mechanism checks of a lease (``measure.py --ncu-metrics extended``): the
# SM's cycles and issue, every pipe, the L1's requests, sectors and data-stage wavefronts (eqs.
# (B2r), (B2s), the L1 request rate), the L2's read and write sectors from the SMs, all stall
# reasons, the launch geometry, and the dynamic SASS instructions per opcode (the SASS check's
# ground truth). Names ncu does not know on the GPU at hand are dropped (usable_metrics).
NCU_METRICS_EXTENDED = NCU_METRICS + (
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
    "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_registers",
    "launch__shared_mem_config_size",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.max",
    "sm__cycles_active.avg",
    "smsp__cycles_active.avg",
    "smsp__inst_issued.sum",
    "smsp__issue_active.avg.per_cycle_active",
    "smsp__warps_active.avg.per_cycle_active",
    "smsp__warps_eligible.avg.per_cycle_active",
    "smsp__inst_executed_pipe_lsu.sum",
    "smsp__inst_executed_pipe_fma.sum",
    "smsp__inst_executed_pipe_alu.sum",
    "smsp__inst_executed_pipe_fp64.sum",
    "smsp__inst_executed_pipe_adu.sum",
    "smsp__inst_executed_pipe_cbu.sum",
    "smsp__inst_executed_pipe_uniform.sum",
    "smsp__inst_executed_pipe_fmaheavy.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__data_pipe_lsu_wavefronts.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__lsuin_requests.sum",
    "l1tex__f_wavefronts.sum",
    "l1tex__m_xbar2l1tex_read_sectors.sum",
    "l1tex__m_l1tex2xbar_write_sectors.sum",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_requests_srcunit_tex_op_read.sum",
    "lts__t_requests_srcunit_tex_op_write.sum",
    "sass__inst_executed_per_opcode",
) + tuple(
    f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
    for r in ("short_scoreboard", "branch_resolving", "no_instruction", "not_selected",
              "selected", "dispatch_stall", "drain", "membar", "tex_throttle", "imc_miss",
              "sleeping", "misc")
)

# The DRAM traffic as the timed run sees it and the dynamic SASS per opcode (with
# ``--ncu-cache-control none``: ncu's default flush empties the L2 before every profiled launch,
# so a footprint the L2 would hold shows as DRAM reads and its dirty lines are not written back).
NCU_METRICS_OPCODES = (
    "device__attribute_display_name",
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "smsp__inst_executed.sum",
    "sass__inst_executed_per_opcode",
)


def usable_metrics(ncu: str, metrics: tuple[str, ...], timeout: float = 60) -> tuple[str, ...]:
    """``metrics`` less those whose base name ``ncu --query-metrics`` does not list for the GPU
    at hand (launch__/device__ attributes and sass__ metrics are kept: the query does not list
    them). One unknown
    name would fail a whole profile, so a lease's extended pass checks them first."""
    try:
        r = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True,
                           timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return metrics
    known = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    if r.returncode != 0 or len(known) < 100:
        return metrics
    keep = tuple(m for m in metrics
                 if m.startswith(("launch__", "device__", "sass__")) or m.split(".")[0] in known)
    dropped = sorted(set(metrics) - set(keep))
    if dropped:
        print(f"ncu: dropped metrics it does not know here: {', '.join(dropped)}",
              file=sys.stderr)
    return keep

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
                     max_launches: int, timeout: float,
                     metrics: tuple[str, ...] = NCU_METRICS,
                     cache_control: str = "all") -> dict:
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
    # per-opcode counts with their opcode names ("values" prints the counts alone: the lease of
    # 2026-11-27 got them so)
    instances = (["--print-metric-instances", "details"]
                 if "sass__inst_executed_per_opcode" in metrics else [])
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", *instances,
           "--cache-control", cache_control,
           "--metrics", ",".join(metrics), "--launch-skip", str(timed),
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
        plain = tuple(m for m in metrics if not m.startswith("sass__"))
        if plain != metrics:  # an ncu without the SASS metrics still gives the others
            return profile_counters(ncu, exe, args, result, csv_path, max_launches, timeout,
                                    plain, cache_control)
        return {"error": f"ncu exit {r.returncode}", "cmd": " ".join(cmd), "wall_s": wall,
                "stderr": (r.stderr or r.stdout)[-2000:]}
    return {"csv": csv_path.name, "launches_per_run": per_run or timed,
            "launches_profiled": count, "cmd": " ".join(cmd), "wall_s": wall}
