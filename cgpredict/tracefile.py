"""The trace file: versioned binary, written once by the tracer and read by every later stage.

Layout::

    b"CGPTRACE" | u32 version | u32 header length | header (UTF-8 JSON, padded to 64 bytes)
    | sections, each 64-byte aligned, at the offsets the header lists

Sections: ``events`` (u64, see ``runtime/cgp_runtime.h``), ``launches`` (LAUNCH_DTYPE),
``bb_counts`` (launches x blocks, u64), ``loop_iters`` and ``loop_entries`` (launches x loops).
The events are memory-mapped, so large traces are not read into memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .errors import TraceFormatError
from .instrument.memtrace import BlockInfo, CallSite, LoopInfo, MemInstr

MAGIC = b"CGPTRACE"
VERSION = 1
ALIGN = 64

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
    )


def _pad(n: int) -> int:
    return (-n) % ALIGN


def write_trace(
    path: Path,
    header: TraceHeader,
    events_file: Path,
    launches: np.ndarray,
    bb_counts: np.ndarray,
    loop_iters: np.ndarray,
    loop_entries: np.ndarray,
) -> None:
    """Write a trace; the events are copied from the runtime's raw event file."""
    n_events = events_file.stat().st_size // 8
    arrays = [
        ("launches", launches),
        ("bb_counts", bb_counts),
        ("loop_iters", loop_iters),
        ("loop_entries", loop_entries),
    ]
    meta = _to_json(header)
    # Section offsets depend on the header length; iterate until stable.
    sections: dict[str, dict] = {}
    for _ in range(3):
        meta["sections"] = sections
        blob = json.dumps(meta, separators=(",", ":")).encode()
        off = 16 + len(blob) + _pad(16 + len(blob))
        new = {"events": {"offset": off, "dtype": "<u8", "shape": [n_events]}}
        off += n_events * 8 + _pad(n_events * 8)
        for name, arr in arrays:
            new[name] = {
                "offset": off,
                "dtype": arr.dtype.descr if arr.dtype.names else arr.dtype.str,
                "shape": list(arr.shape),
            }
            off += arr.nbytes + _pad(arr.nbytes)
        if new == sections:
            break
        sections = new
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as f:
        f.write(
            MAGIC + struct.pack("<II", VERSION, len(blob)) + blob + b"\0" * _pad(16 + len(blob))
        )
        with open(events_file, "rb") as ev:
            while chunk := ev.read(1 << 24):
                f.write(chunk)
        f.write(b"\0" * _pad(n_events * 8))
        for _, arr in arrays:
            f.write(np.ascontiguousarray(arr).tobytes())
            f.write(b"\0" * _pad(arr.nbytes))
    os.replace(tmp, path)


def _dtype(spec) -> np.dtype:
    if isinstance(spec, str):
        return np.dtype(spec)
    return np.dtype([tuple(x) for x in spec])


def read_trace(path: str | Path) -> Trace:
    """Read a trace file; any problem with it raises TraceFormatError with one line."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(16)
            if len(head) < 16 or head[:8] != MAGIC:
                raise TraceFormatError(f"{path}: not a cgpredict trace (bad magic)")
            version, hlen = struct.unpack("<II", head[8:])
            if version != VERSION:
                raise TraceFormatError(
                    f"{path}: trace format version {version}, this cgpredict reads version "
                    f"{VERSION}; trace the program again"
                )
            blob = f.read(hlen)
        if len(blob) < hlen:
            raise TraceFormatError(f"{path}: truncated trace (header cut short)")
        meta = json.loads(blob)
        header = _from_json(meta)
        arrays = {}
        for name, sec in meta["sections"].items():
            dt = _dtype(sec["dtype"])
            shape = tuple(sec["shape"])
            nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
            if sec["offset"] + nbytes > size:
                raise TraceFormatError(f"{path}: truncated trace (section {name} cut short)")
            if nbytes == 0:
                arrays[name] = np.zeros(shape, dt)
            elif name == "events":
                arrays[name] = np.memmap(path, dt, "r", sec["offset"], shape)
            else:
                with open(path, "rb") as f:
                    f.seek(sec["offset"])
                    arrays[name] = np.frombuffer(f.read(nbytes), dt).reshape(shape)
    except TraceFormatError:
        raise
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such trace file") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TraceFormatError(f"{path}: corrupt trace ({type(exc).__name__}: {exc})") from None
    return Trace(
        path,
        header,
        arrays["events"],
        arrays["launches"],
        arrays["bb_counts"],
        arrays["loop_iters"],
        arrays["loop_entries"],
    )


def read_meta(meta_file: Path, nbb: int, nloops: int, nglobals: int = 0):
    """Parse the runtime's meta file: (status, n_events, launches, bb, iters, entries,
    global addresses)."""
    raw = meta_file.read_bytes()
    hdr = np.frombuffer(raw[: META_HEADER_DTYPE.itemsize], META_HEADER_DTYPE)[0]
    if int(hdr["magic"]) != META_MAGIC:
        raise TraceFormatError("the traced program wrote no valid meta data")
    row = np.dtype([("launch", LAUNCH_DTYPE), ("counts", "<u8", (nbb + 2 * nloops,))])
    body = raw[META_HEADER_DTYPE.itemsize :]
    n = min(int(hdr["n_launches"]), len(body) // row.itemsize)
    recs = np.frombuffer(body[: n * row.itemsize], row)
    counts = recs["counts"].reshape(n, nbb + 2 * nloops)
    tail = body[n * row.itemsize :]
    addrs = np.frombuffer(tail[: 8 * nglobals], "<u8") if len(tail) >= 8 * nglobals else []
    return (
        int(hdr["status"]),
        int(hdr["n_events"]),
        recs["launch"].copy(),
        counts[:, :nbb].copy(),
        counts[:, nbb : nbb + nloops].copy(),
        counts[:, nbb + nloops :].copy(),
        [int(a) for a in addrs],
    )
