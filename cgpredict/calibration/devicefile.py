"""The device file a calibration writes: the base device file (datasheet fields) with the
measured fields replaced and a `[provenance.notes]` entry for each; measured values the
device-file schema would reject are dropped (the base value stays, with a note)."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cgpredict.calibration.analysis import Analysis, Measured
from cgpredict.devices import (
    FIELD_SCHEMA,
    GPUDevice,
    check_value,
    device_path,
    load_device_file,
)
from cgpredict.errors import CGPredictError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["base_doc", "culprit", "drop", "render_device_toml", "schema_screen"]

_ORDER = ("sm", "memory", "timing", "energy", "provenance")


def _kind(table: str, key: str) -> str | None:
    return FIELD_SCHEMA.get(table, {}).get(key, (None,))[0]


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
    if isinstance(v, (list, tuple)):  # e.g. shared_carveouts_kb, a TOML array
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
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


def base_doc(base: str) -> tuple[dict[str, Any], GPUDevice]:
    path = Path(base) if base.endswith(".toml") else device_path(base)
    dev = load_device_file(path)
    with open(path, "rb") as fh:
        return tomllib.load(fh), dev


def drop(analysis: Analysis, key: str, note: str) -> Analysis:
    """`analysis` without the measured value `key` (the base value stays), plus a note."""
    return dataclasses.replace(
        analysis,
        values={k: m for k, m in analysis.values.items() if k != key},
        energy={k: m for k, m in analysis.energy.items() if k != key},
        extra={k: m for k, m in analysis.extra.items() if k != key},
        notes=(*analysis.notes, note),
    )


def schema_screen(analysis: Analysis) -> Analysis:
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
                check_value("calibrated", where, key, kind, value)
            except (CGPredictError, ValueError, TypeError) as exc:
                analysis = drop(analysis, key, f"{key}: {exc}; base value kept")
    return analysis


def culprit(message: str, analysis: Analysis) -> str | None:
    """The measured key a validation error is about: the key it names, else the first
    measured key it mentions; None when it mentions none."""
    measured = set(analysis.values) | set(analysis.energy)
    measured |= {k for k in analysis.extra if _table_of(k)}
    named = re.search(r"\] (\w+):", message)
    if named and named.group(1) in measured:
        return named.group(1)
    hits = [(m.start(), k) for k in measured if (m := re.search(rf"\b{k}\b", message))]
    return min(hits)[1] if hits else None
