"""GPU device descriptions: TOML data files loaded into a frozen `GPUDevice` (SPEC §2.7, §6).

A device file is data, not code. `schema_version = 1` files group their keys into the tables
[sm], [memory], [timing], an optional [energy] and an optional [provenance]; units are part of
every key name (`clock_mhz`, `l2_bytes`, `dram_latency_cycles`). The schema is documented in
`devices/SCHEMA.md` and defined once, in `FIELD_SCHEMA` below.

Search order for a device *name*: every directory of `$CGPREDICT_DEVICE_PATH` (os.pathsep
separated) first, then the bundled folder `cgpredict/devices/` (read through
importlib.resources). `load_device` also accepts a path to a ``.toml`` file.

Over 500 lines: ``GPUDevice`` and ``FIELD_SCHEMA`` are one table read two ways (the typed
fields, and the file's keys with their kinds, units and ranges); kept in one module so that a
field is never added to one and not the other (``_parse`` fills the one from the other).
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

from cgpredict.compute import OpLatencies
from cgpredict.errors import CGPredictError
from cgpredict.l2_slices import SliceMap
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


@dataclass(frozen=True)
class EnergyTable:
    """Energy per instruction class and per memory transaction, in nanojoules (SPEC §6)."""

    fp32_op_nj: float | None = None
    int32_op_nj: float | None = None
    sfu_op_nj: float | None = None
    fp64_op_nj: float | None = None
    dram_transaction_nj: float | None = None
    l2_transaction_nj: float | None = None
    smem_transaction_nj: float | None = None
    static_power_w: float | None = None  # board power not attributed to operations, W


@dataclass(frozen=True)
class Provenance:
    """Where the figures of a device file come from; `notes` maps a field name to a remark."""

    source: str
    date: str = ""
    gpu_name: str = ""
    notes: tuple[tuple[str, str], ...] = ()

    def note(self, key: str) -> str:
        """The note attached to field `key` ('' when there is none)."""
        return dict(self.notes).get(key, "")


@dataclass(frozen=True)
class GPUDevice:
    """One GPU, as read from its device file. Field units are in the names; see SCHEMA.md."""

    name: str
    source_path: str
    # [sm]
    sm_count: int
    clock_mhz: float
    warp_size: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    register_alloc_unit: int
    shared_mem_per_sm_bytes: int
    shared_mem_per_block_max_bytes: int
    sfu_per_sm: int
    simd_width: int
    schedulers_per_sm: int
    # [memory]
    l2_bytes: int
    l2_line_bytes: int
    l2_ways: int
    l2_sector_bytes: int
    l1_caches_global_loads: bool
    l1_bytes: int
    l1_line_bytes: int
    smem_banks: int
    smem_bank_bytes: int
    dram_bandwidth_gbps: float
    # [timing]
    l1_latency_cycles: float
    l2_latency_cycles: float
    dram_latency_cycles: float
    shared_latency_cycles: float
    dd_l2_cycles: float
    dd_dram_cycles: float
    inst_cycles_per_warp_inst: float
    smem_load_cycles: float
    inst_latency_cycles: float
    fp_latency_cycles: float
    # optional keys
    description: str = ""
    compute_capability: str = ""
    max_registers_per_thread: int = 255
    smem_issue_cycles: float = 1.0
    # cycles an SM's memory path is busy per L2 transaction of a warp *store* (stores are
    # not waited for: they cost issue and path occupancy, not a latency; a partly written
    # sector costs twice, read-modify-write); None: dd_l2_cycles
    dd_store_cycles: float | None = None
    # the launch stream (models/launches.py): one launch followed by the host's
    # synchronisation (a round trip, the kernel's work excluded), and the least interval
    # between the starts of launches queued back to back, microseconds
    launch_sync_us: float = 0.0
    launch_gap_us: float = 0.0
    first_launch_us: float = 0.0  # extra cost of a program's first launch (its module's loading)
    # L2 bytes whose data a launch still finds from earlier launches; None: l2_bytes (an L2 of
    # one partition keeps whatever it holds). Data read by SMs on both sides of a two-partition
    # L2 (A100, H100) is cached in each partition, so there it is one partition's bytes.
    l2_persist_bytes: int | None = None
    l1_ways: int = 4
    # cycles the L2 takes per atomic operation on one address: updates of one address are
    # applied one after another (models/bounds.py, the atomic bound, eq. (A1)); the float
    # add's figure where it differs (None: the same)
    atomic_address_cycles: float = 1.0
    atomic_address_float_cycles: float | None = None
    # cycles one L2 slice takes per atomic request (a warp instruction's lanes on one address),
    # the slices and their address interleave (l2_slices.py, eq. (A2)); None: no slice bound
    atomic_slice_cycles: float | None = None
    l2_slices: int | None = None
    l2_slice_interleave_bytes: int | None = None
    barrier_cycles: float | None = None
    smem_conflict_replay_cycles: float | None = None
    # dependent-issue latency of an FP64 instruction (DFMA) and of an SFU one (MUFU), cycles
    # (compute.OpLatencies, a thread's critical path); None: fp_latency_cycles
    fp64_latency_cycles: float | None = None
    sfu_latency_cycles: float | None = None
    registers_per_block_max: int | None = None
    shared_mem_alloc_unit_bytes: int = 256
    shared_mem_reserved_per_block_bytes: int = 0
    dram_bytes: int | None = None
    energy: EnergyTable | None = None
    # operations per clock per SM of each instruction class (pipes.py, eq. (12p)); None:
    # dispatch only
    pipes: PipeRates | None = None
    provenance: Provenance | None = None

    # ---- derived properties ------------------------------------------------------------
    @property
    def threads_per_sm(self) -> int:
        """Pseudo-threads processed per batch (SPEC §2.2): the resident-thread limit of an SM."""
        return self.max_threads_per_sm

    @property
    def op_latencies(self) -> OpLatencies:
        """The dependent-issue latencies of a thread's instructions by kind (compute.py)."""
        fp = self.fp_latency_cycles
        return OpLatencies(
            fp32=fp, integer=self.inst_latency_cycles,
            fp64=fp if self.fp64_latency_cycles is None else self.fp64_latency_cycles,
            sfu=fp if self.sfu_latency_cycles is None else self.sfu_latency_cycles,
        )  # fmt: skip

    @property
    def freq_hz(self) -> float:
        return self.clock_mhz * 1e6

    @property
    def l2_sets(self) -> int:
        """K of the cache analysis: l2_bytes / (l2_line_bytes * l2_ways)."""
        return self.l2_bytes // (self.l2_line_bytes * self.l2_ways)

    @property
    def l2_lines(self) -> int:
        return self.l2_bytes // self.l2_line_bytes

    @property
    def dram_bandwidth_bytes_per_s(self) -> float:
        return self.dram_bandwidth_gbps * 1e9

    @property
    def dram_bytes_per_cycle(self) -> float:
        """Whole-GPU DRAM bandwidth in bytes per core clock cycle."""
        return self.dram_bandwidth_bytes_per_s / self.freq_hz

    @property
    def store_cycles(self) -> float:
        """Cycles an SM's store path is busy per store sector: dd_store_cycles, else the
        L2's departure delay (a file that does not tell stores from loads)."""
        return self.dd_l2_cycles if self.dd_store_cycles is None else self.dd_store_cycles

    @property
    def atomic_float_cycles(self) -> float:
        """Cycles per floating-point atomic add on one address (eq. (A1))."""
        f = self.atomic_address_float_cycles
        return self.atomic_address_cycles if f is None else f

    @property
    def slice_map(self) -> SliceMap | None:
        """How addresses map to L2 slices for the per-slice atomic bound; None unless the
        file gives the slices, their interleave and the cost per request."""
        if not (self.l2_slices and self.l2_slice_interleave_bytes and self.atomic_slice_cycles):
            return None
        return SliceMap(slices=self.l2_slices, interleave_bytes=self.l2_slice_interleave_bytes)

    @property
    def persist_bytes(self) -> int:
        """L2 bytes that keep their data from one launch to the next (l2_persist_bytes)."""
        return self.l2_bytes if self.l2_persist_bytes is None else self.l2_persist_bytes

    @property
    def registers_per_block(self) -> int:
        return self.registers_per_block_max or self.registers_per_sm

    @property
    def dram_miss_latency_cycles(self) -> float:
        """Latency of a load served by DRAM: L2 lookup plus DRAM (SPEC eq. (2) adds the two)."""
        return self.l2_latency_cycles + self.dram_latency_cycles

    def cycles_to_ms(self, cycles: float) -> float:
        return cycles / self.freq_hz * 1e3


# Sanity bounds: far above any real GPU, low enough that no later arithmetic overflows.
MAX_BYTES = 1 << 50  # a `*_bytes` key: 1 PiB
MAX_COUNT = 1 << 24  # any other integer (counts, units, ways)
MAX_FLOAT = 1e12  # any number (clocks, latencies, bandwidths, energies)

# ---- schema: table -> key -> (kind, required) -------------------------------------------
# kind: "int" (positive), "int0" (>= 0), "float" (positive, finite), "bool", "str", "table"
FIELD_SCHEMA: dict[str, dict[str, tuple[str, bool]]] = {
    "": {
        "schema_version": ("int", True),
        "description": ("str", False),
    },
    "sm": {
        "sm_count": ("int", True),
        "clock_mhz": ("float", True),
        "warp_size": ("int", True),
        "max_threads_per_sm": ("int", True),
        "max_warps_per_sm": ("int", True),
        "max_blocks_per_sm": ("int", True),
        "max_threads_per_block": ("int", True),
        "registers_per_sm": ("int", True),
        "register_alloc_unit": ("int", True),
        "max_registers_per_thread": ("int", False),
        "registers_per_block_max": ("int", False),
        "shared_mem_per_sm_bytes": ("int", True),
        "shared_mem_per_block_max_bytes": ("int", True),
        "shared_mem_alloc_unit_bytes": ("int", False),
        "shared_mem_reserved_per_block_bytes": ("int0", False),
        "sfu_per_sm": ("int", True),
        "simd_width": ("int", True),
        "schedulers_per_sm": ("int", True),
        "compute_capability": ("str", False),
    },
    "memory": {
        "l2_bytes": ("int", True),
        "l2_line_bytes": ("int", True),
        "l2_ways": ("int", True),
        "l2_sector_bytes": ("int", True),
        "l1_caches_global_loads": ("bool", True),
        "l1_bytes": ("int", True),
        "l1_line_bytes": ("int", True),
        "l1_ways": ("int", False),
        "smem_banks": ("int", True),
        "smem_bank_bytes": ("int", True),
        "dram_bandwidth_gbps": ("float", True),
        "dram_bytes": ("int", False),
        "l2_persist_bytes": ("int", False),
        "l2_slices": ("int", False),
        "l2_slice_interleave_bytes": ("int", False),
    },
    "timing": {
        "l1_latency_cycles": ("float", True),
        "l2_latency_cycles": ("float", True),
        "dram_latency_cycles": ("float", True),
        "shared_latency_cycles": ("float", True),
        "dd_l2_cycles": ("float", True),
        "dd_dram_cycles": ("float", True),
        "inst_cycles_per_warp_inst": ("float", True),
        "smem_load_cycles": ("float", True),
        "smem_issue_cycles": ("float", False),
        "dd_store_cycles": ("float", False),
        "launch_sync_us": ("float", False),
        "launch_gap_us": ("float", False),
        "launch_overhead_us": ("float", False),  # the old name of launch_sync_us
        "first_launch_us": ("float", False),
        "barrier_cycles": ("float", False),
        "atomic_address_cycles": ("float", False),
        "atomic_address_float_cycles": ("float", False),
        "atomic_slice_cycles": ("float", False),
        "smem_conflict_replay_cycles": ("float", False),
        "inst_latency_cycles": ("float", True),
        "fp_latency_cycles": ("float", True),
        "fp64_latency_cycles": ("float", False),
        "sfu_latency_cycles": ("float", False),
    },
    "energy": {f.name: ("float", False) for f in fields(EnergyTable)},
    "pipes": {f.name: ("float", False) for f in fields(PipeRates)},
    "provenance": {
        "source": ("str", True),
        "date": ("str", False),
        "gpu_name": ("str", False),
        "notes": ("table", False),
    },
}
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
    if d.l2_line_bytes // d.l2_sector_bytes > 64:
        fail("l2_sector_bytes", "at most 64 sectors a line (l2_line_bytes / l2_sector_bytes)")
    if d.shared_mem_reserved_per_block_bytes > d.shared_mem_per_sm_bytes:
        fail("shared_mem_reserved_per_block_bytes", "exceeds shared_mem_per_sm_bytes")
    if d.register_alloc_unit > d.registers_per_sm:
        fail("register_alloc_unit", "exceeds registers_per_sm")
    if d.l2_bytes % (d.l2_line_bytes * d.l2_ways):
        fail("l2_bytes", "must be a multiple of l2_line_bytes * l2_ways")
    if d.l2_line_bytes % d.l2_sector_bytes:
        fail("l2_sector_bytes", "must divide l2_line_bytes")
    if d.registers_per_sm % d.schedulers_per_sm:
        fail("schedulers_per_sm", "must divide registers_per_sm")


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
