"""Nsight Compute counters: read ``ncu --csv`` exports, check the GPU, sum them per configuration.

Two layouts of ncu's CSV are read, both starting with the header ``"ID","Process ID",...,
"Kernel Name",...``: the raw page (``ncu --csv --page raw``: one column per metric, a second
line of units, one line per profiled launch) and the details layout (one line per metric with
``"Metric Name","Metric Unit","Metric Value"``). Lines ncu prints around the table
(``==PROF==``, the program's own output) are skipped. Values may carry thousands separators.

``METRICS`` lists what ``validation/measure.py`` asks ncu for and what ``explain`` uses; each
maps to a quantity the model also predicts (DRAM bytes, L2/L1 hit rates, warp instructions by
class, occupancy) or to a stall reason (a forest feature only).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import CGPredictError

GPU_METRIC = "device__attribute_display_name"
# ncu metric -> (quantity, how launches combine: "sum" over launches, or the name of the
# summed quantity that weights a rate)
METRICS: dict[str, tuple[str, str]] = {
    "gpu__time_duration.sum": ("duration_ns", "sum"),
    "dram__bytes_read.sum": ("dram_read_bytes", "sum"),
    "dram__bytes_write.sum": ("dram_write_bytes", "sum"),
    "lts__t_sectors.sum": ("l2_sectors", "sum"),
    "lts__t_sector_hit_rate.pct": ("l2_hit_rate", "l2_sectors"),
    "l1tex__t_sector_hit_rate.pct": ("l1_hit_rate", "l1_sectors"),
    "l1tex__t_sectors.sum": ("l1_sectors", "sum"),
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("achieved_occupancy", "duration_ns"),
    "smsp__inst_executed.sum": ("warp_insts", "sum"),
    "smsp__inst_executed_op_global_ld.sum": ("global_load_insts", "sum"),
    "smsp__inst_executed_op_global_st.sum": ("global_store_insts", "sum"),
    "smsp__inst_executed_op_shared_ld.sum": ("shared_load_insts", "sum"),
    "smsp__inst_executed_op_shared_st.sum": ("shared_store_insts", "sum"),
    "smsp__inst_executed_pipe_xu.sum": ("sfu_insts", "sum"),
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": (
        "stall_long_scoreboard", "warp_insts"),
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio": (
        "stall_lg_throttle", "warp_insts"),
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": (
        "stall_barrier", "warp_insts"),
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio": (
        "stall_math_pipe_throttle", "warp_insts"),
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio": (
        "stall_mio_throttle", "warp_insts"),
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": ("stall_wait", "warp_insts"),
}
PERCENT = {"l2_hit_rate", "l1_hit_rate", "achieved_occupancy"}
_SCALE = {
    "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "kibyte": 1024.0,
    "mibyte": 1024.0**2, "gibyte": 1024.0**3,
    "nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9, "ns": 1.0, "us": 1e3,
    "ms": 1e6, "s": 1e9,
}


class CounterError(CGPredictError):
    """A counter file that cannot be read or belongs to another GPU."""

    exit_code = 2


@dataclass(frozen=True)
class Launch:
    """One profiled kernel launch: its name (no signature), block and grid (x, y, z), the GPU
    ncu names, and the metrics in base units (bytes, ns, percent)."""

    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    gpu: str
    metrics: dict[str, float]


@dataclass(frozen=True)
class CounterFile:
    path: str
    gpu: str
    launches: tuple[Launch, ...]


def short_name(name: str) -> str:
    """``void gemm_kernel(float, float *)`` -> ``gemm_kernel`` (templates too)."""
    name = re.sub(r"\(.*\)\s*$", "", name.strip())
    name = re.sub(r"<.*>$", "", name)
    return name.split()[-1].split("::")[-1] if name.split() else name


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    try:
        x = float(t)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _dims(text: str) -> tuple[int, int, int]:
    nums = [int(n) for n in re.findall(r"\d+", text or "")]
    return tuple((nums + [1, 1, 1])[:3]) if nums else (0, 0, 0)  # type: ignore[return-value]


def _value(metric: str, unit: str, raw: str) -> float | None:
    x = _number(raw)
    if x is None:
        return None
    return x * _SCALE.get(unit.strip().lower(), 1.0)


def read_counters(path: Path) -> CounterFile:
    """Every launch of an ncu CSV export (raw page or details layout)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        why = exc.strerror or exc
        raise CounterError(f"{path}: cannot read the counter file ({why})") from None
    lines = [ln for ln in text.splitlines() if not ln.startswith("==")]
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        raise CounterError(f"{path}: not an ncu CSV export (no '\"ID\",\"Process ID\",...' header)")
    table = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = table[0]
    if "Kernel Name" not in header:
        raise CounterError(f"{path}: ncu CSV without a 'Kernel Name' column")
    launches = (
        _read_details(table) if "Metric Name" in header else _read_raw(table)
    )
    if not launches:
        raise CounterError(f"{path}: no profiled launch in the ncu CSV")
    gpus = sorted({ln.gpu for ln in launches if ln.gpu})
    if not gpus:
        raise CounterError(
            f"{path}: the ncu CSV names no GPU (profile with --metrics {GPU_METRIC})"
        )
    if len(gpus) > 1:
        raise CounterError(f"{path}: launches from several GPUs ({', '.join(gpus)})")
    return CounterFile(str(path), gpus[0], tuple(launches))


def _read_raw(table: list[list[str]]) -> list[Launch]:
    header = table[0]
    col = {h: i for i, h in enumerate(header)}
    rows = table[1:]
    units = [""] * len(header)
    if rows and not rows[0][col["ID"]].strip():  # the units line
        units = rows[0] + [""] * (len(header) - len(rows[0]))
        rows = rows[1:]
    out = []
    for r in rows:
        if len(r) < len(header):
            continue
        metrics = {}
        for m in METRICS:
            if m in col:
                v = _value(m, units[col[m]], r[col[m]])
                if v is not None:
                    metrics[m] = v
        gpu = r[col[GPU_METRIC]].strip() if GPU_METRIC in col else ""
        out.append(Launch(short_name(r[col["Kernel Name"]]), _dims(_get(r, col, "Block Size")),
                          _dims(_get(r, col, "Grid Size")), gpu, metrics))
    return out


def _get(r: list[str], col: dict[str, int], name: str) -> str:
    return r[col[name]] if name in col and col[name] < len(r) else ""


def _read_details(table: list[list[str]]) -> list[Launch]:
    header = table[0]
    col = {h: i for i, h in enumerate(header)}
    by_id: dict[str, dict] = {}
    for r in table[1:]:
        if len(r) < len(header):
            continue
        d = by_id.setdefault(r[col["ID"]], {
            "kernel": short_name(r[col["Kernel Name"]]),
            "block": _dims(_get(r, col, "Block Size")),
            "grid": _dims(_get(r, col, "Grid Size")),
            "gpu": "", "metrics": {},
        })
        name = r[col["Metric Name"]]
        if name == GPU_METRIC:
            d["gpu"] = r[col["Metric Value"]].strip()
        elif name in METRICS:
            v = _value(name, r[col["Metric Unit"]], r[col["Metric Value"]])
            if v is not None:
                d["metrics"][name] = v
    return [Launch(d["kernel"], d["block"], d["grid"], d["gpu"], d["metrics"])
            for d in by_id.values()]


def _model_tokens(text: str) -> set[str]:
    """The model words of a GPU name (``h100``, ``gk20a``, ``gm204``), not memory or form factor
    words (``80gb``, ``sxm5``, ``hbm3``, ``pcie``)."""
    words = re.findall(r"[a-z]+\d+[a-z0-9]*", text.lower())
    return {w for w in words if not re.fullmatch(r"(sxm|hbm|pcie|gddr|lpddr)\d*\w*", w)}


def gpu_matches(counter_gpu: str, device_name: str, device_gpu_name: str) -> bool:
    """Whether ncu's GPU name is the device: a model word in common with the device's name or
    its ``gpu_name`` (``NVIDIA H100 80GB HBM3`` is ``h100``; ``NVIDIA A100`` is not)."""
    mine = _model_tokens(counter_gpu)
    return bool(mine & (_model_tokens(device_name) | _model_tokens(device_gpu_name)))


def check_gpu(cf: CounterFile, device_name: str, device_gpu_name: str) -> None:
    """Refuse counters recorded on another GPU than the device, naming both."""
    if not gpu_matches(cf.gpu, device_name, device_gpu_name):
        raise CounterError(
            f"{cf.path}: counters from {cf.gpu}, but the device is {device_name} "
            f"({device_gpu_name or 'no gpu_name in its device file'}): refusing to compare"
        )


def totals(launches: list[Launch], scale: float = 1.0) -> dict[str, float]:
    """Quantities of a configuration from its launches: sums over launches (times ``scale``,
    launches of a run per launch profiled), rates weighted by what they are a rate of;
    fractions for percentages. A quantity no launch recorded is absent."""
    sums: dict[str, float] = {}
    for quantity, how in METRICS.values():
        if how == "sum":
            vals = [ln.metrics[m] for ln in launches for m, (q, _) in METRICS.items()
                    if q == quantity and m in ln.metrics]
            if vals:
                sums[quantity] = sum(vals) * scale
    out = dict(sums)
    for metric, (quantity, how) in METRICS.items():
        if how == "sum":
            continue
        pairs = [(ln.metrics[metric], _weight(ln, how)) for ln in launches if metric in ln.metrics]
        if not pairs:
            continue
        wsum = sum(w for _, w in pairs)
        v = (sum(x * w for x, w in pairs) / wsum if wsum > 0
             else sum(x for x, _ in pairs) / len(pairs))
        out[quantity] = v / 100.0 if quantity in PERCENT else v
    if "dram_read_bytes" in out or "dram_write_bytes" in out:
        out["dram_bytes"] = out.get("dram_read_bytes", 0.0) + out.get("dram_write_bytes", 0.0)
    return out


def _weight(ln: Launch, quantity: str) -> float:
    for m, (q, _) in METRICS.items():
        if q == quantity and m in ln.metrics:
            return ln.metrics[m]
    return 0.0
