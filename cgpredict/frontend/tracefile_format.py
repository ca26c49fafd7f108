"""The trace file's format, declared once: the prefix, the tags and records that mirror
``runtime/cgp_runtime.h``, the sections and their dtypes, and the typed header and trace that
the writer (``tracefile``) and the checks (``tracefile_checks``) share.

Layout::

    b"CGPTRACE" | u32 version | u32 header length | u32 CRC-32 of the header | u32 0
    | header (UTF-8 JSON, padded to 64 bytes) | sections, each 64-byte aligned, at the
    offsets the header lists, each with the CRC-32 of its bytes

Sections: ``events`` (u64, see ``runtime/cgp_runtime.h``), ``launches`` (LAUNCH_DTYPE),
``bb_counts`` (launches x blocks, u64), ``loop_iters`` and ``loop_entries`` (launches x loops),
``trips`` (TRIP_DTYPE: one per entry of a region loop at depth >= 2 of a recorded launch).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..instrument.memtrace import BlockInfo, CallSite, LoopInfo, MemInstr

MAGIC = b"CGPTRACE"
VERSION = 3  # 2: per-section CRC-32 and a 24-byte prefix; 3: the trips section
ALIGN = 64
PREFIX = struct.Struct("<8sIIII")  # magic, version, header length, header CRC-32, reserved
MAX_DIM = 1 << 40  # no section of a real trace comes near (8 TiB of events)
MAX_COUNT = 1 << 48  # block and loop counts: more would take a program days to execute

# Mirrors of runtime/cgp_runtime.h (checked by tests/test_tracefile.py).
TAG_MARKERS = 0xF000
TAG_LOOP = 0xFFFF
TAG_BEGIN = 0xFFFE
TAG_END = 0xFFFD
TAG_EXIT = 0xFFFC
MARKED_DEPTH = 2
META_MAGIC = 0x4154454D50474343
LAUNCH_DTYPE = np.dtype(
    [
        ("region", "<i4"),
        ("launch", "<u4"),
        ("first_event", "<u8"),
        ("n_events", "<u8"),
        ("recorded", "<u4"),
        ("pad", "<u4"),
    ]
)
META_HEADER_DTYPE = np.dtype(
    [
        ("magic", "<u8"),
        ("nbb", "<u4"),
        ("nloops", "<u4"),
        ("n_events", "<u8"),
        ("status", "<u4"),
        ("n_launches", "<u4"),
    ]
)
HELPER_DEPTH = 100
NO_INDEX = 0xFFFFFFFF
TRIP_DTYPE = np.dtype(
    [("row", "<u4"), ("loop", "<u4"), ("trips", "<u4"), ("index1", "<u4"), ("index2", "<u4")]
)
STATUS_FINISHED, STATUS_EVENT_LIMIT, STATUS_NESTED = 1, 2, 3
ADDRESS_MASK = (1 << 48) - 1


@dataclass(frozen=True)
class RegionInfo:
    """A traced region (kernel): its name, source lines and shared-memory hints."""

    index: int
    name: str
    function: str
    line: int
    end_line: int
    shared: tuple[tuple[str, int, int], ...] = ()
    grid: int = 0  # grid hint of the pragma; 0 = automatic
    bounds: str = "runtime"  # the pragma's loop bounds: "constant" in the port (eq. (12ct))


@dataclass(frozen=True)
class TraceHeader:
    """Everything about a trace except the bulk arrays."""

    source_name: str
    source_sha256: str
    source_text: str
    compiler: str
    flags: tuple[str, ...]
    macros: dict[str, str]
    regions: tuple[RegionInfo, ...]
    mem: tuple[MemInstr, ...]
    loops: tuple[LoopInfo, ...]
    blocks: tuple[BlockInfo, ...]
    calls: tuple[CallSite, ...]
    helpers: tuple[str, ...]
    max_launches: int
    stdout_tail: str = ""
    ir_text: str = ""  # the uninstrumented IR of the module (for static analyses: FPGA DDDG)
    seconds: dict[str, float] = field(default_factory=dict)  # time of each tracing step
    globals: dict[str, int] = field(default_factory=dict)  # array global -> run-time address
    port: str = "restrict"  # the CUDA port traced (port.py); traces before ports were restrict

    def region(self, name_or_index: str | int) -> RegionInfo:
        for r in self.regions:
            if r.name == name_or_index or r.index == name_or_index:
                return r
        raise KeyError(name_or_index)

    def source_line(self, line: int) -> str:
        lines = self.source_text.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""


@dataclass(frozen=True)
class Trace:
    """A trace read back: the header and its arrays (events memory-mapped)."""

    path: Path
    header: TraceHeader
    events: np.ndarray
    launches: np.ndarray
    bb_counts: np.ndarray
    loop_iters: np.ndarray
    loop_entries: np.ndarray
    # one TRIP_DTYPE record per entry of a region loop at depth >= 2 of a recorded launch
    trips: np.ndarray = field(default_factory=lambda: np.zeros(0, TRIP_DTYPE))

    def launch_events(self, k: int) -> np.ndarray:
        """The event records of launch ``k`` (BEGIN..END), empty if it was not recorded."""
        row = self.launches[k]
        start = int(row["first_event"])
        return self.events[start : start + int(row["n_events"])]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _to_json(header: TraceHeader) -> dict:
    return asdict(header)


def _from_json(d: dict) -> TraceHeader:
    def tup(items, cls):
        out = []
        for x in items:
            if cls is BlockInfo:
                x = {**x, "ops": tuple(tuple(o) for o in x["ops"])}
            if cls is LoopInfo:
                x = {**x, "blocks": tuple(x.get("blocks", ()))}
            if cls is RegionInfo:
                x = {**x, "shared": tuple(tuple(s) for s in x["shared"])}
            out.append(cls(**x))
        return tuple(out)

    return TraceHeader(
        source_name=d["source_name"],
        source_sha256=d["source_sha256"],
        source_text=d["source_text"],
        compiler=d["compiler"],
        flags=tuple(d["flags"]),
        macros=dict(d["macros"]),
        regions=tup(d["regions"], RegionInfo),
        mem=tup(d["mem"], MemInstr),
        loops=tup(d["loops"], LoopInfo),
        blocks=tup(d["blocks"], BlockInfo),
        calls=tup(d["calls"], CallSite),
        helpers=tuple(d["helpers"]),
        max_launches=d["max_launches"],
        stdout_tail=d.get("stdout_tail", ""),
        ir_text=d.get("ir_text", ""),
        seconds=dict(d.get("seconds", {})),
        globals=dict(d.get("globals", {})),
        port=d.get("port", "restrict"),
    )


def _pad(n: int) -> int:
    return (-n) % ALIGN


def _dtype(spec) -> np.dtype:
    if isinstance(spec, str):
        return np.dtype(spec)
    return np.dtype([tuple(x) for x in spec])


SECTIONS = ("events", "launches", "bb_counts", "loop_iters", "loop_entries", "trips")
SECTION_DTYPES = {
    "events": np.dtype("<u8"),
    "launches": LAUNCH_DTYPE,
    "bb_counts": np.dtype("<u8"),
    "loop_iters": np.dtype("<u8"),
    "loop_entries": np.dtype("<u8"),
    "trips": TRIP_DTYPE,
}
