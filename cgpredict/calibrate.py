"""`cgpredict calibrate`: measure the local GPU, write a device file from the results (SPEC §6).

Steps: find an NVIDIA GPU (`nvidia-smi`) and `nvcc`; build `cgpredict/microbench/*.cu`
(`nvcc -O3 -arch=native`, else the GPU's `sm_XY`); run each micro-benchmark with a timeout
(each prints one JSON line of raw numbers); sample power through NVML (`pynvml` from the
optional `nvidia-ml-py`, group `[gpu]`) around the energy runs; analyse the raw results
(`cgpredict.calibrate_analysis`, pure functions); render a device file from a base device file
(datasheet fields) with the measured fields replaced and a `[provenance.notes]` entry for each;
write the raw results beside it as `<name>.raw.json`. `finish_from_raw` redoes the last two
steps from a saved raw file, without a GPU.
"""

from __future__ import annotations

import concurrent.futures
import copy
import datetime
import json
import os
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
from cgpredict.calibrate_analysis import Analysis, Measured, analyse, integrate_energy_j
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

# Micro-benchmark name -> source file (cgpredict/microbench/); `props` always runs.
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
def query_gpu(nvidia_smi: str | None = None) -> GPUInfo:
    """The first GPU `nvidia-smi` lists; NoGPUError when there is no driver or no GPU."""
    smi = nvidia_smi or shutil.which("nvidia-smi")
    if not smi:
        raise NoGPUError(
            "no NVIDIA GPU: nvidia-smi not found (calibrate needs an NVIDIA GPU, "
            "its driver and the CUDA toolkit)"
        )
    for fields in ("name,compute_cap,pci.bus_id", "name"):
        try:
            r = subprocess.run(
                [smi, f"--query-gpu={fields}", "--format=csv,noheader"],
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
    return Path(str(resources.files("cgpredict") / "microbench"))


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
    return json.loads(lines[-1])


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
                f"values={_geom(256 << 10, min(4 * l2, big))}",
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
                f"flush={2 * l2}",
                f"values={strides}",
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
        "bandwidth": ("bandwidth.cu", [f"bytes={big}", "reps=5"]),
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
        self._h = (
            pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            if pci_bus_id
            else pynvml.nvmlDeviceGetHandleByIndex(0)
        )
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
    r_inst: dict, r_dram: dict, r_l2: dict, r_smem: dict, sampler: PowerSampler
) -> list[dict[str, Any]]:
    runs = []

    def add(name: str, res: dict, prefix: str, counts: dict[str, float]) -> None:
        t0, t1 = res.get(f"{prefix}energy_t0_ns"), res.get(f"{prefix}energy_t1_ns")
        if t0 is None or t1 is None:
            return
        runs.append(
            {
                "name": name,
                "seconds": res[f"{prefix}energy_kernel_ms"] / 1e3,
                "window_ns": [t0, t1],
                "counts": counts,
                "energy_j": sampler.energy_j(t0, t1),
            }
        )

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
    try:
        sampler = PowerSampler(pci)
    except ImportError:
        return {"skipped": "pynvml not installed (pip install 'cgpredict[gpu]', i.e. nvidia-ml-py)"}
    except Exception as exc:  # noqa: BLE001 - any NVML failure only skips energy
        return {"skipped": f"NVML unavailable: {exc}"}
    d = f"duration_ms={duration_ms:g}"
    with sampler:
        r_inst = run_program(
            exe["inst.cu"], ["classes=idle,int32,fp32,fp64,sfu", "iters=1024", d], timeout_s
        )
        r_dram = run_program(
            exe["stream.cu"],
            [*steps["stream_dram"][1][:1], "strides=1", "bytes_per_point=1073741824", d],
            timeout_s,
        )
        r_l2 = run_program(
            exe["stream.cu"],
            [*steps["stream_l2"][1][:1], "strides=1", "bytes_per_point=4294967296", d],
            timeout_s,
        )
        r_smem = run_program(exe["smem.cu"], ["strides=1", "iters=256", d], timeout_s)
        time.sleep(2 * sampler.interval_s)
    return {
        "runs": _energy_runs(r_inst, r_dram, r_l2, r_smem, sampler),
        "samples": len(sampler.t_ns),
        "energy_counter": bool(sampler.energy_mj),
    }


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


def finish_from_raw(
    raw: Mapping[str, Any], output: Path, base: str = "h100", force: bool = False
) -> CalibrationResult:
    """Analyse raw results (as `calibrate` saves them) and write the device file and raw JSON.

    Existing files are replaced only with `force` (the raw file being re-read is never rewritten).
    """
    check_output(output, force, keep_raw=raw.get("_path"))
    doc, dev = _base_doc(base)
    bench = raw.get("benchmarks", {})
    analysis = analyse(bench, dev.l2_line_bytes, dev.l2_ways)
    gpu = raw.get("gpu_name") or (bench.get("props") or {}).get("gpu_name") or "unknown GPU"
    date = raw.get("date") or datetime.date.today().isoformat()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    raw_path = output.with_name(output.stem + ".raw.json")
    text = render_device_toml(doc, analysis, gpu, date, base)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_text(text)
    try:
        load_device_file(tmp)
    except CGPredictError as exc:
        tmp.unlink()
        raise CalibrationError(f"the calibrated device file does not validate: {exc}") from None
    tmp.replace(output)
    if Path(raw_path).resolve() != Path(raw.get("_path", "")).resolve():
        raw_path.write_text(
            json.dumps({k: v for k, v in raw.items() if k != "_path"}, indent=1, sort_keys=True)
            + "\n"
        )
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
    gpu = query_gpu()
    nvcc_path = find_nvcc(nvcc)
    with tempfile.TemporaryDirectory(prefix="cgp-microbench-") as tmp:
        work = Path(tmp)
        arch = pick_arch(nvcc_path, gpu, work)
        say(f"building micro-benchmarks (nvcc -arch={arch}) for {gpu.name}")
        exe = build(nvcc_path, arch, [s for s in set(BENCHMARKS.values()) if s], work)
        say("props")
        bench: dict[str, Any] = {"props": run_program(exe["props.cu"], [], timeout_s)}
        steps = plan(bench["props"], base_dev)
        notes: list[str] = []
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
                    exe,
                    steps,
                    gpu.pci_bus_id or bench["props"].get("pci_bus_id", ""),
                    energy_duration_ms,
                    timeout_s,
                )
            except CalibrationError as exc:
                bench["energy"] = {"skipped": str(exc)}
            if "skipped" in bench["energy"]:
                notes.append(f"energy not measured: {bench['energy']['skipped']}")
    raw = {
        "gpu_name": gpu.name,
        "compute_capability": gpu.compute_cap,
        "arch": arch,
        "date": datetime.date.today().isoformat(),
        "base": base,
        "notes": notes,
        "benchmarks": {k: v for k, v in bench.items() if "error" not in v},
    }
    raw["failed"] = {k: v["error"] for k, v in bench.items() if "error" in v}
    return finish_from_raw(raw, output or default_output(gpu.name), base, force)


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
    """A raw results file written by `calibrate` (for `finish_from_raw`)."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise CalibrationError(f"{path}: cannot read raw calibration results: {exc}") from None
    if not isinstance(raw, dict) or "benchmarks" not in raw:
        raise CalibrationError(f"{path}: not a raw calibration file (no 'benchmarks')")
    raw["_path"] = str(path)
    return raw
