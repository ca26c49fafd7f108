"""FPGA device files (`cgpredict/fpga/devices/*.toml`): parsing and lookup (SPEC §5).

A device file gives the clock, the resource budget (DSP, BRAM36, LUT, FF), the memory system
(AXI/DRAM bandwidth, minimum transfer, the DDR controller's published efficiencies that
``transfer.py`` turns into per-burst and turnaround costs) and one operator table entry per
class of OP_CLASSES
(latency, initiation interval and resource cost of one instance). The schema is documented in
`cgpredict/fpga/devices/SCHEMA.md`; errors name the file and the key.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import CGPredictError
from . import dddg

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCHEMA_VERSION = 1
ENV_VAR = "CGPREDICT_FPGA_DEVICE_PATH"
OP_CLASSES = (
    "fadd",
    "fmul",
    "fdiv",
    "fsqrt",
    "fcmp",
    "fcvt",
    "dadd",
    "dmul",
    "ddiv",
    "dsqrt",
    "iadd",
    "imul",
    "idiv",
    "icmp",
    "logic",
    "select",
    "load",
    "store",
    "call",
)
RESOURCES = ("dsp", "bram36", "lut", "ff")


class FPGADeviceError(CGPredictError):
    """An FPGA device file or name that cannot be used (one line naming file and key)."""

    exit_code = 2


@dataclass(frozen=True)
class Resources:
    dsp: float = 0
    bram36: float = 0
    lut: float = 0
    ff: float = 0

    def __add__(self, o: Resources) -> Resources:
        return Resources(self.dsp + o.dsp, self.bram36 + o.bram36, self.lut + o.lut, self.ff + o.ff)

    def fits(self, budget: Resources) -> bool:
        return all(getattr(self, k) <= getattr(budget, k) for k in RESOURCES)

    def share(self, budget: Resources) -> float:
        return max(getattr(self, k) / max(getattr(budget, k), 1) for k in RESOURCES)


@dataclass(frozen=True)
class OperatorCost:
    latency_cycles: int
    dsp: int
    lut: int
    ff: int


@dataclass(frozen=True)
class FPGADevice:
    name: str
    source_path: str
    part: str
    clock_mhz: float
    dram_bandwidth_gbps: float
    axi_port_bytes: int
    axi_ports: int
    dram_min_transfer_bytes: int
    dsp: int
    bram36: int
    lut: int
    ff: int
    bram36_bytes: int
    bram_ports: int
    lutram_max_bytes: int
    utilisation: float
    loop_lut: int
    loop_ff: int
    axi_port_lut: int
    axi_port_ff: int
    axi_port_bram36: int
    bank_mux_lut: int
    dram_efficiency_read: float
    dram_efficiency_write: float
    dram_efficiency_mixed: float
    dram_efficiency_read_random: float
    dram_efficiency_write_random: float
    dram_efficiency_mixed_random: float
    dram_reference_burst_bytes: int
    dram_reference_gbps: float
    operators: tuple[tuple[str, OperatorCost], ...]
    description: str = ""
    provenance: tuple[tuple[str, str], ...] = ()

    @functools.cached_property
    def op(self) -> dict[str, OperatorCost]:
        return dict(self.operators)

    def budget(self) -> Resources:
        return Resources(self.dsp, self.bram36, self.lut, self.ff)

    def usable(self) -> Resources:
        u = self.utilisation
        return Resources(
            int(self.dsp * u), int(self.bram36 * u), int(self.lut * u), int(self.ff * u)
        )

    def latency(self, o: dddg.Op) -> int:
        if o.klass in dddg.FREE_CLASSES:
            return 0
        return self.op.get(o.klass, self.op["call"]).latency_cycles


_SCHEMA: dict[str, dict[str, str]] = {
    "": {"schema_version": "int", "description": "str"},
    "device": {
        "part": "str",
        "clock_mhz": "float",
        "dram_bandwidth_gbps": "float",
        "axi_port_bytes": "int",
        "axi_ports": "int",
        "dram_min_transfer_bytes": "int",
    },
    "resources": {"dsp": "int", "bram36": "int", "lut": "int", "ff": "int"},
    "memory": {
        "bram36_bytes": "int",
        "bram_ports": "int",
        "lutram_max_bytes": "int",
        "utilisation": "float",
    },
    "overheads": {
        "loop_lut": "int",
        "loop_ff": "int",
        "axi_port_lut": "int",
        "axi_port_ff": "int",
        "axi_port_bram36": "int",
        "bank_mux_lut": "int",
    },
    "dram": {
        "efficiency_read": "float",
        "efficiency_write": "float",
        "efficiency_mixed": "float",
        "efficiency_read_random": "float",
        "efficiency_write_random": "float",
        "efficiency_mixed_random": "float",
        "reference_burst_bytes": "int",
        "reference_gbps": "float",
    },
}
_PREFIX = {"dram": "dram_"}  # tables whose keys carry a prefix in FPGADevice
_OPTIONAL = {"description"}
_OP_KEYS = {f.name: "int0" for f in fields(OperatorCost)}


MAX_VALUE = 1e15  # sanity bound on every number: far above any real FPGA, no overflow later


def _value(where: str, kind: str, v: Any) -> Any:
    if kind == "str":
        if not isinstance(v, str):
            raise FPGADeviceError(f"{where}: expected a string, got {v!r}")
        return v
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or (kind != "float" and not isinstance(v, int))
    ):
        raise FPGADeviceError(
            f"{where}: expected {'a number' if kind == 'float' else 'an integer'}, got {v!r}"
        )
    if v < 0 or (kind != "int0" and v == 0) or not math.isfinite(v):
        raise FPGADeviceError(f"{where}: expected a positive value, got {v!r}")
    if v > MAX_VALUE:
        raise FPGADeviceError(f"{where}: {v!r} is implausibly large (at most {MAX_VALUE:g})")
    return float(v) if kind == "float" else int(v)


def _table(path: str, name: str, data: Any, spec: dict[str, str], optional=()) -> dict:
    if not isinstance(data, dict):
        raise FPGADeviceError(f"{path}: [{name}] must be a table")
    out = {}
    for k, v in data.items():
        if k not in spec:
            raise FPGADeviceError(
                f"{path}: unknown key {k!r} in [{name}]" if name else f"{path}: unknown key {k!r}"
            )
        out[k] = _value(f"{path}: [{name}] {k}" if name else f"{path}: {k}", spec[k], v)
    for k in spec:
        if k not in data and k not in optional:
            raise FPGADeviceError(
                f"{path}: missing required key {k!r}" + (f" in [{name}]" if name else "")
            )
    return out


def _check_dram(path: str, kw: dict[str, Any]) -> None:
    """Efficiencies are shares of the DDR peak (<= 1), and a random pattern cannot beat the
    sequential one (the derived row-miss cost, eq. T2c, would be negative)."""
    for d in ("read", "write", "mixed"):
        seq, rnd = kw[f"dram_efficiency_{d}"], kw[f"dram_efficiency_{d}_random"]
        for k, v in ((f"efficiency_{d}", seq), (f"efficiency_{d}_random", rnd)):
            if v > 1:
                raise FPGADeviceError(f"{path}: [dram] {k}: expected 0 < value <= 1, got {v!r}")
        if rnd > seq:
            raise FPGADeviceError(
                f"{path}: [dram] efficiency_{d}_random ({rnd:g}) exceeds efficiency_{d} ({seq:g})"
            )


def parse_fpga_device(path: str, name: str, doc: dict) -> FPGADevice:
    top = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    for k, v in doc.items():
        if isinstance(v, dict) and k not in _SCHEMA and k not in ("operators", "provenance"):
            raise FPGADeviceError(f"{path}: unknown table [{k}]")
    kw: dict[str, Any] = {"name": name, "source_path": path}
    t = _table(path, "", top, _SCHEMA[""], _OPTIONAL)
    if t["schema_version"] != SCHEMA_VERSION:
        raise FPGADeviceError(
            f"{path}: schema_version: expected {SCHEMA_VERSION}, got {t['schema_version']}"
        )
    kw["description"] = t.get("description", "")
    for sec in ("device", "resources", "memory", "overheads", "dram"):
        if sec not in doc:
            raise FPGADeviceError(f"{path}: missing required table [{sec}]")
        pre = _PREFIX.get(sec, "")
        kw.update({pre + k: v for k, v in _table(path, sec, doc[sec], _SCHEMA[sec]).items()})
    if not 0 < kw["utilisation"] <= 1:
        raise FPGADeviceError(f"{path}: [memory] utilisation: expected 0 < value <= 1")
    _check_dram(path, kw)
    ops = doc.get("operators")
    if not isinstance(ops, dict):
        raise FPGADeviceError(f"{path}: missing required table [operators]")
    costs = []
    for k, v in ops.items():
        if k not in OP_CLASSES:
            raise FPGADeviceError(
                f"{path}: unknown operator class {k!r} in [operators] "
                f"(known: {', '.join(OP_CLASSES)})"
            )
        costs.append((k, OperatorCost(**_table(path, f"operators.{k}", v, _OP_KEYS))))
    missing = [k for k in OP_CLASSES if k not in ops]
    if missing:
        raise FPGADeviceError(f"{path}: [operators] lacks {', '.join(missing)}")
    prov = doc.get("provenance", {})
    notes = prov.get("notes", {}) if isinstance(prov, dict) else {}
    kw["provenance"] = tuple(
        sorted(
            [(k, str(v)) for k, v in prov.items() if k != "notes"]
            + [(f"notes.{k}", str(v)) for k, v in notes.items()]
        )
    )
    return FPGADevice(operators=tuple(costs), **kw)


def bundled_fpga_dir() -> Path:
    return Path(str(resources.files("cgpredict.fpga") / "devices"))


def _dirs() -> list[Path]:
    return [Path(d) for d in os.environ.get(ENV_VAR, "").split(os.pathsep) if d] + [
        bundled_fpga_dir()
    ]


def list_fpga_devices() -> list[str]:
    names: set[str] = set()
    for d in _dirs():
        if d.is_dir():
            names |= {p.stem for p in d.glob("*.toml")}
    return sorted(names)


def load_fpga_device(name_or_path: str | os.PathLike) -> FPGADevice:
    """A bundled / $CGPREDICT_FPGA_DEVICE_PATH device by name, or a .toml file."""
    s = str(name_or_path)
    p = Path(s)
    if not (s.endswith(".toml") or os.sep in s):
        p = next((d / f"{s}.toml" for d in _dirs() if (d / f"{s}.toml").is_file()), None)
        if p is None:
            raise FPGADeviceError(
                f"{s}: no FPGA device file {s}.toml (known: "
                f"{', '.join(list_fpga_devices()) or 'none'})"
            )
    try:
        with open(p, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise FPGADeviceError(f"{p}: cannot read FPGA device file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise FPGADeviceError(f"{p}: not valid TOML: {exc}".replace("\n", " ")) from None
    except UnicodeDecodeError:
        raise FPGADeviceError(f"{p}: not valid TOML (not UTF-8)") from None
    return parse_fpga_device(str(p), p.stem, doc)
