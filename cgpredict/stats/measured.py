"""Measured run times, one row per configuration (kernel file x sizes x block x device).

Three formats are read, each into the same :class:`MeasuredRow`:

* the shared jsonl of real measurements (``/work/shared/measurements/h100-polybench-gpu.jsonl``):
  one JSON object a line with ``bench``, ``size``, ``block_x``, ``block_y``, ``variant`` and
  ``kernel_ms_median`` (optionally ``device`` or ``gpu``); every size macro of the benchmark is
  ``size`` except the time steps, ``TMAX = 100`` (the measurements' README: "FDTD-2D: NX = NY =
  size, TMAX = 100");
* what ``cgpredict validate --measured`` reads: the JSON of ``validation/measure.py`` (its
  ``results`` with ``kernel``, ``config``, ``work_sizes`` and ``result.total_ms``, and, where
  ncu ran, ``counters``);
* the published TK1 table (``{"GEMM": {"work": 1024, "grid": 2, "measured_ms": ...}}``), with the
  paper's blocks: 32x32 for 2-D grids, 256x1 for 1-D.

Benchmark names map to corpus files as ``validate`` names them: the corpus file's stem is the
kernel name; a bench name is lower-cased with everything but letters and digits dropped
(``FDTD-2D`` -> ``fdtd2d``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..block import Block, MappingError
from ..devices import list_devices
from ..errors import CGPredictError
from ..frontend.regions import read_source
from ..scaling import overridable_sizes

# Size macros that are not a spatial dimension, as the shared measurements set them.
JSONL_FIXED_SIZES = {"TMAX": 100}
# The TK1 paper's blocks (measurements README: 2-D 32x32 blocks, 1-D 256x1).
TABLE_BLOCKS = {1: "256x1", 2: "32x32"}
MIN_ROWS = 5
PORTS = ("plain", "restrict")


class MeasuredError(CGPredictError):
    """A measured file that cannot be used (format, unknown kernel or device, too few rows)."""

    exit_code = 2


@dataclass(frozen=True)
class MeasuredRow:
    """One measured configuration.

    kernel: the corpus file's stem (``gemm``); bench: the name in the measured file (``GEMM``).
    block: the launch's block as measured (``32x8``). port: the CUDA code measured, ``plain``
    (PolyBench/GPU as distributed, no ``__restrict__``: the shared measurements) or
    ``restrict`` (``validation/cuda`` built with ``--port restrict``); measure.py's file says
    which it built, and a row's own ``port`` field overrides. counters_csv: the Nsight Compute CSV
    (``ncu --csv --page raw``) that ``validation/measure.py`` recorded for this configuration,
    None when ncu did not run; counter_scale: launches of one run / launches profiled in it.
    """

    kernel: str
    bench: str
    work_sizes: dict[str, int]
    block: str
    variant: str
    measured_ms: float
    where: str
    device: str | None = None
    counters_csv: str | None = None
    counter_scale: float = 1.0
    port: str = "plain"  # the CUDA measured: "plain" pointers or "restrict" (__restrict__)

    @property
    def key(self) -> str:
        """A short unique label: kernel, sizes and block (``gemm N=1024 32x8``)."""
        sizes = sorted(set(self.work_sizes.values()))
        size = "x".join(str(s) for s in sizes) if len(sizes) <= 2 else str(max(sizes))
        return f"{self.kernel} {size} {self.block}"


@dataclass(frozen=True)
class MeasuredSet:
    """The rows of one measured file and the GPU it names (if it names one)."""

    path: str
    fmt: str
    gpu: str | None
    rows: tuple[MeasuredRow, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (row, why) left out: not the corpus mapping


def bench_stem(name: str) -> str:
    """The corpus stem a benchmark name maps to (``FDTD-2D`` -> ``fdtd2d``)."""
    return re.sub(r"[^a-z0-9_]+", "", name.lower())


def read_measured(path: Path, corpus: Path) -> MeasuredSet:
    """Read any of the three formats; every row's kernel must be a corpus file."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise MeasuredError(f"{path}: cannot read the measured file ({exc})") from None
    stems = {f.stem for f in Path(corpus).glob("*.c")}
    if not stems:
        raise MeasuredError(f"no corpus kernels (*.c) in {corpus}")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None  # several JSON lines: the shared jsonl
    if doc is None or (isinstance(doc, dict) and "bench" in doc):
        fmt, gpu, raw = "jsonl", None, _read_jsonl(path, text)
    elif isinstance(doc, dict) and "results" in doc:
        fmt, gpu, raw = "measure.py", _gpu_name(doc), _read_measure_json(path, doc)
    elif isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()):
        fmt, gpu, raw = "table", None, _read_table(path, doc)
    else:
        raise MeasuredError(
            f"{path}: not a measured file (want the shared jsonl, validation/measure.py JSON "
            f"or a {{BENCH: {{work, grid, measured_ms}}}} table)"
        )
    unknown = sorted({r["bench"] for r in raw if bench_stem(r["bench"]) not in stems})
    if unknown:
        raise MeasuredError(
            f"{path}: no corpus kernel in {corpus} for {', '.join(unknown)} "
            f"(known: {' '.join(sorted(stems))})"
        )
    devices = set(list_devices())
    bad_dev = sorted({r["device"] for r in raw if r["device"] and r["device"] not in devices})
    if bad_dev:
        raise MeasuredError(
            f"{path}: rows for unknown device {', '.join(bad_dev)} "
            f"(known: {' '.join(sorted(devices))})"
        )
    rows = tuple(_row(r, corpus) for r in raw)
    kept = tuple(r for r in rows if (r.bench, r.variant, r.block) not in OTHER_LAUNCHES)
    skipped = tuple(
        (f"{r.where} {r.bench} {r.block}", OTHER_LAUNCHES[(r.bench, r.variant, r.block)])
        for r in rows
        if (r.bench, r.variant, r.block) in OTHER_LAUNCHES
    )
    return MeasuredSet(str(path), fmt, gpu, kept, skipped)


#: measured launches whose thread mapping is not the corpus file's (shared measurements README)
OTHER_LAUNCHES = {
    ("ATAX", "default", "32x8"): "the suite's 32x8 launch indexes 1-D: 8x redundant threads",
    ("MVT", "default", "32x8"): "the suite's 32x8 launch indexes 1-D: 8x redundant threads",
}


def _row(r: dict, corpus: Path) -> MeasuredRow:
    stem = bench_stem(r["bench"])
    sizes = r["work_sizes"]
    if sizes is None:  # one size for every size macro of the corpus file
        macros = overridable_sizes(read_source(Path(corpus) / f"{stem}.c"))
        sizes = {m: JSONL_FIXED_SIZES.get(m, r["size"]) for m in macros}
    return MeasuredRow(
        stem,
        r["bench"],
        dict(sizes),
        r["block"],
        r["variant"],
        r["ms"],
        r["where"],
        r["device"],
        r.get("counters_csv"),
        r.get("counter_scale", 1.0),
        r["port"],
    )


def _positive(where: str, v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
        raise MeasuredError(f"{where}: {what}: want a positive number, got {v!r}")
    return float(v)


def _block(where: str, text: str) -> str:
    try:
        return str(Block.parse(text))
    except (MappingError, ValueError, TypeError):
        raise MeasuredError(f"{where}: bad block shape {text!r}") from None


def _read_jsonl(path: Path, text: str) -> list[dict]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            e = json.loads(line)
        except ValueError as exc:
            raise MeasuredError(f"{where}: not JSON ({exc})") from None
        if not isinstance(e, dict):
            raise MeasuredError(f"{where}: want a JSON object, got {type(e).__name__}")
        missing = [k for k in ("bench", "size", "block_x", "block_y", "kernel_ms_median")
                   if k not in e]
        if missing:
            raise MeasuredError(f"{where}: missing {', '.join(missing)}")
        if not isinstance(e["bench"], str):
            raise MeasuredError(f"{where}: bench: want a name, got {e['bench']!r}")
        size = e["size"]
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise MeasuredError(f"{where}: size: want a positive integer, got {size!r}")
        out.append({
            "bench": e["bench"],
            "size": size,
            "work_sizes": None,
            "block": _block(where, f"{e['block_x']}x{e['block_y']}"),
            "variant": str(e.get("variant", "default")),
            "ms": _positive(where, e["kernel_ms_median"], "kernel_ms_median"),
            "where": where,
            "device": e.get("device") or None,
            "port": _port(where, e.get("port", "plain")),
        })
    return out


def _gpu_name(doc: dict) -> str | None:
    gpu = doc.get("gpu")
    if isinstance(gpu, dict):
        return str(gpu.get("name")) if gpu.get("name") else None
    return str(gpu) if gpu else None


def _read_measure_json(path: Path, doc: dict) -> list[dict]:
    from ..validate import ValidationError, load_measured

    try:
        _, entries = load_measured(path)
    except ValidationError as exc:
        raise MeasuredError(str(exc)) from None
    out = []
    doc_port = doc.get("port", "plain")  # measure.py records the port it built (plain default)
    for e in entries:
        kernel, cfg = e["kernel"], e["config"]
        ctr = e.get("counters") if isinstance(e.get("counters"), dict) else {}
        csv_path = ctr.get("csv") if isinstance(ctr.get("csv"), str) else None
        per_run, profiled = ctr.get("launches_per_run"), ctr.get("launches_profiled")
        scale = per_run / profiled if (
            isinstance(per_run, (int, float)) and isinstance(profiled, int) and profiled > 0
        ) else 1.0
        out.append({
            "bench": kernel,
            "size": None,
            "work_sizes": {n: int(v) for n, v in e.get("work_sizes", {}).items()},
            "block": _block(f"{path}: {kernel} {cfg}", cfg),
            "variant": "default",
            "ms": float(e["result"]["total_ms"]),
            "where": f"{path}: {kernel} {cfg}",
            "device": None,
            "counters_csv": str(path.parent / csv_path) if csv_path else None,
            "counter_scale": float(scale),
            "port": _port(f"{path}: {kernel} {cfg}", e.get("port", doc_port)),
        })
    return out


def _read_table(path: Path, doc: dict) -> list[dict]:
    out = []
    for bench, e in doc.items():
        where = f"{path}: {bench}"
        grid = e.get("grid")
        if grid not in TABLE_BLOCKS:
            raise MeasuredError(f"{where}: grid: want 1 or 2, got {grid!r}")
        work = e.get("work")
        if isinstance(work, bool) or not isinstance(work, int) or work <= 0:
            raise MeasuredError(f"{where}: work: want a positive integer, got {work!r}")
        out.append({
            "bench": bench,
            "size": work,
            "work_sizes": None,
            "block": TABLE_BLOCKS[grid],
            "variant": "default",
            "ms": _positive(where, e.get("measured_ms"), "measured_ms"),
            "where": where,
            "device": None,
            "port": _port(where, e.get("port", "plain")),  # the paper's PolyBench/GPU code
        })
    return out


def _port(where: str, port) -> str:
    if port not in PORTS:
        raise MeasuredError(f"{where}: port: want {' or '.join(PORTS)}, got {port!r}")
    return port


def infer_device(mset: MeasuredSet) -> str | None:
    """The bundled device a measured file is for: the rows' own device, else the device whose
    name is a word of the GPU name (measure.py) or of the file name (``h100-polybench-gpu``)."""
    named = {r.device for r in mset.rows if r.device}
    if len(named) == 1:
        return named.pop()
    for text in (mset.gpu, Path(mset.path).stem):
        if not text:
            continue
        words = f"-{re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')}-"
        hits = [d for d in list_devices() if f"-{d.lower().replace('_', '-')}-" in words]
        if len(hits) == 1:
            return hits[0]
    return None


def check_enough(mset: MeasuredSet, n: int = MIN_ROWS) -> None:
    """Fewer than ``n`` rows cannot train or check a forest: one line saying so."""
    if len(mset.rows) < n:
        raise MeasuredError(
            f"{mset.path}: {len(mset.rows)} measured row(s); explain needs at least {n}"
        )
