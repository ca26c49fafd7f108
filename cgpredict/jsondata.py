"""Typed values as plain JSON data, the one way every ``--json`` output is written."""

from __future__ import annotations

import dataclasses
import functools
import math

__all__ = ["field_names", "jsonable", "jsonable_fields"]

#: types whose instances are their own JSON data (exact types: a subclass takes the long way)
_PLAIN = frozenset({str, int, bool, type(None)})


def jsonable(x):
    """Plain JSON data of ``x``: dataclasses as dicts of their fields, dicts sorted by key,
    floats to 6 decimals (inf and nan as None), numpy scalars as Python numbers."""
    t = type(x)
    if t is float:
        return None if math.isinf(x) or math.isnan(x) else round(x, 6)
    if t in _PLAIN:
        return x
    names = field_names(t)
    if names is not None:
        return {name: jsonable(getattr(x, name)) for name in names}
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in sorted(x.items())}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, float):
        if math.isinf(x) or math.isnan(x):
            return None
        return round(x, 6)
    if hasattr(x, "item"):  # numpy scalar
        return jsonable(x.item())
    return x


def jsonable_fields(x, leave_out: frozenset[str]) -> dict:
    """``jsonable`` of the dataclass instance ``x`` less the fields named in ``leave_out``
    (never converted: a report's bulky parts that its JSON does not print)."""
    return {n: jsonable(getattr(x, n)) for n in field_names(type(x)) if n not in leave_out}


@functools.cache
def field_names(t: type) -> tuple[str, ...] | None:
    """The field names of dataclass type ``t`` in declaration order (None: not a dataclass),
    found once per type: a report holds tens of thousands of small dataclass values."""
    if isinstance(t, type) and issubclass(t, type):  # x is itself a class (is_dataclass(cls))
        return None
    if not dataclasses.is_dataclass(t):
        return None
    return tuple(f.name for f in dataclasses.fields(t))
