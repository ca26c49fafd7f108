"""Typed values as data, never pickle: frozen dataclasses, tuples, dicts, numpy scalars and
arrays to JSON (arrays in an NPZ beside it, read with ``allow_pickle=False``) and back.

What the on-disk cache keeps of a report (``trace_store``). Reading builds only dataclasses
of the cgpredict package, numpy scalars of numeric types and plain containers, so a planted
file can at worst give a value that fails to decode (``DataFileError``), never run code.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path

import numpy as np

TAG = "__cgp__"  # marks an object that is not a plain JSON dict
_NUMERIC_KINDS = "biuf"


class DataFileError(ValueError):
    """A stored value that cannot be decoded (corrupt, foreign or of another tool version)."""


def encode(value, arrays: dict[str, np.ndarray]):
    """``value`` as plain JSON data; arrays are put into ``arrays`` and referenced by name."""
    if isinstance(value, np.generic) and value.dtype.kind in _NUMERIC_KINDS:
        return {TAG: "scalar", "dtype": value.dtype.str, "v": encode(value.item(), arrays)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {TAG: "float", "v": repr(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        fields = {f.name: encode(getattr(value, f.name), arrays) for f in dataclasses.fields(value)}
        return {TAG: "dataclass", "type": f"{cls.__module__}:{cls.__qualname__}", "f": fields}
    if isinstance(value, tuple):
        return {TAG: "tuple", "v": [encode(v, arrays) for v in value]}
    if isinstance(value, list):
        return [encode(v, arrays) for v in value]
    if isinstance(value, dict):
        return _encode_dict(value, arrays)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(f"cannot store an array of {value.dtype}")
        name = f"a{len(arrays)}"
        arrays[name] = value
        return {TAG: "array", "name": name}
    raise TypeError(f"cannot store a {type(value).__name__}")


def _encode_dict(value: dict, arrays: dict[str, np.ndarray]):
    """A dict with string keys as a JSON object, any other as a list of pairs."""
    if all(isinstance(k, str) for k in value) and TAG not in value:
        return {k: encode(v, arrays) for k, v in value.items()}
    return {TAG: "dict", "items": [[encode(k, arrays), encode(v, arrays)] for k, v in
                                   value.items()]}


def decode(data, arrays: Mapping[str, np.ndarray]):
    """The value ``encode`` made ``data`` from; DataFileError when it is not one."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, arrays) for v in data]
    if not isinstance(data, dict):
        raise DataFileError(f"unexpected {type(data).__name__}")
    tag = data.get(TAG)
    if tag is None:
        return {k: decode(v, arrays) for k, v in data.items()}
    try:
        return _DECODERS[tag](data, arrays)
    except DataFileError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DataFileError(f"bad {tag!r} value: {type(exc).__name__}: {exc}") from None


def _decode_float(data, arrays) -> float:
    v = float(data["v"])
    if math.isfinite(v):
        raise DataFileError("a finite float stored as special")
    return v


def _decode_scalar(data, arrays):
    dt = np.dtype(data["dtype"])
    if dt.kind not in _NUMERIC_KINDS:
        raise DataFileError(f"scalar of type {dt}")
    return dt.type(decode(data["v"], arrays))


def _decode_array(data, arrays) -> np.ndarray:
    arr = arrays[data["name"]]
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise DataFileError(f"array of type {arr.dtype}")
    return arr


def _decode_dataclass(data, arrays):
    cls = dataclass_type(data["type"])
    fields = data["f"]
    if not isinstance(fields, dict):
        raise DataFileError("dataclass fields are not an object")
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    if set(fields) - names:
        raise DataFileError(f"{cls.__qualname__} has no field {sorted(set(fields) - names)[0]}")
    values = {k: decode(v, arrays) for k, v in fields.items()}
    hints = _hints(cls)
    for k, v in values.items():
        if k in hints and not _fits(v, hints[k]):
            raise DataFileError(f"{cls.__qualname__}.{k} holds a {type(v).__name__}")
    return cls(**values)


@functools.lru_cache(maxsize=256)
def _hints(cls: type) -> dict:
    """The resolved type hints of a dataclass (empty where they cannot be resolved)."""
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - a hint naming what its module cannot see
        return {}


def _fits(value, hint) -> bool:
    """Whether ``value`` has the outer type of ``hint`` (containers not looked into): a
    planted value of another type is refused before anything renders it."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(
            value, (bool, np.bool_))
    if hint is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    target = origin or hint
    if not isinstance(target, type) or target is object:
        return True  # Any, a TypeVar, a Literal: not checked
    try:
        return isinstance(value, target) or (target is bool and isinstance(value, np.bool_))
    except TypeError:
        return True


_DECODERS = {
    "float": _decode_float,
    "tuple": lambda d, a: tuple(decode(v, a) for v in d["v"]),
    "dict": lambda d, a: {_hashable(decode(k, a)): decode(v, a) for k, v in d["items"]},
    "array": _decode_array,
    "scalar": _decode_scalar,
    "dataclass": _decode_dataclass,
}


def _hashable(key):
    if isinstance(key, (list, dict)):
        raise DataFileError("a dict key that is not hashable")
    return key


@functools.lru_cache(maxsize=256)
def dataclass_type(name: str) -> type:
    """The dataclass ``module:QualName`` of the cgpredict package (nothing else is built)."""
    module, _, qual = name.partition(":")
    if not (module == "cgpredict" or module.startswith("cgpredict.")) or not qual:
        raise DataFileError(f"{name!r} is not a cgpredict type")
    try:
        obj = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise DataFileError(f"no type {name!r} in this cgpredict") from None
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise DataFileError(f"{name!r} is not a dataclass")
    return obj


def dump(value, folder: Path, stem: str) -> list[Path]:
    """Write ``value`` as ``stem.json`` (and ``stem.npz`` when it holds arrays); the files."""
    arrays: dict[str, np.ndarray] = {}
    doc = json.dumps(encode(value, arrays), separators=(",", ":"), allow_nan=False)
    out = [Path(folder) / f"{stem}.json"]
    out[0].write_text(doc)
    if arrays:
        out.append(Path(folder) / f"{stem}.npz")
        np.savez(out[1], **arrays)
    return out


def load(folder: Path, stem: str):
    """The value ``dump`` wrote; DataFileError when the files do not hold one."""
    folder = Path(folder)
    try:
        data = json.loads((folder / f"{stem}.json").read_text())
        npz = folder / f"{stem}.npz"
        arrays: dict[str, np.ndarray] = {}
        if npz.exists():
            with np.load(npz, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, RecursionError) as exc:
        raise DataFileError(f"{folder / stem}: {type(exc).__name__}: {exc}") from None
    try:
        return decode(data, arrays)
    except RecursionError:
        raise DataFileError(f"{folder / stem}: nested too deeply") from None
