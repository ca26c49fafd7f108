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

This module conducts; the steps are modules of their own: `toolchain` (GPU, nvcc, build, run),
`benchmarks` (what to run, sized from the GPU), `power` (NVML energy runs), `devicefile`
(the device file written), `errors`.
"""

from __future__ import annotations

import datetime
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cgpredict.calibration.analysis import Analysis, analyse
from cgpredict.calibration.benchmarks import BENCHMARKS, plan
from cgpredict.calibration.devicefile import (
    base_doc,
    culprit,
    drop,
    render_device_toml,
    schema_screen,
)
from cgpredict.calibration.errors import CalibrationError, NoGPUError
from cgpredict.calibration.power import measure_energy
from cgpredict.calibration.records import analyse_records, read_records
from cgpredict.calibration.toolchain import (
    GPUInfo,
    build,
    find_nvcc,
    pick_arch,
    query_gpu,
    run_program,
    visible_gpu_id,
)
from cgpredict.devices import GPUDevice, load_device_file
from cgpredict.errors import CGPredictError

__all__ = [
    "CalibrationResult",
    "calibrate",
    "check_output",
    "default_output",
    "finish_from_raw",
    "format_result",
    "load_raw",
]


@dataclass(frozen=True)
class CalibrationResult:
    """What `calibrate` wrote and measured."""

    output: Path
    raw_path: Path
    device: GPUDevice
    analysis: Analysis
    gpu_name: str
    notes: tuple[str, ...]


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
    doc, dev = base_doc(base)
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
    analysis = schema_screen(analysis)
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
            key = culprit(str(exc), analysis)
            if key is None:
                raise CalibrationError(
                    f"the calibrated device file does not validate: {exc} (raw results "
                    f"saved in {raw_path})"
                ) from None
            why = str(exc).split(": ", 1)[-1]
            analysis = drop(
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
    _, base_dev = base_doc(base)
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
            bench["energy"] = _energy(
                exe, steps, bus or gpu.pci_bus_id, energy_duration_ms, timeout_s, notes
            )
    raw = _raw_results(gpu, bus or gpu.pci_bus_id, arch, base, notes, bench)
    raw_path = out.with_name(out.stem + ".raw.json")
    _save_raw(raw, raw_path)  # before any analysis: a failure there never loses the run
    raw["_path"] = str(raw_path)
    return finish_from_raw(raw, out, base, force)


def _raw_results(gpu: GPUInfo, pci: str, arch: str, base: str, notes: list[str],
                 bench: Mapping[str, Any]) -> dict[str, Any]:
    """What a calibration run saves (``<stem>.raw.json``): the GPU, the notes, each
    micro-benchmark's raw numbers, and the ones that failed with their errors."""
    raw: dict[str, Any] = {
        "gpu_name": gpu.name,
        "pci_bus_id": pci,
        "compute_capability": gpu.compute_cap,
        "arch": arch,
        "date": datetime.date.today().isoformat(),
        "base": base,
        "notes": notes,
        "benchmarks": {k: v for k, v in bench.items() if "error" not in v},
    }
    raw["failed"] = {k: v["error"] for k, v in bench.items() if "error" in v}
    return raw


def _energy(
    exe: Mapping[str, Path],
    steps: Mapping[str, tuple[str, list[str]]],
    pci: str,
    duration_ms: float,
    timeout_s: float,
    notes: list[str],
) -> dict[str, Any]:
    """The energy runs (``power.measure_energy``), optional: any failure only skips them;
    what went wrong is added to ``notes``."""
    try:
        out = measure_energy(exe, steps, pci, duration_ms, timeout_s, run_program)
    except Exception as exc:  # noqa: BLE001 - energy is optional, the rest is kept
        out = {"skipped": f"{type(exc).__name__}: {exc}"}
    if "skipped" in out:
        notes.append(f"energy not measured: {out['skipped']}")
    notes += [f"energy run failed: {e}" for e in out.get("errors", ())]
    bad = [r["name"] for r in out.get("runs", ()) if r.get("energy_j") is None]
    if bad:
        notes.append(f"no energy for run(s) {', '.join(bad)} (too few power samples?)")
    return out


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
