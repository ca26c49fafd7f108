"""`cgpredict calibrate`: measure the local GPU, write a device file from the results (SPEC §6).

Steps: find an NVIDIA GPU (`nvidia-smi`) and `nvcc`; build `cgpredict/calibration/microbench/*.cu`
(`nvcc -O3 -arch=native`, else the GPU's `sm_XY`); run each micro-benchmark with a timeout
(each prints one JSON line of raw numbers); sample power through NVML (`pynvml` from the
optional `nvidia-ml-py`, group `[gpu]`) around the energy runs; save the raw results as
`<name>.raw.json` (before any analysis, so that no later failure loses them); analyse them
(`cgpredict.calibration.analysis`, pure functions); render a device file from a base device file
(datasheet fields) with the measured fields replaced and a `[provenance.notes]` entry for each
(a measured value the file cannot take keeps the base value, with a note). `finish_from_raw`
redoes the last two steps from a saved raw file, without a GPU.
"""

from __future__ import annotations

import concurrent.futures
import copy
import dataclasses
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cgpredict import devices as _devices
from cgpredict.calibration.analysis import Analysis, Measured, analyse, integrate_energy_j
from cgpredict.calibration.records import analyse_records, read_records
from cgpredict.devices import GPUDevice, device_path, load_device_file
from cgpredict.errors import CGPredictError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "BENCHMARKS",
    "CalibrationError",
    "CalibrationResult",
    "NoGPUError",
    "calibrate",
    "check_output",
    "default_output",
    "find_nvcc",
    "finish_from_raw",
    "format_result",
    "load_raw",
    "query_gpu",
    "render_device_toml",
]

# Micro-benchmark name -> source file (cgpredict/calibration/microbench/); `props` always runs.
BENCHMARKS: dict[str, str] = {
    "props": "props.cu",
    "latency_l1": "pchase.cu",
    "latency_l2": "pchase.cu",
    "line_l1": "pchase.cu",
    "line_l2": "pchase.cu",
    "smem": "smem.cu",
    "stream_l2": "stream.cu",
    "stream_dram": "stream.cu",
    "bandwidth": "bandwidth.cu",
    "inst": "inst.cu",
    "barrier": "barrier.cu",
    "energy": "",
}


class CalibrationError(CGPredictError):
    """Calibration could not run or its results cannot make a device file."""

    exit_code = 5


class NoGPUError(CalibrationError):
    """No NVIDIA GPU, driver or CUDA compiler on this machine."""


@dataclass(frozen=True)
class GPUInfo:
    name: str
    compute_cap: str = ""
    pci_bus_id: str = ""


@dataclass(frozen=True)
class CalibrationResult:
    """What `calibrate` wrote and measured."""

    output: Path
    raw_path: Path
    device: GPUDevice
    analysis: Analysis
    gpu_name: str
    notes: tuple[str, ...]


# ---- toolchain ---------------------------------------------------------------------------
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


# ---- what to run -------------------------------------------------------------------------
def _geom(lo: int, hi: int, per_octave: int = 4, align: int = 128) -> str:
    """Comma list of sizes from lo to hi, `per_octave` per doubling, multiples of `align`."""
    out: list[int] = []
    k = 0
    while True:
        v = round(lo * 2 ** (k / per_octave) / align) * align
        if v > hi:
            break
        if not out or v != out[-1]:
            out.append(v)
        k += 1
    return ",".join(map(str, out))


def _pow2_at_least(n: int) -> int:
    return 1 << max(int(n) - 1, 1).bit_length()


def _pow2_at_most(n: int) -> int:
    return 1 << max(int(n), 2).bit_length() - 1


def plan(props: Mapping[str, Any], base: GPUDevice) -> dict[str, tuple[str, list[str]]]:
    """Benchmark name -> (source, arguments), sized from the GPU's L2 and free memory."""
    l2 = int(props.get("l2_bytes") or base.l2_bytes)
    free = int(props.get("free_bytes") or 8 << 30)
    big = min(_pow2_at_least(8 * l2), _pow2_at_most(free // 4))  # DRAM-sized buffers
    strides = "8,16,32,64,128,256,512"
    # L2<-DRAM strides up to 2 lines: beyond, DRAM rows and the TLB lift the top of the curve
    line_strides = ",".join(
        str(v) for v in (8, 16, 32, 64, 128, 256, 512) if v <= 2 * base.l2_line_bytes
    )
    return {
        "latency_l1": (
            "pchase.cu",
            [
                "sweep=footprint",
                "mode=ca",
                "stride=128",
                "accesses=4096",
                f"values={_geom(4096, 2 << 20)}",
            ],
        ),
        "latency_l2": (
            "pchase.cu",
            [
                "sweep=footprint",
                "mode=cg",
                "stride=128",
                "accesses=8192",
                f"values={_geom(256 << 10, min(8 * l2, big))}",  # DRAM level past the ramp
            ],
        ),
        "line_l1": (
            "pchase.cu",
            [
                "sweep=stride",
                "mode=ca",
                "warm=cg",
                "footprint=0",
                "accesses=2048",
                f"values={strides}",
            ],
        ),
        "line_l2": (
            "pchase.cu",
            [
                "sweep=stride",
                "mode=cg",
                "warm=none",
                "footprint=0",
                "accesses=2048",
                f"flush={4 * l2}",
                f"values={line_strides}",
            ],
        ),
        "smem": ("smem.cu", ["strides=0,1,2,4,8,16,32", "iters=2048"]),
        "stream_l2": (
            "stream.cu",
            [
                f"footprint={max(_pow2_at_most(l2 // 4), 1 << 16)}",
                "strides=0,1,2,4,8",
                f"bytes_per_point={8 << 30}",
            ],
        ),
        "stream_dram": (
            "stream.cu",
            [f"footprint={big}", "strides=0,1,2,4,8", f"bytes_per_point={4 << 30}"],
        ),
        "bandwidth": (
            "bandwidth.cu",
            [f"bytes={big}", "reps=5", f"passes={max(1, (4 << 30) // big)}"],  # >= 4 GiB a run
        ),
        "inst": ("inst.cu", ["classes=int32,fp32,fp64,sfu", "iters=4096"]),
        "barrier": ("barrier.cu", ["threads=64,128,256,512,1024", "iters=4096"]),
    }


# ---- power -------------------------------------------------------------------------------
class PowerSampler:
    """Samples board power (and the energy counter when there is one) through NVML."""

    def __init__(self, pci_bus_id: str = "", interval_s: float = 0.005) -> None:
        import pynvml  # optional dependency (nvidia-ml-py): ImportError when missing

        self._nvml = pynvml
        pynvml.nvmlInit()
        try:
            self._h = (
                pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
                if pci_bus_id
                else pynvml.nvmlDeviceGetHandleByIndex(0)
            )
        except Exception:
            pynvml.nvmlShutdown()
            raise
        try:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(self._h)
            self._counter = True
        except pynvml.NVMLError:
            self._counter = False
        self.interval_s = interval_s
        self.t_ns: list[int] = []
        self.power_w: list[float] = []
        self.energy_mj: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        nv = self._nvml
        while not self._stop.is_set():
            t = time.time_ns()
            try:
                p = nv.nvmlDeviceGetPowerUsage(self._h) / 1e3
                e = (
                    float(nv.nvmlDeviceGetTotalEnergyConsumption(self._h))
                    if self._counter
                    else None
                )
            except nv.NVMLError:
                p, e = None, None
            if p is not None:
                self.t_ns.append(t)
                self.power_w.append(p)
                if e is not None:
                    self.energy_mj.append(e)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> PowerSampler:  # noqa: PYI034
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._nvml.nvmlShutdown()

    def energy_j(self, t0_ns: int, t1_ns: int) -> float:
        same = self._counter and len(self.energy_mj) == len(self.t_ns)
        counter = self.energy_mj if same else None
        return integrate_energy_j(self.t_ns, self.power_w, t0_ns, t1_ns, counter)


def _energy_runs(
    r_inst: Mapping[str, Any],
    r_dram: Mapping[str, Any],
    r_l2: Mapping[str, Any],
    r_smem: Mapping[str, Any],
    energy_j: Callable[[int, int], float],
) -> list[dict[str, Any]]:
    """One record per energy run that reported its time window; `energy_j(t0_ns, t1_ns)` is
    the sampler's energy in a window (a run whose energy cannot be had keeps energy_j None)."""
    runs = []

    def add(name: str, res: Mapping[str, Any], prefix: str, counts: dict[str, float]) -> None:
        t0, t1 = res.get(f"{prefix}energy_t0_ns"), res.get(f"{prefix}energy_t1_ns")
        if t0 is None or t1 is None:
            return
        run: dict[str, Any] = {
            "name": name,
            # the static power acts over the whole window the energy is integrated over
            "seconds": (t1 - t0) / 1e9,
            "kernel_s": res.get(f"{prefix}energy_kernel_ms", 0.0) / 1e3,
            "window_ns": [t0, t1],
            "counts": counts,
        }
        try:
            run["energy_j"] = energy_j(t0, t1)
        except ValueError as exc:  # e.g. fewer than two power samples
            run["energy_j"] = None
            run["error"] = str(exc)
        runs.append(run)

    add("idle", r_inst, "idle_", {})
    for c in ("int32", "fp32", "fp64", "sfu"):
        if f"{c}_energy_thread_ops" in r_inst:
            add(c, r_inst, f"{c}_", {f"{c}_op": r_inst[f"{c}_energy_thread_ops"]})
    for name, res, dram in (("stream_dram", r_dram, True), ("stream_l2", r_l2, False)):
        if "energy_sectors" in res:
            n = res["energy_sectors"]
            counts = {"l2_transaction": n, "int32_op": res["energy_warp_insts"] * 32 * 4}
            if dram:
                counts["dram_transaction"] = n
            add(name, res, "", counts)
    if "smem_transactions" in r_smem:
        add("smem", r_smem, "", {"smem_transaction": r_smem["smem_transactions"]})
    return runs


def _measure_energy(
    exe: Mapping[str, Path],
    steps: Mapping[str, tuple[str, list[str]]],
    pci: str,
    duration_ms: float,
    timeout_s: float,
) -> dict[str, Any]:
    """Energy runs under the NVML sampler; a failing program drops only its own runs."""
    try:
        sampler = PowerSampler(pci)
    except ImportError:
        return {"skipped": "pynvml not installed (pip install 'cgpredict[gpu]', i.e. nvidia-ml-py)"}
    except Exception as exc:  # noqa: BLE001 - any NVML failure only skips energy
        return {"skipped": f"NVML unavailable: {exc}"}
    d = f"duration_ms={duration_ms:g}"
    programs = {
        "inst": ("inst.cu", ["classes=idle,int32,fp32,fp64,sfu", "iters=1024", d]),
        "stream_dram": (
            "stream.cu",
            [*steps["stream_dram"][1][:1], "strides=1", "bytes_per_point=1073741824", d],
        ),
        "stream_l2": (
            "stream.cu",
            [*steps["stream_l2"][1][:1], "strides=1", "bytes_per_point=4294967296", d],
        ),
        "smem": ("smem.cu", ["strides=1", "iters=256", d]),
    }
    res: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    with sampler:
        for name, (src, args) in programs.items():
            try:
                res[name] = run_program(exe[src], args, timeout_s)
            except CalibrationError as exc:
                res[name] = {}
                errors.append(f"{name}: {exc}")
        time.sleep(2 * sampler.interval_s)
    out = {
        "runs": _energy_runs(
            res["inst"], res["stream_dram"], res["stream_l2"], res["smem"], sampler.energy_j
        ),
        "samples": len(sampler.t_ns),
        "energy_counter": bool(sampler.energy_mj),
        "pci_bus_id": pci,
    }
    if errors:
        out["errors"] = errors
    return out


# ---- the device file -----------------------------------------------------------------------
_ORDER = ("sm", "memory", "timing", "energy", "provenance")


def _kind(table: str, key: str) -> str | None:
    return _devices._SCHEMA.get(table, {}).get(key, (None,))[0]


def _table_of(key: str) -> str | None:
    return next((t for t in ("sm", "memory", "timing") if _kind(t, key)), None)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = repr(v)
        return text if any(c in text for c in ".eE") else text + ".0"
    return json.dumps(str(v), ensure_ascii=False)


def _typed(table: str, key: str, value: Any) -> Any:
    kind = _kind(table, key)
    if kind in ("int", "int0"):
        return round(float(value))
    if kind == "float":
        return float(value)
    return value


def _note(m: Measured, date: str, gpu: str) -> str:
    acc = (
        f"; micro-benchmark accuracy {m.accuracy:.0%} (timed instructions / all instructions "
        "of the timed loop)"
        if m.accuracy is not None
        else ""
    )
    return f"{m.kind} {date} on {gpu}: {m.method}{acc}"


def render_device_toml(
    base_doc: Mapping[str, Any], analysis: Analysis, gpu_name: str, date: str, base_name: str
) -> str:
    """A device file: `base_doc` (a parsed base device file) with the measured fields replaced.

    Each replaced field gets a `[provenance.notes]` entry (method, date, GPU, accuracy);
    measured quantities that the schema has no key for are written as comments.
    """
    doc = copy.deepcopy(dict(base_doc))
    prov = dict(doc.get("provenance", {}))
    notes = dict(prov.get("notes", {}))
    comments: list[str] = []
    for key, m in sorted(analysis.values.items()):
        table = _table_of(key)
        if table is None:
            comments.append(f"{key} = {_toml_value(m.value)}  # {m.method}")
            continue
        doc.setdefault(table, {})[key] = _typed(table, key, m.value)
        notes[key] = _note(m, date, gpu_name)
    for key, m in sorted(analysis.energy.items()):
        if _kind("energy", key):
            doc.setdefault("energy", {})[key] = float(m.value)
            notes[key] = _note(m, date, gpu_name)
        else:
            comments.append(f"[energy] {key} = {_toml_value(m.value)}  # proposed key; {m.method}")
    for key, m in sorted(analysis.extra.items()):
        table = _table_of(key)
        if table:
            doc[table][key] = _typed(table, key, m.value)
            notes[key] = _note(m, date, gpu_name)
        else:
            comments.append(f"{key} = {_toml_value(m.value)}  # {m.method}")
    base_source = prov.get("source", "")
    prov.update(
        source=f"cgpredict calibrate on {gpu_name}, {date}: the fields noted "
        f"'measured', 'queried' (CUDA runtime) or 'derived' below; every other "
        f"field from the base device file {base_name!r} ({base_source})",
        date=date,
        gpu_name=gpu_name,
        notes=notes,
    )
    doc["provenance"] = prov
    doc["description"] = f"{gpu_name}, calibrated {date} by cgpredict calibrate (base {base_name})"
    lines = [
        f"# {gpu_name}: device file written by `cgpredict calibrate` on {date}.",
        "# Raw micro-benchmark results: the .raw.json file beside this one.",
    ]
    lines += [f"# not in the schema: {c}" for c in comments]
    lines += [f"# note: {n}" for n in analysis.notes]
    for key, v in doc.items():
        if not isinstance(v, dict):
            lines.append(f"{key} = {_toml_value(v)}")
    for table in _ORDER + tuple(k for k in doc if k not in _ORDER):
        body = doc.get(table)
        if not isinstance(body, dict):
            continue
        lines += ["", f"[{table}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in body.items() if not isinstance(v, dict)]
        for sub, subbody in body.items():
            if isinstance(subbody, dict):
                lines += ["", f"[{table}.{sub}]"]
                lines += [f"{k} = {_toml_value(v)}" for k, v in sorted(subbody.items())]
    return "\n".join(lines) + "\n"


def _base_doc(base: str) -> tuple[dict[str, Any], GPUDevice]:
    path = Path(base) if base.endswith(".toml") else device_path(base)
    dev = load_device_file(path)
    with open(path, "rb") as fh:
        return tomllib.load(fh), dev


def check_output(output: Path, force: bool = False, keep_raw: Path | None = None) -> None:
    """Refuse to replace an existing device file or its `<stem>.raw.json` unless `force`.

    `keep_raw`: a raw file that is being re-read, not rewritten (so its existence is fine).
    """
    output = Path(output)
    raw_path = output.with_name(output.stem + ".raw.json")
    if force:
        return
    for p in (output, raw_path):
        if p.exists() and (keep_raw is None or p.resolve() != Path(keep_raw).resolve()):
            raise CalibrationError(f"{p} exists: pass --force to overwrite it")


def _save_raw(raw: Mapping[str, Any], path: Path) -> None:
    """Write raw results (without `_path`) atomically: a temporary file, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    body = {k: v for k, v in raw.items() if k != "_path"}
    tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def _drop(analysis: Analysis, key: str, note: str) -> Analysis:
    """`analysis` without the measured value `key` (the base value stays), plus a note."""
    return dataclasses.replace(
        analysis,
        values={k: m for k, m in analysis.values.items() if k != key},
        energy={k: m for k, m in analysis.energy.items() if k != key},
        extra={k: m for k, m in analysis.extra.items() if k != key},
        notes=(*analysis.notes, note),
    )


def _schema_screen(analysis: Analysis) -> Analysis:
    """Drop measured values that the device-file schema would reject (type, sign, finiteness),
    including findings that have a schema key and are therefore written as fields."""
    tables = (("", analysis.values), ("", analysis.extra), ("energy", analysis.energy))
    for label, table in tables:
        for key, m in list(table.items()):
            where = label or _table_of(key)
            kind = _kind(where, key) if where else None
            if kind is None:
                continue
            try:
                value = float(m.value) if where == "energy" else _typed(where, key, m.value)
                _devices._check_value("calibrated", where, key, kind, value)
            except (CGPredictError, ValueError, TypeError) as exc:
                analysis = _drop(analysis, key, f"{key}: {exc}; base value kept")
    return analysis


def _culprit(message: str, analysis: Analysis) -> str | None:
    """The measured key a validation error is about: the key it names, else the first
    measured key it mentions; None when it mentions none."""
    measured = set(analysis.values) | set(analysis.energy)
    measured |= {k for k in analysis.extra if _table_of(k)}
    named = re.search(r"\] (\w+):", message)
    if named and named.group(1) in measured:
        return named.group(1)
    hits = [(m.start(), k) for k in measured if (m := re.search(rf"\b{k}\b", message))]
    return min(hits)[1] if hits else None


def finish_from_raw(
    raw: Mapping[str, Any], output: Path, base: str = "h100", force: bool = False
) -> CalibrationResult:
    """Analyse raw results (as `calibrate` saves them) and write the device file and raw JSON.

    The raw JSON is written first, so that no failure below loses the measurements. A
    measured value that the device file cannot take (it fails validation) falls back to the
    base value with a note. Existing files are replaced only with `force` (the raw file being
    re-read is never rewritten).
    """
    source = raw.get("_path")
    if source and Path(output).resolve() == Path(source).resolve():
        raise CalibrationError(
            f"-o {output} is the raw file being read: choose another name for the device file"
        )
    check_output(output, force, keep_raw=source)
    output = Path(output)
    raw_path = output.with_name(output.stem + ".raw.json")
    copy_raw = Path(raw_path).resolve() != Path(source or "").resolve()
    if copy_raw and not source:  # fresh measurements: keep them whatever happens next
        _save_raw(raw, raw_path)
    doc, dev = _base_doc(base)
    bench = raw.get("benchmarks", {})
    try:
        if "records" in raw:  # JSON-lines micro-benchmark records (calibration/records.py)
            analysis = analyse_records(raw["records"], dev, Path(source or "records").name)
        else:
            analysis = analyse(
                bench,
                dev.l2_line_bytes,
                dev.l2_ways,
                l2_sector_bytes=dev.l2_sector_bytes,
                l2_bytes=dev.l2_bytes,
            )
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        raise CalibrationError(
            f"cannot analyse the raw results ({type(exc).__name__}: {exc}); they are saved "
            f"in {raw_path}"
        ) from None
    analysis = _schema_screen(analysis)
    if not (analysis.values or analysis.energy or analysis.extra):
        where = f"in {source}" if source else "by this run"
        raise CalibrationError(
            f"nothing was measured {where}: no device file written"
            + (f" (raw results saved in {raw_path})" if copy_raw and not source else "")
        )
    gpu = raw.get("gpu_name") or (bench.get("props") or {}).get("gpu_name") or "unknown GPU"
    date = raw.get("date") or datetime.date.today().isoformat()
    tmp = output.with_name(output.name + ".tmp")
    for _ in range(len(analysis.values) + len(analysis.extra) + len(analysis.energy) + 1):
        tmp.write_text(render_device_toml(doc, analysis, gpu, date, base))
        try:
            load_device_file(tmp)
            break
        except CGPredictError as exc:
            tmp.unlink()
            key = _culprit(str(exc), analysis)
            if key is None:
                raise CalibrationError(
                    f"the calibrated device file does not validate: {exc} (raw results "
                    f"saved in {raw_path})"
                ) from None
            why = str(exc).split(": ", 1)[-1]
            analysis = _drop(
                analysis,
                key,
                f"{key}: the measured value fails validation ({why}); base value kept",
            )
    tmp.replace(output)
    if copy_raw and source:  # a re-analysis: its copy goes beside the device file on success
        _save_raw(raw, raw_path)
    notes = tuple(analysis.notes) + tuple(raw.get("notes", ()))
    return CalibrationResult(output, raw_path, load_device_file(output), analysis, gpu, notes)


def calibrate(
    output: Path | None,
    base: str = "h100",
    only: Sequence[str] | None = None,
    timeout_s: float = 300.0,
    *,
    force: bool = False,
    nvcc: str | None = None,
    energy: bool = True,
    energy_duration_ms: float = 1500.0,
    progress: Callable[[str], None] | None = None,
) -> CalibrationResult:
    """Measure the local GPU and write `output` (a device file) and `<stem>.raw.json`.

    `output` None: `default_output(<GPU name>)`. `only` restricts the micro-benchmarks
    (names of BENCHMARKS; `props` always runs); `timeout_s` bounds each program. Raises
    NoGPUError without a GPU or nvcc, and CalibrationError when props fails or the result
    does not validate, or when the output exists and not `force`; a failing micro-benchmark
    only leaves its fields at the base values (with a note).
    """
    say = progress or (lambda _msg: None)
    chosen = list(BENCHMARKS) if not only else ["props", *only]
    unknown = sorted(set(chosen) - set(BENCHMARKS))
    if unknown:
        raise CalibrationError(
            f"unknown micro-benchmark(s) {', '.join(unknown)} (known: {', '.join(BENCHMARKS)})"
        )
    _, base_dev = _base_doc(base)
    if output is not None:
        check_output(output, force)  # before minutes of measuring, not after
    vid = visible_gpu_id()
    try:
        gpu = query_gpu(gpu_id=vid)
    except NoGPUError:
        if not vid:
            raise
        gpu = query_gpu()  # an id nvidia-smi does not know: props re-selects by bus id
    out = Path(output) if output is not None else default_output(gpu.name)
    check_output(out, force)
    nvcc_path = find_nvcc(nvcc)
    with tempfile.TemporaryDirectory(prefix="cgp-microbench-") as tmp:
        work = Path(tmp)
        arch = pick_arch(nvcc_path, gpu, work)
        say(f"building micro-benchmarks (nvcc -arch={arch}) for {gpu.name}")
        exe = build(nvcc_path, arch, [s for s in set(BENCHMARKS.values()) if s], work)
        say("props")
        bench: dict[str, Any] = {"props": run_program(exe["props.cu"], [], timeout_s)}
        notes: list[str] = []
        # the GPU the benchmarks run on (CUDA device 0) by its PCI bus id: nvidia-smi's order
        # ignores CUDA_VISIBLE_DEVICES
        bus = str(bench["props"].get("pci_bus_id") or "")
        if bus:
            try:
                gpu = query_gpu(gpu_id=bus)
            except NoGPUError as exc:
                notes.append(f"nvidia-smi does not find the GPU at {bus}: {exc}")
            if output is None and default_output(gpu.name) != out:
                out = default_output(gpu.name)
                check_output(out, force)  # still before the benchmarks
        steps = plan(bench["props"], base_dev)
        for name in dict.fromkeys(chosen):
            if name in steps:
                say(name)
                try:
                    bench[name] = run_program(exe[steps[name][0]], steps[name][1], timeout_s)
                except CalibrationError as exc:
                    notes.append(f"{name} failed, its fields keep the base values: {exc}")
                    bench[name] = {"error": str(exc)}
        if energy and "energy" in chosen:
            say("energy (NVML)")
            try:
                bench["energy"] = _measure_energy(
                    exe, steps, bus or gpu.pci_bus_id, energy_duration_ms, timeout_s
                )
            except Exception as exc:  # noqa: BLE001 - energy is optional, the rest is kept
                bench["energy"] = {"skipped": f"{type(exc).__name__}: {exc}"}
            if "skipped" in bench["energy"]:
                notes.append(f"energy not measured: {bench['energy']['skipped']}")
            notes += [f"energy run failed: {e}" for e in bench["energy"].get("errors", ())]
            bad = [r["name"] for r in bench["energy"].get("runs", ()) if r.get("energy_j") is None]
            if bad:
                notes.append(f"no energy for run(s) {', '.join(bad)} (too few power samples?)")
    raw: dict[str, Any] = {
        "gpu_name": gpu.name,
        "pci_bus_id": bus or gpu.pci_bus_id,
        "compute_capability": gpu.compute_cap,
        "arch": arch,
        "date": datetime.date.today().isoformat(),
        "base": base,
        "notes": notes,
        "benchmarks": {k: v for k, v in bench.items() if "error" not in v},
    }
    raw["failed"] = {k: v["error"] for k, v in bench.items() if "error" in v}
    raw_path = out.with_name(out.stem + ".raw.json")
    _save_raw(raw, raw_path)  # before any analysis: a failure there never loses the run
    raw["_path"] = str(raw_path)
    return finish_from_raw(raw, out, base, force)


def default_output(gpu_name: str) -> Path:
    """`<gpu-name-slug>.toml` in the current directory (e.g. nvidia_h100_80gb_hbm3.toml)."""
    slug = "".join(c if c.isalnum() else "_" for c in gpu_name.lower()).strip("_")
    return Path(("_".join(filter(None, slug.split("_"))) or "gpu") + ".toml")


def format_result(result: CalibrationResult) -> str:
    """Plain-text summary: every measured field (value and method), findings, notes."""
    a = result.analysis
    lines = [f"wrote {result.output} ({result.gpu_name}) and {result.raw_path}"]
    for title, table in (
        ("device fields", a.values),
        ("energy", a.energy),
        ("other findings (no device field)", a.extra),
    ):
        if table:
            lines.append(f"{title}:")
            for key, m in sorted(table.items()):
                acc = f", accuracy {m.accuracy:.0%}" if m.accuracy is not None else ""
                lines.append(f"  {key:<36} {m.value!s:>14}  {m.kind}: {m.method}{acc}")
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def load_raw(path: Path) -> dict[str, Any]:
    """A raw results file written by `calibrate` (for `finish_from_raw`), or a JSON-lines file
    of micro-benchmark records (``{"ubench": ...}`` per line, calibration/records.py)."""
    if Path(path).suffix == ".jsonl":
        return {"records": read_records(path), "_path": str(path), "benchmarks": {}}
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise CalibrationError(f"{path}: cannot read raw calibration results: {exc}") from None
    if not isinstance(raw, dict) or "benchmarks" not in raw:
        raise CalibrationError(f"{path}: not a raw calibration file (no 'benchmarks')")
    bench = raw["benchmarks"]
    if not isinstance(bench, dict):
        raise CalibrationError(f"{path}: not a raw calibration file ('benchmarks' is not a table)")
    for name, body in bench.items():
        if not isinstance(body, dict):
            raise CalibrationError(
                f"{path}: not a raw calibration file (benchmarks.{name} is not a table)"
            )
    raw["_path"] = str(path)
    return raw
