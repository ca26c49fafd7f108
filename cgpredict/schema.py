"""JSON Schemas of the ``--json`` outputs (``cgpredict schema run|advise|compare|validate``),
derived from the dataclasses that the outputs are rendered from, and a small validator for the
subset of JSON Schema they use (type, properties, required, additionalProperties, items, enum,
anyOf), so that tests check every command's output without a jsonschema dependency.

A field typed ``object`` or ``Any`` (a model's own details) is any JSON value, unless
``OVERRIDES`` says what it holds. Floats may be null: infinities and NaN are written as null.
Each output carries a ``schema_version`` (a ``const``), raised when its fields change (run:
``prediction.SCHEMA_VERSION``, 5 since ``event_wait_ms`` and ``upload_launch_ms``, 11 since
``dirty_writeback_ms``); the validator
checks it first, so that a file of another version is refused by it, not by a field it lacks.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from typing import Any

__all__ = ["SCHEMAS", "SchemaError", "dataclass_schema", "schema", "validate_json"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
_NUMBER = {"type": ["number", "null"]}


class SchemaError(ValueError):
    """A JSON value that does not match its schema; the message names the path."""


def _overrides() -> dict[tuple[type, str], Any]:
    from .models.base import ModelResult
    from .models.bounds import Bounds
    from .prediction import KernelReport

    return {
        (KernelReport, "result"): ModelResult,
        (ModelResult, "bounds"): Bounds | None,
    }


def type_schema(tp: Any, overrides: dict, drop: dict) -> dict:
    """The schema of one annotated type."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any or tp is object:
        return {}
    if tp is type(None):
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return dict(_NUMBER)
    if tp is str:
        return {"type": "string"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [type_schema(a, overrides, drop) for a in args]}
    if origin in (tuple, list):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return {
                "type": "array",
                "prefixItems": [type_schema(a, overrides, drop) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        item = args[0] if args else Any
        return {"type": "array", "items": type_schema(item, overrides, drop)}
    if origin is dict:
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": type_schema(value, overrides, drop)}
    if dataclasses.is_dataclass(tp):
        return dataclass_schema(tp, overrides, drop)
    return {}


def dataclass_schema(cls: type, overrides: dict | None = None, drop: dict | None = None) -> dict:
    """An object with one property per field of ``cls`` (all required, no others); ``drop``
    maps a class to the fields its JSON leaves out."""
    overrides = _overrides() if overrides is None else overrides
    drop = drop or {}
    names = getattr(sys.modules.get(cls.__module__), "annotation_namespace", None)
    hints = typing.get_type_hints(cls, localns=names() if names else None)
    props = {}
    for f in dataclasses.fields(cls):
        if f.name in drop.get(cls, ()):
            continue
        tp = overrides.get((cls, f.name), hints.get(f.name, Any))
        props[f.name] = type_schema(tp, overrides, drop)
    return {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }


def _extend(s: dict, extra: dict) -> dict:
    s = dict(s)
    s["properties"] = {**s["properties"], **extra}
    s["required"] = sorted(s["properties"])
    return s


def _run() -> dict:
    from .prediction import SCHEMA_VERSION, KernelReport, Report

    s = dataclass_schema(Report, drop={KernelReport: ("launch_profiles",)})
    kernel = _extend(s["properties"]["kernels"]["items"], {"time_ms": _NUMBER})
    s = _extend(
        s,
        {
            "schema_version": {"const": SCHEMA_VERSION},
            "total_ms": _NUMBER,
            "total_energy_mj": _NUMBER,
        },
    )
    s["properties"]["kernels"] = {"type": "array", "items": kernel}
    return s


def _advise() -> dict:
    from .advisor import ADVICE_SCHEMA_VERSION, Advice, Fix

    s = dataclass_schema(Advice, drop={Advice: ("baseline",), Fix: ("report",)})
    return _extend(s, {"schema_version": {"const": ADVICE_SCHEMA_VERSION}})


def _fpga() -> dict:
    from .fpga import FPGAReport

    s = dataclass_schema(FPGAReport, drop={FPGAReport: ("seconds",)})
    return _extend(s, {"total_ms": _NUMBER})


def _compare() -> dict:
    from .fpga.report import SCHEMA_VERSION
    from .gpu_vs_fpga import Comparison

    s = dataclass_schema(Comparison, drop={Comparison: ("gpu",)})
    return _extend(s, {"schema_version": {"const": SCHEMA_VERSION}, "fpga": _fpga()})


def _validate() -> dict:
    from .validate import Validation, ValidationRow

    s = dataclass_schema(Validation, drop={ValidationRow: ("report",)})
    row = _extend(s["properties"]["rows"]["items"], {"error_pct": _NUMBER})
    s = _extend(s, {"schema_version": {"const": 1}, "mape": _NUMBER})
    s["properties"]["rows"] = {"type": "array", "items": row}
    return s


SCHEMAS = {
    "run": (_run, "cgpredict run --json"),
    "advise": (_advise, "cgpredict advise --json"),
    "compare": (_compare, "cgpredict compare --json"),
    "validate": (_validate, "the JSON table cgpredict validate writes"),
}


def schema(command: str) -> dict:
    """The JSON Schema of ``command``'s JSON output."""
    build, what = SCHEMAS[command]
    return {"$schema": DRAFT, "title": what, **build()}


_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _is(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def validate_json(value: Any, s: dict, path: str = "$") -> None:
    """Raise SchemaError at the first place ``value`` breaks ``s`` (the subset above)."""
    if "const" in s and value != s["const"]:
        raise SchemaError(f"{path}: expected {s['const']!r}, got {value!r}")
    if "enum" in s and value not in s["enum"]:
        raise SchemaError(f"{path}: expected one of {s['enum']}, got {value!r}")
    if "anyOf" in s:
        for option in s["anyOf"]:
            try:
                validate_json(value, option, path)
                break
            except SchemaError:
                continue
        else:
            raise SchemaError(f"{path}: {value!r} matches none of its types")
    if "type" in s:
        names = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_is(value, n) for n in names):
            raise SchemaError(f"{path}: expected {'/'.join(names)}, got {type(value).__name__}")
    if isinstance(value, dict):
        props = s.get("properties", {})
        for key, sub in props.items():  # the schema version first: an old file says so
            if "const" in sub and key in value:
                validate_json(value[key], sub, f"{path}.{key}")
        for key in s.get("required", ()):
            if key not in value:
                raise SchemaError(f"{path}: missing {key!r}")
        extra = s.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                validate_json(v, props[key], f"{path}.{key}")
            elif extra is False:
                raise SchemaError(f"{path}: unexpected {key!r}")
            elif isinstance(extra, dict):
                validate_json(v, extra, f"{path}.{key}")
    if isinstance(value, list):
        prefix = s.get("prefixItems")
        if prefix is not None:
            if not s.get("minItems", 0) <= len(value) <= s.get("maxItems", len(value)):
                raise SchemaError(f"{path}: expected {len(prefix)} items, got {len(value)}")
            for i, (v, sub) in enumerate(zip(value, prefix)):
                validate_json(v, sub, f"{path}[{i}]")
        elif "items" in s:
            for i, v in enumerate(value):
                validate_json(v, s["items"], f"{path}[{i}]")
