"""GPU device descriptions: TOML data files loaded into a frozen `GPUDevice` (SPEC §2.7, §6).

A device file is data, not code. `schema_version = 1` files group their keys into the tables
[sm], [memory], [timing], an optional [energy] and an optional [provenance]; units are part of
every key name (`clock_mhz`, `l2_bytes`, `dram_latency_cycles`). The schema is documented in
`devices/SCHEMA.md` and defined once, in `device_schema.FIELD_SCHEMA`.

Search order for a device *name*: every directory of `$CGPREDICT_DEVICE_PATH` (os.pathsep
separated) first, then the bundled folder `cgpredict/devices/` (read through
importlib.resources). `load_device` also accepts a path to a ``.toml`` file.

``GPUDevice`` and ``FIELD_SCHEMA`` (the typed fields and the file's keys) are defined in
``device_schema`` and re-exported here; this module reads, checks and finds the files.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any

from cgpredict.device_schema import FIELD_SCHEMA, EnergyTable, GPUDevice, Provenance
from cgpredict.errors import CGPredictError
from cgpredict.pipes import PipeRates

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "DeviceError",
    "EnergyTable",
    "GPUDevice",
    "Provenance",
    "device_path",
    "list_devices",
    "load_device",
    "load_device_file",
]

SCHEMA_VERSION = 1
ENV_VAR = "CGPREDICT_DEVICE_PATH"


class DeviceError(CGPredictError, ValueError):
    """A device file or name that cannot be used; the message is one line naming file and key."""

    exit_code = 2


# Sanity bounds: far above any real GPU, low enough that no later arithmetic overflows.
MAX_BYTES = 1 << 50  # a `*_bytes` key: 1 PiB
MAX_COUNT = 1 << 24  # any other integer (counts, units, ways)
MAX_FLOAT = 1e12  # any number (clocks, latencies, bandwidths, energies)

_SECTIONED = ("sm", "memory", "timing")
_TABLE_OF = {
    key: table for table, keys in FIELD_SCHEMA.items() for key in keys if table in _SECTIONED
}
_NOTE_KEYS = (
    {f.name for f in fields(GPUDevice)} | set(FIELD_SCHEMA["energy"]) | {"launch_overhead_us"}
)


def _where(table: str, key: str) -> str:
    return f"[{table}] {key}" if table else key


def check_value(path: str, table: str, key: str, kind: str, value: Any) -> Any:
    """Return `value` converted to the schema kind, or raise DeviceError naming path and key."""
    where = f"{path}: {_where(table, key)}"
    if kind == "bool":
        if not isinstance(value, bool):
            raise DeviceError(f"{where}: expected true or false, got {value!r}")
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise DeviceError(f"{where}: expected a string, got {value!r}")
        return value
    if kind in ("int", "int0"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DeviceError(f"{where}: expected an integer, got {value!r}")
        if value < 0 or (kind == "int" and value == 0):
            need = "positive" if kind == "int" else "non-negative"
            raise DeviceError(f"{where}: expected a {need} integer, got {value!r}")
        limit = MAX_BYTES if key.endswith("_bytes") else MAX_COUNT
        if value > limit:
            raise DeviceError(f"{where}: {value} is implausibly large (at most {limit})")
        return value
    if kind == "ints":
        if not isinstance(value, list):
            raise DeviceError(f"{where}: expected a list of integers, got {value!r}")
        out = tuple(check_value(path, table, key, "int0", v) for v in value)
        if list(out) != sorted(set(out)):
            raise DeviceError(f"{where}: expected ascending distinct integers, got {value!r}")
        return out
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DeviceError(f"{where}: expected a number, got {value!r}")
        if not 0 < value < float("inf"):
            raise DeviceError(f"{where}: expected a positive finite number, got {value!r}")
        if value > MAX_FLOAT:
            raise DeviceError(f"{where}: {value!r} is implausibly large (at most {MAX_FLOAT:g})")
        return float(value)
    raise AssertionError(kind)  # pragma: no cover


def _unknown(path: str, table: str, key: str) -> DeviceError:
    hint = ""
    home = _TABLE_OF.get(key)
    if home is not None and home != table:
        hint = f" (it belongs in [{home}])"
    elif key in FIELD_SCHEMA and table == "":
        hint = f" (a table name: write [{key}])"
    return DeviceError(f"{path}: unknown key {_where(table, key)!r}{hint}")


def _read_table(path: str, table: str, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise DeviceError(f"{path}: [{table}] must be a table, got {data!r}")
    spec = FIELD_SCHEMA[table]
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in spec:
            raise _unknown(path, table, key)
        kind, _ = spec[key]
        if kind != "table":
            out[key] = check_value(path, table, key, kind, value)
    for key, (_, required) in spec.items():
        if required and key not in data:
            raise DeviceError(f"{path}: missing required key {_where(table, key)!r}")
    return out


def _read_provenance(path: str, data: Any) -> Provenance:
    values = _read_table(path, "provenance", data)
    notes_raw = data.get("notes", {})
    if not isinstance(notes_raw, dict):
        raise DeviceError(f"{path}: [provenance] notes must be a table, got {notes_raw!r}")
    notes = []
    for key, text in notes_raw.items():
        if key not in _NOTE_KEYS:
            raise DeviceError(f"{path}: [provenance.notes] {key}: no device field of that name")
        notes.append((key, check_value(path, "provenance.notes", key, "str", text)))
    return Provenance(notes=tuple(sorted(notes)), **values)


def _cross_check(path: str, d: GPUDevice) -> None:
    def fail(key: str, why: str) -> None:
        raise DeviceError(f"{path}: {_where(_TABLE_OF.get(key, ''), key)}: {why}")

    if d.max_warps_per_sm * d.warp_size != d.max_threads_per_sm:
        fail("max_warps_per_sm", "max_warps_per_sm * warp_size must equal max_threads_per_sm")
    if d.max_threads_per_block > d.max_threads_per_sm:
        fail("max_threads_per_block", "exceeds max_threads_per_sm")
    if d.shared_mem_per_block_max_bytes > d.shared_mem_per_sm_bytes:
        fail("shared_mem_per_block_max_bytes", "exceeds shared_mem_per_sm_bytes")
    for key in ("l2_line_bytes", "l2_sector_bytes", "l1_line_bytes"):
        value = getattr(d, key)
        if value & (value - 1):
            fail(key, f"must be a power of two, got {value}")
    if d.l1_alloc_bytes and (d.l1_alloc_bytes & (d.l1_alloc_bytes - 1)
                             or d.l1_alloc_bytes > d.l1_line_bytes):
        fail("l1_alloc_bytes", f"must be a power of two <= l1_line_bytes, got {d.l1_alloc_bytes}")
    if d.l2_line_bytes // d.l2_sector_bytes > 64:
        fail("l2_sector_bytes", "at most 64 sectors a line (l2_line_bytes / l2_sector_bytes)")
    if d.shared_mem_reserved_per_block_bytes > d.shared_mem_per_sm_bytes:
        fail("shared_mem_reserved_per_block_bytes", "exceeds shared_mem_per_sm_bytes")
    if d.shared_carveouts_kb and d.shared_carveouts_kb[-1] * 1024 >= d.l1_bytes:
        fail("shared_carveouts_kb", "the largest must leave some of l1_bytes to the L1")
    if d.register_alloc_unit > d.registers_per_sm:
        fail("register_alloc_unit", "exceeds registers_per_sm")
    if d.l2_bytes % (d.l2_line_bytes * d.l2_ways):
        fail("l2_bytes", "must be a multiple of l2_line_bytes * l2_ways")
    if d.l2_line_bytes % d.l2_sector_bytes:
        fail("l2_sector_bytes", "must divide l2_line_bytes")
    if d.l2_partitions < 1 or d.l2_bytes % d.l2_partitions:
        fail("l2_partitions", "a whole number of partitions (>= 1) dividing l2_bytes")
    fill = d.dram_fill_bytes
    if fill and (fill & (fill - 1) or fill < d.l2_sector_bytes or fill > d.l2_line_bytes):
        fail("dram_fill_bytes", "a power of two from l2_sector_bytes to l2_line_bytes (or 0)")
    if d.l2_miss_slot_ns is not None and not d.l2_slices:
        fail("l2_miss_slot_ns", "needs l2_slices (the slices that share the miss path's work)")
    if d.registers_per_sm % d.schedulers_per_sm:
        fail("schedulers_per_sm", "must divide registers_per_sm")
    if d.staging_issue_rate is not None and d.staging_issue_rate > 1.0:
        fail("staging_issue_rate", "a warp issues at most one instruction a cycle")
    lo, hi = d.loop_launch_lo_us, d.loop_launch_hi_us
    if (lo or hi) and not (d.loop_launch_us and lo and hi and lo <= d.loop_launch_us <= hi):
        fail("loop_launch_lo_us", "loop_launch_lo_us <= loop_launch_us <= loop_launch_hi_us, "
             "all three given (or neither bound)")


#: keys of schema 1 files that later took another name: old -> new
_LEGACY_KEYS = {"launch_overhead_us": "launch_sync_us"}


def _rename_legacy(path: str, kwargs: dict[str, Any]) -> None:
    """Read an old key as its new name (a file written before the rename keeps working);
    both at once is ambiguous and refused."""
    for old, new in _LEGACY_KEYS.items():
        if old in kwargs:
            if new in kwargs:
                raise DeviceError(
                    f"{path}: [timing] {old} is the old name of {new}: give only {new}"
                )
            kwargs[new] = kwargs.pop(old)


def _parse(path: str, name: str, doc: dict[str, Any]) -> GPUDevice:
    kwargs: dict[str, Any] = {"name": name, "source_path": path}
    for key, value in doc.items():
        if key in FIELD_SCHEMA and key != "" and isinstance(value, dict):
            continue
        if key not in FIELD_SCHEMA[""]:
            raise _unknown(path, "", key)
    top = _read_table(path, "", {k: v for k, v in doc.items() if k in FIELD_SCHEMA[""]})
    if top["schema_version"] != SCHEMA_VERSION:
        raise DeviceError(
            f"{path}: schema_version: expected {SCHEMA_VERSION}, got {top['schema_version']!r}"
        )
    if "description" in top:
        kwargs["description"] = top["description"]
    for table in _SECTIONED:
        if table not in doc:
            raise DeviceError(f"{path}: missing required table [{table}]")
        kwargs.update(_read_table(path, table, doc[table]))
    _rename_legacy(path, kwargs)
    if "energy" in doc:
        kwargs["energy"] = EnergyTable(**_read_table(path, "energy", doc["energy"]))
    if "pipes" in doc:
        kwargs["pipes"] = PipeRates(**_read_table(path, "pipes", doc["pipes"]))
    if "provenance" in doc:
        kwargs["provenance"] = _read_provenance(path, doc["provenance"])
    device = GPUDevice(**kwargs)
    _cross_check(path, device)
    return device


@functools.lru_cache(maxsize=64)
def _load_cached(path: str, _mtime_ns: int, _size: int) -> GPUDevice:
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise DeviceError(f"{path}: not valid TOML: {exc}".replace("\n", " ")) from None
    except UnicodeDecodeError:
        raise DeviceError(f"{path}: not valid TOML (not UTF-8)") from None
    except OSError as exc:
        raise DeviceError(f"{path}: cannot read device file: {exc.strerror}") from None
    return _parse(path, Path(path).stem, doc)


def load_device_file(path: str | os.PathLike[str]) -> GPUDevice:
    """Load one device file (any location); the device name is the file's stem."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise DeviceError(f"{p}: cannot read device file: {exc.strerror}") from None
    return _load_cached(str(p), st.st_mtime_ns, st.st_size)


def bundled_dir() -> Path:
    """The folder of device files shipped with cgpredict."""
    return Path(str(resources.files("cgpredict") / "devices"))


def _search_dirs() -> list[Path]:
    dirs = [Path(d) for d in os.environ.get(ENV_VAR, "").split(os.pathsep) if d]
    dirs.append(bundled_dir())
    return dirs


def device_path(name: str) -> Path:
    """The file that `load_device(name)` reads: the first `<name>.toml` in the search order."""
    for directory in _search_dirs():
        candidate = directory / f"{name}.toml"
        if candidate.is_file():
            return candidate
    raise DeviceError(
        f"{name}: no device file {name}.toml in ${ENV_VAR} or the bundled devices "
        f"(known: {', '.join(list_devices()) or 'none'})"
    )


def load_device(name_or_path: str | os.PathLike[str]) -> GPUDevice:
    """Load a device by name (`tk1`, searched as documented above) or by path to a .toml file."""
    text = os.fspath(name_or_path)
    if text.endswith(".toml") or os.sep in text or (os.altsep and os.altsep in text):
        return load_device_file(text)
    return load_device_file(device_path(text))


def list_devices() -> tuple[str, ...]:
    """Names of every device file in the search path (user directories and bundled), sorted."""
    names: set[str] = set()
    for directory in _search_dirs():
        if directory.is_dir():
            names.update(p.stem for p in directory.glob("*.toml") if p.is_file())
    return tuple(sorted(names))
