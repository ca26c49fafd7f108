"""Typed values as plain JSON data, the one way every ``--json`` output is written."""

from __future__ import annotations

import dataclasses
import math

__all__ = ["jsonable"]


def jsonable(x):
    """Plain JSON data of ``x``: dataclasses as dicts of their fields, dicts sorted by key,
    floats to 6 decimals (inf and nan as None), numpy scalars as Python numbers."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
        return out
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
