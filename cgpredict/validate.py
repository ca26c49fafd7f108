"""Accuracy harness (``cgpredict validate``): predict every corpus kernel at its reference
configuration and compare with the CUDA ports measured on a real GPU (validation/measure.py).

Measured files are the JSON that ``validation/measure.py`` writes: per kernel and block shape the
work sizes it ran and the median total time. Predictions use exactly those work sizes; kernels
with no measurement are predicted at the file's defaults and listed as not measured.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import CGPredictError
from .pipeline import RunOptions, predict_source
from .warps import Block, MappingError


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


def load_measured(path: Path) -> tuple[str, dict[tuple[str, str], dict]]:
    """(GPU name, {(kernel, block): entry}) from a measure.py JSON file."""
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
    out = {}
    for k, e in enumerate(results):
        where = f"{path}: results[{k}]"
        if not isinstance(e, dict):
            raise ValidationError(f"{where}: not a table")
        if "error" in e or "result" not in e:
            continue
        _check_entry(where, e)
        out[(e["kernel"], e["config"])] = e
    return gpu, out


def _check_entry(where: str, e: dict) -> None:
    """One measured entry: kernel name, a block shape, positive work sizes and time."""
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
) -> Validation:
    """Predict every corpus file (and each measured block shape) and compare."""
    files = sorted(Path(corpus).glob("*.c"))
    if not files:
        raise ValidationError(f"no corpus kernels (*.c) in {corpus}")
    if only:
        unknown = sorted(set(only) - {f.stem for f in files})
        if unknown:
            raise ValidationError(
                f"--only {', '.join(unknown)}: no such corpus file in {corpus} "
                f"(known: {' '.join(f.stem for f in files)})"
            )
        files = [f for f in files if f.stem in only]
    gpu, entries = load_measured(measured) if measured else (None, {})
    rows = []
    for f in files:
        configs = sorted(cfg for (k, cfg) in entries if k == f.stem) or [None]
        for cfg in configs:
            if progress:
                progress(f"{f.stem} {cfg or ''}")
            rows.append(_row(f, cfg, entries.get((f.stem, cfg)), device, model, port))
    return Validation(device, model, str(measured) if measured else None, gpu, tuple(rows))


def _row(
    f: Path, cfg: str | None, entry: dict | None, device: str, model: str, port: str
) -> ValidationRow:
    work = {k: int(v) for k, v in (entry or {}).get("work_sizes", {}).items()}
    opts = RunOptions(
        block=Block.parse(cfg) if cfg else None,
        device=device,
        model=model,
        work_sizes=work,
        port=port,
    )
    t0 = time.perf_counter()
    try:
        rep = predict_source(f, opts)
        predicted, note = rep.total_ms, ""
        work = rep.work_sizes
    except CGPredictError as exc:
        first = (str(exc).strip().splitlines() or [""])[0]  # one line: it is a table cell
        predicted, note = None, f"prediction failed: {first}".replace("|", "/")
    measured = entry["result"].get("total_ms") if entry else None
    if entry is None:
        note = note or "not measured"
    return ValidationRow(
        f.stem, cfg or "default", work, predicted, measured, time.perf_counter() - t0, note
    )


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def to_markdown(v: Validation) -> str:
    lines = [
        f"# Accuracy on {v.gpu_name or v.device} ({v.model} model, device file `{v.device}`)",
        "",
        f"Measurements: `{v.measured_file}`" if v.measured_file else "No measurements given.",
        "",
        "| kernel | block | predicted ms | measured ms | error % | note |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in v.rows:
        lines.append(
            f"| {r.kernel} | {r.block} | {_fmt(r.predicted_ms, '.4g')} | "
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
    d = asdict(v)
    for row, r in zip(d["rows"], v.rows):
        row["error_pct"] = r.error_pct
    d["mape"] = v.mape
    d["schema_version"] = 1
    return json.dumps(d, indent=2, sort_keys=True)


def write_results(v: Validation, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{v.device}-{v.model}"
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    js.write_text(to_json(v) + "\n")
    md.write_text(to_markdown(v))
    return js, md
