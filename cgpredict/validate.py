"""Accuracy harness (``cgpredict validate``): predict every corpus kernel at its reference
configuration and compare with the CUDA ports measured on a real GPU (validation/measure.py).

Measured files are the JSON that ``validation/measure.py`` writes: per kernel and block shape the
work sizes it ran and the median total time. Predictions use exactly those work sizes; kernels
with no measurement are predicted at the file's defaults and listed as not measured.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .block import Block, MappingError
from .device_schema import GPUDevice
from .devices import load_device
from .errors import CGPredictError
from .models.dirty_l2 import launch_figures, reset_dirty_bytes, writeback_ms
from .models.event_timing import first_call_late_us, upload_is_large
from .models.launches import SYNC_MODES
from .models.timer_view import event_timed, host_note
from .prediction import RunOptions
from .prepared import prepare

#: how the measured suite's host code waits for its launches, per corpus file (the
#: PolyBench/GPU CUDA of the PolyBench-ACC distribution: cudaThreadSynchronize() after every
#: launch, except MVT, whose two kernels are queued, and 3DCONV, whose host loop of launches
#: is followed by one synchronisation); a measured entry's own "sync" wins
SUITE_SYNC = {"mvt": "end", "3dconv": "end"}

#: how a measurement was timed (ValidationRow.timer)
TIMERS = ("host", "events")
#: how the measured kernel copies its pragma tiles (RunOptions.tile_copy): the generic
#: staging loop of the corpus ports, or the textbook copy (one element a thread)
TILE_COPIES = ("loop", "thread")
#: how an own port's repetition ends its re-upload (validation/port_resets.py): a pageable
#: cudaMemcpy, a cudaMemset, or nothing known
RESETS = ("upload", "memset", "none")


#: the ``timing`` text that validation/measure.py writes: its entries are cudaEvent-timed
_MEASURE_PY_TIMING = "cudaEvent pair around each launch"


class ValidationError(CGPredictError):
    exit_code = 2


@dataclass(frozen=True)
class ValidationRow:
    kernel: str
    block: str
    work_sizes: dict[str, int]
    predicted_ms: float | None
    measured_ms: float | None
    seconds: float
    note: str = ""
    report: object = field(default=None, compare=False, repr=False)  # the prediction (fit.py)
    # how the measurement was timed: "host" (a host clock around the launches and the last
    # synchronisation: the launch stream's costs included) or "events" (cudaEvents around
    # the launches: the GPU's work alone)
    timer: str = "host"
    # an event-timed row whose repetitions end their re-upload with a large pageable copy
    # (the entry's "reset" and "reset_bytes", validation/port_resets.py): its first launch
    # call is late (upload_launch_us, models/event_timing.py)
    after_upload: bool = False
    # what its first launch call takes more after the reset's pageable upload, us (the
    # entry's "reset", "reset_bytes" and "upload_bytes"; eq. (E6), models/event_timing.py)
    late_us: float = 0.0
    # of an event-timed row's predicted time: its first launches' write-back of the dirty L2
    # lines its reset's cudaMemset left (the entry's "memset_bytes", eq. (E5))
    writeback_ms: float = 0.0

    @property
    def error_pct(self) -> float | None:
        """Signed error of the prediction relative to the measurement, in percent."""
        if self.predicted_ms is None or not self.measured_ms:
            return None
        return 100.0 * (self.predicted_ms - self.measured_ms) / self.measured_ms


@dataclass(frozen=True)
class Validation:
    device: str
    model: str
    measured_file: str | None
    gpu_name: str | None
    rows: tuple[ValidationRow, ...]

    @property
    def mape(self) -> float | None:
        """Mean absolute percentage error over the measured kernels."""
        errs = [abs(r.error_pct) for r in self.rows if r.error_pct is not None]
        return sum(errs) / len(errs) if errs else None


def load_measured(path: Path) -> tuple[str, list[dict]]:
    """(GPU name, measured entries) from a measure.py JSON file (or one imported from the
    shared measurements by validation/import_shared.py); entries without a result skipped."""
    try:
        data = json.loads(Path(path).read_text())
        gpu = data["gpu"]["name"] if isinstance(data.get("gpu"), dict) else str(data.get("gpu"))
        results = data["results"]
        if not isinstance(results, list):
            raise TypeError("results is not a list")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValidationError(
            f"{path}: not a measurement file of validation/measure.py ({type(exc).__name__}: {exc})"
        ) from None
    # measure.py's own files time each launch with cudaEvents; an entry may say otherwise
    timing = data.get("timing")
    default_timer = (
        "events" if isinstance(timing, str) and timing.startswith(_MEASURE_PY_TIMING) else "host"
    )
    out = []
    for k, e in enumerate(results):
        where = f"{path}: results[{k}]"
        if not isinstance(e, dict):
            raise ValidationError(f"{where}: not a table")
        if "error" in e or "result" not in e:
            continue
        e = {"timer": default_timer, **e}
        _check_entry(where, e)
        out.append(e)
    return gpu, out


def _check_entry(where: str, e: dict) -> None:
    """One measured entry: kernel name, a block shape, positive work sizes and time, and
    optionally the registers a thread of the measured binary uses (validation/port_registers.py)."""
    if not isinstance(e.get("kernel"), str):
        raise ValidationError(f"{where}.kernel: want a kernel name, got {e.get('kernel')!r}")
    cfg = e.get("config")
    try:
        if not isinstance(cfg, str):
            raise MappingError("")
        Block.parse(cfg)
    except MappingError:
        raise ValidationError(f"{where}.config: bad block shape {cfg!r}") from None
    sizes = e.get("work_sizes", {})
    if not isinstance(sizes, dict):
        raise ValidationError(f"{where}.work_sizes: want a table of NAME: N, got {sizes!r}")
    for name, v in sizes.items():
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValidationError(f"{where}.work_sizes.{name}: want a positive integer, got {v!r}")
    result = e["result"]
    if not isinstance(result, dict):
        raise ValidationError(f"{where}.result: want a table, got {result!r}")
    ms = result.get("total_ms")
    if (
        isinstance(ms, bool)
        or not isinstance(ms, (int, float))
        or not (math.isfinite(ms) and ms > 0)
    ):
        raise ValidationError(f"{where}.result.total_ms: want a positive number, got {ms!r}")
    if e.get("timer", "host") not in TIMERS:
        raise ValidationError(
            f"{where}.timer: want one of {', '.join(TIMERS)}, got {e.get('timer')!r}"
        )
    if e.get("copy", "loop") not in TILE_COPIES:
        raise ValidationError(
            f"{where}.copy: want one of {', '.join(TILE_COPIES)}, got {e.get('copy')!r}"
        )
    regs = e.get("registers", 32)
    if isinstance(regs, bool) or not isinstance(regs, int) or regs <= 0:
        raise ValidationError(
            f"{where}.registers: want a positive register count, got {regs!r}"
        )
    if e.get("reset", "none") not in RESETS:
        raise ValidationError(
            f"{where}.reset: want one of {', '.join(RESETS)}, got {e.get('reset')!r}"
        )
    for key in ("reset_bytes", "memset_bytes", "upload_bytes"):
        nbytes = e.get(key, 1)
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValidationError(f"{where}.{key}: want a positive byte count, got {nbytes!r}")
    if e.get("sync", "each") not in SYNC_MODES:
        raise ValidationError(
            f"{where}.sync: want one of {', '.join(SYNC_MODES)}, got {e.get('sync')!r}"
        )


def default_measured(device: str, root: Path) -> Path | None:
    """The measurement file of `device` in validation/measured/, if there is one.

    `<device>.json` first; else the file that measure.py named after the GPU (a slug such as
    `nvidia-h100-80gb-hbm3.json`) whose words contain the device name's words (`h100`,
    `jetson-xavier-nx`). Several candidates are ambiguous: the user must pass --measured.
    """
    folder = root / "validation" / "measured"
    exact = folder / f"{device}.json"
    if exact.exists():
        return exact
    key = re.sub(r"[^a-z0-9]+", "-", Path(device).stem.lower()).strip("-")
    if not key or not folder.is_dir():
        return None
    found = sorted(f for f in folder.glob("*.json") if f"-{key}-" in f"-{f.stem.lower()}-")
    if len(found) > 1:
        names = ", ".join(f.name for f in found)
        raise ValidationError(
            f"several measurement files match device {device!r} ({names}): pick one with --measured"
        )
    return found[0] if found else None


def validate(
    device: str,
    corpus: Path,
    measured: Path | None = None,
    model: str = "cgpredict",
    only: tuple[str, ...] = (),
    progress=None,
    port: str = "plain",
    measured_registers: bool = True,
) -> Validation:
    """Predict every measured configuration (kernel, work sizes, block) and compare; without
    measurements, every corpus file at its defaults. A file is traced once per work size and
    analysed per block shape. An entry's ``registers`` (ptxas -v of its port) set the
    registers a thread unless ``measured_registers`` is False; else, as ``run`` does, they
    are estimated from the C (registers.py)."""
    files = {f.stem: f for f in sorted(Path(corpus).glob("*.c"))}
    if not files:
        raise ValidationError(f"no corpus kernels (*.c) in {corpus}")
    if only:
        unknown = sorted(set(only) - set(files))
        if unknown:
            raise ValidationError(
                f"--only {', '.join(unknown)}: no such corpus file in {corpus} "
                f"(known: {' '.join(files)})"
            )
    gpu, entries = load_measured(measured) if measured else (None, [])
    for e in entries:
        if e["kernel"] not in files:
            raise ValidationError(
                f"{measured}: measured kernel {e['kernel']!r} has no corpus file "
                f"{e['kernel']}.c in {corpus}"
            )
    wanted = [e for e in entries if not only or e["kernel"] in only]
    if not measured:
        wanted = [{"kernel": k} for k in files if not only or k in only]
    if not measured_registers:
        wanted = [{k: v for k, v in e.items() if k != "registers"} for e in wanted]
    rows = predict_entries(device, files, wanted, model, port, measured, progress)
    return Validation(device, model, _shown(measured) if measured else None, gpu, rows)


def predict_entries(
    device: str,
    files: dict[str, Path],
    entries: list[dict],
    model: str = "cgpredict",
    port: str = "plain",
    measured: Path | None = None,
    progress=None,
) -> tuple[ValidationRow, ...]:
    """One row per entry (measure.py's fields: kernel, config, work_sizes, timer, registers,
    reset; ``result`` optional: an entry without it is predicted, not compared): each file
    traced once per work size and host synchronisation, analysed per block shape."""
    groups: dict[tuple, list[dict]] = {}
    for e in entries:
        sync = e.get("sync", SUITE_SYNC.get(e["kernel"], "each"))
        key = (e["kernel"], tuple(sorted(e.get("work_sizes", {}).items())), sync)
        groups.setdefault(key, []).append(e)
    dev = load_device(device)  # its launch costs: what an event timer sees of a launch
    rows: list[ValidationRow] = []
    for (stem, work, sync), group in sorted(groups.items()):
        if progress:
            progress(f"{stem} {dict(work)}")
        base = RunOptions(device=device, model=model, work_sizes=dict(work), port=port, sync=sync)
        rows += _rows(files[stem], base, group, measured, dev)
    return tuple(rows)


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it (tables stay the
    same on every machine)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _rows(
    f: Path, base: RunOptions, group: list[dict], measured: Path | None, dev: GPUDevice
) -> list[ValidationRow]:
    """One row per entry of ``group`` (one file, one work size, one host synchronisation):
    traced once, analysed per block. A size the file does not have is the measured file's
    error, named."""
    work = base.work_sizes
    text = f.read_bytes().decode("utf-8", "replace") if work else ""
    for name in work:
        if not re.search(rf"\b{re.escape(name)}\b", text):
            raise ValidationError(f"{measured}: {f.name} has no size macro {name}")
    out = []
    t0 = time.perf_counter()
    try:
        prep = prepare(f, base)
    except CGPredictError as exc:
        note = _failure(exc)
        return [
            ValidationRow(f.stem, e.get("config", "default"), work, None, _ms(e),
                          time.perf_counter() - t0, note)
            for e in group
        ]
    with prep:
        for e in group:
            cfg = e.get("config")
            t1 = time.perf_counter()
            opts = dataclasses.replace(base, block=Block.parse(cfg) if cfg else None,
                                       tile_copy=e.get("copy", "loop"),
                                       registers_per_thread=e.get("registers",
                                                                  base.registers_per_thread))
            timer = e.get("timer", "host")
            upload = upload_is_large(dev, e.get("reset", "none"), e.get("reset_bytes"))
            late = first_call_late_us(dev, e.get("reset", "none"), e.get("reset_bytes"),
                                      e.get("upload_bytes"))  # (E6)
            zeroed = e.get("memset_bytes")
            dirty = reset_dirty_bytes(dev, e.get("reset", "none"), zeroed)
            wb = 0.0
            try:
                rep = prep.analyze(opts)
                if timer == "events" and dirty > 0:  # (E5), once: the row keeps it apart
                    wb = writeback_ms(launch_figures(rep.kernels), dev, dirty, zeroed)
                timed, waits = event_timed(rep, timer, dev, late)
                predicted = timed + wb
                kernels = [(k.kernel_ms, k.launches) for k in rep.kernels]
                note = (host_note(predicted, waits, dev, kernels, late)
                        if "result" in e else "")
                sizes, report = rep.work_sizes, rep
            except CGPredictError as exc:
                predicted, note, sizes, report = None, _failure(exc), work, None
            secs = time.perf_counter() - t1 + (t1 - t0 if not out else 0.0)
            out.append(
                ValidationRow(
                    kernel=f.stem,
                    block=cfg or "default",
                    work_sizes=sizes,
                    predicted_ms=predicted,
                    measured_ms=_ms(e),
                    seconds=secs,
                    note=note or ("" if "result" in e else "not measured"),
                    report=report,
                    timer=timer,
                    after_upload=upload,
                    late_us=late,
                    writeback_ms=wb,
                )
            )
    return out


def _ms(entry: dict) -> float | None:
    return entry["result"].get("total_ms") if "result" in entry else None


def _failure(exc: Exception) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]  # one line: it is a table cell
    return f"prediction failed: {first}".replace("|", "/")


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _sizes(work: dict[str, int]) -> str:
    """Work sizes in one cell: ``N=2048`` or ``NI=NJ=1024`` when the values agree."""
    if not work:
        return "default"
    values = set(work.values())
    if len(values) == 1 and len(work) > 1:
        return "=".join(sorted(work)) + f"={values.pop()}"
    return " ".join(f"{k}={v}" for k, v in sorted(work.items()))


def to_markdown(v: Validation) -> str:
    lines = [
        f"# Accuracy on {v.gpu_name or v.device} ({v.model} model, device file `{v.device}`)",
        "",
        f"Measurements: `{v.measured_file}`" if v.measured_file else "No measurements given.",
        "",
        "| kernel | sizes | block | predicted ms | measured ms | error % | note |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for r in v.rows:
        lines.append(
            f"| {r.kernel} | {_sizes(r.work_sizes)} | {r.block} | {_fmt(r.predicted_ms, '.4g')} | "
            f"{_fmt(r.measured_ms, '.4g')} | {_fmt(r.error_pct, '+.1f')} | {r.note} |"
        )
    lines += [
        "",
        f"Mean absolute percentage error: {_fmt(v.mape, '.1f')} %"
        if v.mape is not None
        else "Mean absolute percentage error: no measured kernels",
    ]
    return "\n".join(lines) + "\n"


def to_json(v: Validation) -> str:
    d = {f.name: getattr(v, f.name) for f in dataclasses.fields(v) if f.name != "rows"}
    d["rows"] = [
        {**{f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name != "report"},
         "error_pct": r.error_pct}
        for r in v.rows
    ]
    d["mape"] = v.mape
    d["schema_version"] = 1
    return json.dumps(d, indent=2, sort_keys=True)


def device_stem(device: str) -> str:
    """A device's name for a file stem: a device file's path gives its name without `.toml`,
    so that `--device /path/x.toml` writes into the output folder, not beside the file."""
    name = Path(device).name
    return name[: -len(".toml")] if name.endswith(".toml") else name


def write_results(v: Validation, out_dir: Path) -> tuple[Path, ...]:
    """The JSON and Markdown tables (and a predicted-vs-measured plot when matplotlib is
    installed) in ``out_dir``. A validation where a prediction failed never replaces an
    existing table: it raises instead, naming the failures."""
    stem = f"{device_stem(v.device)}-{v.model}"
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    failed = [f"{r.kernel} {r.block}" for r in v.rows if r.predicted_ms is None]
    if failed and (js.exists() or md.exists()):
        raise ValidationError(
            f"predictions failed for {', '.join(failed)}: {js} and {md} left as they were"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, text in ((js, to_json(v) + "\n"), (md, to_markdown(v))):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    png = plot_validation(v, out_dir / f"{stem}.png")
    return (js, md) + ((png,) if png else ())


def plot_validation(v: Validation, path: Path) -> Path | None:
    """Predicted vs measured time, log-log, one point per measured row (None without
    matplotlib or measurements); drawn by the shared plotting module (plots.py)."""
    pts = [(r.measured_ms, r.predicted_ms, r.kernel) for r in v.rows
           if r.measured_ms and r.predicted_ms]
    if not pts:
        return None
    try:
        from .plots import validation_plot

        title = (
            f"{v.device}, {v.model} model: MAPE {v.mape:.1f}% over {len(pts)} runs"
            if v.mape is not None
            else v.device
        )
        return validation_plot(pts, title, path)
    except ImportError:
        return None
