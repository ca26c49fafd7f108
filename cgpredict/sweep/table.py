"""A sweep's table: one row per configuration and kernel, with the fields of ``run --json``.

A row is the configuration (``cfg.*``: file, block, device, port, model, the swept sizes),
the report's own fields (source, device, model, port, work and trace sizes, total time,
warnings) and the kernel's (``kernel.*``), nested objects flattened with dotted names and
lists kept as JSON text, so a CSV holds them. The run's ``seconds`` (wall-clock timings, not
a result) are left out. Written as CSV, and as Parquet when pyarrow (or pandas with a
Parquet engine) is importable.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .plan import Config


def flatten(obj, prefix: str = "") -> dict:
    """Nested dicts -> ``{"a.b.c": leaf}``; lists and dicts inside lists as JSON text."""
    out: dict = {}
    for k, v in obj.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, name + "."))
        elif isinstance(v, (list, tuple)):
            out[name] = json.dumps(v, sort_keys=True, default=_plain)
        else:
            out[name] = _plain(v)
    return out


def _plain(v):
    """numpy scalars -> Python numbers (JSON and CSV alike)."""
    if hasattr(v, "item") and callable(v.item):
        return v.item()
    return v


def config_fields(cfg: Config) -> dict:
    return {
        "cfg.file": cfg.file,
        "cfg.block": cfg.block,
        "cfg.device": cfg.device,
        "cfg.port": cfg.port,
        "cfg.model": cfg.model,
        **{f"cfg.size.{n}": v for n, v in cfg.size_label},
    }


def report_rows(rep, cfg: Config) -> list[dict]:
    """The rows of one configuration's report (``Report``)."""
    d = json.loads(rep.to_json())
    kernels = d.pop("kernels")
    d.pop("seconds", None)
    head = {**config_fields(cfg), **flatten(d, "report.")}
    return [{**head, **flatten(k, "kernel.")} for k in kernels]


def columns(rows: list[dict]) -> list[str]:
    """Every field of any row, in first-seen order."""
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    return list(seen)


def write_csv(rows: list[dict], path: Path) -> Path:
    cols = columns(rows)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
    tmp.replace(path)
    return path


def write_parquet(rows: list[dict], path: Path) -> str | None:
    """Write ``rows`` as Parquet; returns None, or why it could not (no pyarrow/pandas)."""
    cols = columns(rows)
    data = {c: _column([r.get(c) for r in rows]) for c in cols}
    tmp = path.with_name(path.name + ".part")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table(data), tmp)
    except ImportError:
        try:
            import pandas as pd

            pd.DataFrame(data).to_parquet(tmp)
        except ImportError as exc:
            missing = exc.name or "pyarrow"
            return f"no Parquet writer ({missing} is not installed: pip install pyarrow)"
    tmp.replace(path)
    return None


def _column(values: list) -> list:
    """A column for Parquet: numbers stay numbers (ints with floats become floats), a column
    mixing text with numbers or flags becomes text; None stays null."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float} or len(kinds) <= 1:
        return values
    return [None if v is None else str(v) for v in values]


def read_csv(path: Path) -> list[dict]:
    """The rows of a sweep CSV, numbers parsed back."""
    with open(path, newline="") as f:
        return [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(f)]


def _number(text: str):
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    return text
