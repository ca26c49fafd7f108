"""jsondata.jsonable against the straightforward definition it replaced (the reference below:
``dataclasses.fields`` looked up on every value, no exact-type shortcuts), on values that
take every branch, subclasses and classes included; and ``Report.to_dict`` leaving out the
launch profiles without converting them."""

from __future__ import annotations

import dataclasses
import enum
import json
import math

import numpy as np
import pytest

from cgpredict.jsondata import field_names, jsonable, jsonable_fields
from cgpredict.prediction import Report


def reference(x):
    """The definition before the per-type field cache (commit history: jsondata.py)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: reference(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {str(k): reference(v) for k, v in sorted(x.items())}
    if isinstance(x, (list, tuple)):
        return [reference(v) for v in x]
    if isinstance(x, float):
        if math.isinf(x) or math.isnan(x):
            return None
        return round(x, 6)
    if hasattr(x, "item"):
        return reference(x.item())
    return x


@dataclasses.dataclass(frozen=True)
class Inner:
    v: float
    w: tuple = ()


@dataclasses.dataclass(frozen=True)
class Outer:
    name: str
    inner: Inner
    items: tuple[Inner, ...]
    table: dict
    x: object = None
    not_a_field: dataclasses.InitVar[int] = 0  # an InitVar is no field


class Colour(str, enum.Enum):
    RED = "red"


class MyInt(int):
    pass


class MyFloat(float):
    pass


VALUES = [
    1.23456789, -0.0, math.inf, -math.inf, math.nan, 7, True, False, None, "s",
    np.float64(2.0000004), np.float32(0.1), np.int64(-3), np.bool_(True), np.uint8(200),
    MyInt(5), MyFloat(1.00000051), Colour.RED, Inner, Outer,
    [1.5, (2.25, [np.float64(math.nan)])],
    {3: "c", 1: np.float32(0.5), 2: [Inner(0.1234567)]},
    Outer("k", Inner(1 / 3, (np.int32(4), math.inf)), (Inner(2 / 3), Inner(-1e-9)),
          {"b": Inner(5.5), "a": {"z": (1, 2)}}, x=Inner(np.float64(9.87654321))),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_jsonable_is_the_reference(value):
    got = jsonable(value)
    assert (json.dumps(got, sort_keys=True, default=repr)
            == json.dumps(reference(value), sort_keys=True, default=repr))
    assert type(got) is type(reference(value))


def test_field_names_of_dataclasses_only():
    assert field_names(Outer) == ("name", "inner", "items", "table", "x")
    assert field_names(type(Outer)) is None  # a dataclass's class is data, not a dataclass
    assert field_names(dict) is None and field_names(int) is None


def test_jsonable_fields_leaves_out_without_converting():
    """A left-out field is never read as data: a value that cannot be converted (an array
    of two elements: ``.item()`` raises) does no harm there."""
    v = Outer("k", Inner(0.5), (), {}, x=np.zeros(2))
    with pytest.raises(ValueError):
        jsonable(v)
    assert jsonable_fields(v, frozenset({"x"})) == {
        "name": "k", "inner": {"v": 0.5, "w": []}, "items": [], "table": {}}


def test_report_to_dict_has_no_launch_profiles():
    rep = Report(source="s.c", device="d", model="m", work_sizes={"N": 4}, trace_sizes={},
                 kernels=(), warnings=(), seconds={})
    d = rep.to_dict()
    assert list(d)[: len(field_names(Report))] == list(field_names(Report))
    assert d["kernels"] == [] and d["schema_version"] == 11
