"""The trace file: versioned binary, written once by the tracer and read by every later stage.

Layout::

    b"CGPTRACE" | u32 version | u32 header length | u32 CRC-32 of the header | u32 0
    | header (UTF-8 JSON, padded to 64 bytes) | sections, each 64-byte aligned, at the
    offsets the header lists, each with the CRC-32 of its bytes

Every section's checksum is verified on read (a flipped byte anywhere is a corrupt trace, never
another answer), and every number read is range-checked before it sizes an array.

Sections: ``events`` (u64, see ``runtime/cgp_runtime.h``), ``launches`` (LAUNCH_DTYPE),
``bb_counts`` (launches x blocks, u64), ``loop_iters`` and ``loop_entries`` (launches x loops).
The events are memory-mapped, so large traces are not read into memory.

Over 500 lines: the format is declared once, here, and its writer and its reader keep every
check of a bad file beside the layout it checks (the header tables, the section shapes, the
events: most of the length); apart, a change of the layout could miss its check.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mmap
import os
import stat
import struct
import tempfile
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .. import warmup
from ..errors import TraceFormatError
from ..instrument.memtrace import BlockInfo, CallSite, LoopInfo, MemInstr

MAGIC = b"CGPTRACE"
VERSION = 2  # 2: per-section CRC-32 and a 24-byte prefix
ALIGN = 64
PREFIX = struct.Struct("<8sIIII")  # magic, version, header length, header CRC-32, reserved
MAX_DIM = 1 << 40  # no section of a real trace comes near (8 TiB of events)

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


def write_trace(
    path: Path,
    header: TraceHeader,
    events_file: Path,
    launches: np.ndarray,
    bb_counts: np.ndarray,
    loop_iters: np.ndarray,
    loop_entries: np.ndarray,
) -> int:
    """Write a trace; the events are copied from the runtime's raw event file. Returns the
    events' CRC-32 (for ``read_trace(..., events_crc=)``)."""
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
    events_crc = _file_crc(events_file, n_events * 8)
    for _ in range(3):
        meta["sections"] = sections
        blob = json.dumps(meta, separators=(",", ":")).encode()
        off = PREFIX.size + len(blob) + _pad(PREFIX.size + len(blob))
        new = {"events": {"offset": off, "dtype": "<u8", "shape": [n_events],
                          "crc32": events_crc}}
        off += n_events * 8 + _pad(n_events * 8)
        for name, arr in arrays:
            new[name] = {
                "offset": off,
                "dtype": arr.dtype.descr if arr.dtype.names else arr.dtype.str,
                "shape": list(arr.shape),
                "crc32": zlib.crc32(np.ascontiguousarray(arr).tobytes()),
            }
            off += arr.nbytes + _pad(arr.nbytes)
        if new == sections:
            break
        sections = new
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp = Path(name)  # a fresh name: a user's own ``X.part`` is never touched
    try:
        _write_file(tmp, blob, events_file, n_events, arrays)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return events_crc


def _file_crc(path: Path, nbytes: int) -> int:
    """CRC-32 of the first ``nbytes`` of ``path``, over a read-only mapping of the file: the
    page cache read in place, with no copy (3MM's 152 MB: 2,300 page faults and 0.02 s of
    system time, against 8,200 and 0.06 s read in 16 MiB chunks, the fallback)."""
    with open(path, "rb") as f:
        if nbytes > 0:
            try:
                with mmap.mmap(f.fileno(), nbytes, access=mmap.ACCESS_READ) as m:
                    return zlib.crc32(m)
            except (OSError, ValueError):  # a file system that cannot map it: read it
                pass
        crc, left = 0, nbytes
        while left > 0 and (chunk := f.read(min(left, 1 << 24))):
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return crc


def _write_file(tmp: Path, blob: bytes, events_file: Path, n_events: int, arrays) -> None:
    with open(tmp, "wb") as f:
        f.write(
            PREFIX.pack(MAGIC, VERSION, len(blob), zlib.crc32(blob), 0)
            + blob
            + b"\0" * _pad(PREFIX.size + len(blob))
        )
        with open(events_file, "rb") as ev:
            _copy(ev, f, n_events * 8)
        f.write(b"\0" * _pad(n_events * 8))
        for _, arr in arrays:
            f.write(np.ascontiguousarray(arr).tobytes())
            f.write(b"\0" * _pad(arr.nbytes))


def _copy(src, dst, nbytes: int) -> None:
    """``nbytes`` of ``src`` appended to ``dst`` inside the kernel (copy_file_range: no trip
    through user space for a trace of hundreds of megabytes), else through a buffer."""
    dst.flush()
    left = nbytes
    if hasattr(os, "copy_file_range"):
        try:
            while left > 0:
                done = os.copy_file_range(src.fileno(), dst.fileno(), min(left, 1 << 30))
                if done <= 0:
                    break
                left -= done
        except OSError:  # another filesystem or kernel: copy what is left by hand
            pass
    src.seek(nbytes - left)
    while left > 0 and (chunk := src.read(min(left, 1 << 24))):
        dst.write(chunk)
        left -= len(chunk)


def _dtype(spec) -> np.dtype:
    if isinstance(spec, str):
        return np.dtype(spec)
    return np.dtype([tuple(x) for x in spec])


def read_trace(path: str | Path, events_crc: int | None = None) -> Trace:
    """Read a trace file; any problem with it raises TraceFormatError with one line.
    ``events_crc``: the events' checksum as ``write_trace`` computed it from the bytes it
    wrote, for a trace read back at once (the tracer): a header that records the same one is
    not checksummed again over the events (hundreds of megabytes); every other check stays."""
    path = Path(path)
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise TraceFormatError(f"{path}: not a cgpredict trace (not a regular file)")
        with open(path, "rb") as f:
            meta = _read_header(f, path, st.st_size)
            header = _from_json(meta)
            layout = _layout(meta.get("sections"), st.st_size)
            if isinstance(layout, str):
                raise TraceFormatError(f"{path}: {layout}")
            arrays = {name: _read_section(f, path, name, *layout[name], known=events_crc)
                      for name in SECTIONS}
    except TraceFormatError:
        raise
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such trace file") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise TraceFormatError(f"{path}: corrupt trace ({type(exc).__name__}: {exc})") from None
    trace = Trace(path, header, *(arrays[name] for name in SECTIONS))
    problem = _check_header(header) or _check_sections(trace) or _check_events(trace)
    if problem:
        raise TraceFormatError(f"{path}: corrupt trace ({problem})")
    return trace


def _read_header(f, path: Path, size: int) -> dict:
    """The header JSON after the prefix, its version and checksum verified."""
    head = f.read(PREFIX.size)
    if head[:8] != MAGIC:
        raise TraceFormatError(f"{path}: not a cgpredict trace (bad magic)")
    if len(head) >= 12:
        version = struct.unpack("<I", head[8:12])[0]
        if version != VERSION:
            old = " (an old trace format)" if version < VERSION else ""
            raise TraceFormatError(
                f"{path}: trace format version {version}{old}, this cgpredict reads version "
                f"{VERSION}; trace the program again"
            )
    if len(head) < PREFIX.size:
        raise TraceFormatError(f"{path}: truncated trace (prefix cut short)")
    _, _, hlen, crc, _ = PREFIX.unpack(head)
    if hlen > size - PREFIX.size:
        raise TraceFormatError(f"{path}: truncated trace (header cut short)")
    blob = f.read(hlen)
    if zlib.crc32(blob) != crc:
        raise TraceFormatError(f"{path}: corrupt trace (header checksum mismatch)")
    meta = json.loads(blob)
    if not isinstance(meta, dict):
        raise TraceFormatError(f"{path}: corrupt trace (the header is not a JSON object)")
    return meta


SECTIONS = ("events", "launches", "bb_counts", "loop_iters", "loop_entries")
SECTION_DTYPES = {
    "events": np.dtype("<u8"),
    "launches": LAUNCH_DTYPE,
    "bb_counts": np.dtype("<u8"),
    "loop_iters": np.dtype("<u8"),
    "loop_entries": np.dtype("<u8"),
}


def _is_int(x, lo: int = 0, hi: int = MAX_DIM) -> bool:
    """``x`` is a JSON integer (not a bool) within [lo, hi]."""
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


def _layout(sections, size: int) -> dict | str:
    """Each section's (offset, shape, dtype, crc) checked against the file size and its
    expected layout before anything is allocated, or the problem (one line)."""
    if not isinstance(sections, dict):
        return "corrupt trace (no section table)"
    missing = [name for name in SECTIONS if name not in sections]
    if missing:
        return f"corrupt trace (missing section {', '.join(missing)})"
    out = {}
    for name in SECTIONS:
        sec = sections[name]
        if not isinstance(sec, dict):
            return f"corrupt trace (section {name} is not described)"
        dt = SECTION_DTYPES[name]
        shape = sec.get("shape")
        ndim = 1 if name in ("events", "launches") else 2
        if not (isinstance(shape, list) and len(shape) == ndim and all(map(_is_int, shape))):
            return f"corrupt trace (section {name} has shape {shape!r})"
        if _dtype(sec.get("dtype")) != dt:
            return f"corrupt trace (section {name} has the wrong layout)"
        offset, crc = sec.get("offset"), sec.get("crc32")
        if not _is_int(offset, 0, size) or not _is_int(crc, 0, 0xFFFFFFFF):
            return f"corrupt trace (section {name} has offset {offset!r}, checksum {crc!r})"
        nbytes = dt.itemsize
        for d in shape:
            nbytes *= d
        if offset + nbytes > size:
            return f"truncated trace (section {name} cut short)"
        out[name] = (offset, tuple(shape), dt, crc)
    return out


def _read_section(f, path: Path, name: str, offset: int, shape, dt, crc: int,
                  known: int | None = None) -> np.ndarray:
    """One section (the events memory-mapped), its checksum verified (the events' taken as
    ``known`` when the writer just computed it: see read_trace)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if nbytes == 0:
        arr = np.zeros(shape, dt)
        got = 0
    elif name == "events":
        arr = np.memmap(path, dt, "r", offset, shape)
        got = 0
        flat = arr.reshape(-1).view(np.uint8)
        for lo in range(0, 0 if known == crc else nbytes, 1 << 26):
            got = zlib.crc32(flat[lo : lo + (1 << 26)], got)
        got = crc if known == crc else got
    else:
        f.seek(offset)
        raw = f.read(nbytes)
        got = zlib.crc32(raw)
        arr = np.frombuffer(raw, dt).reshape(shape)
    if got != crc:
        raise TraceFormatError(f"{path}: corrupt trace (section {name}: checksum mismatch)")
    return arr


_CHUNK = 1 << 22  # events checked per step (32 MiB), so a huge trace is never copied whole


def _check_header(h: TraceHeader) -> str | None:
    """The first inconsistency of the header tables (ids are positions), or None."""
    for what, table in (("memory instruction", h.mem), ("loop", h.loops), ("block", h.blocks)):
        for k, item in enumerate(table):
            if item.id != k:
                return f"{what} {k} has id {item.id}"
    nb, nl = len(h.blocks), len(h.loops)
    for m in h.mem:
        if not 0 <= m.block < nb:
            return f"memory instruction {m.id} names block {m.block}, the trace has {nb}"
    for lp in h.loops:
        if lp.parent >= nl:
            return f"loop {lp.id} names parent loop {lp.parent}, the trace has {nl}"
        bad = [b for b in lp.blocks if not 0 <= b < nb]
        if bad:
            return f"loop {lp.id} names block {bad[0]}, the trace has {nb}"
    if len(h.mem) > TAG_MARKERS:
        return f"{len(h.mem)} memory instructions, at most {TAG_MARKERS}"
    return None


def _check_sections(tr: Trace) -> str | None:
    """The section shapes against the header tables."""
    h = tr.header
    if tr.events.ndim != 1 or tr.events.dtype != np.dtype("<u8"):
        return "section events is not a vector of u64"
    if tr.launches.ndim != 1 or tr.launches.dtype != LAUNCH_DTYPE:
        return "section launches has the wrong layout"
    n = len(tr.launches)
    for name, width in (
        ("bb_counts", len(h.blocks)),
        ("loop_iters", len(h.loops)),
        ("loop_entries", len(h.loops)),
    ):
        arr = getattr(tr, name)
        if arr.ndim != 2 or arr.shape[0] != n or (n and arr.shape[1] != width):
            return (
                f"section {name} has shape {tuple(arr.shape)}, want ({n}, {width}) for {n} launches"
            )
    for name in ("bb_counts", "loop_iters", "loop_entries"):
        arr = getattr(tr, name)
        if arr.size and int(arr.max()) >= MAX_COUNT:
            return f"section {name} holds the count {int(arr.max())}, more than 2^48"
    if n:
        regions = np.array(sorted({r.index for r in h.regions}), np.int64)
        bad = ~np.isin(tr.launches["region"].astype(np.int64), regions)
        if bad.any():
            k = int(np.argmax(bad))
            return f"launch {k} names region {int(tr.launches['region'][k])}, not in the header"
        first = tr.launches["first_event"]
        count = tr.launches["n_events"]
        total = np.uint64(len(tr.events))
        recorded = tr.launches["recorded"] != 0
        past = (first > total) | (count > total - np.minimum(first, total))
        bad = (recorded & (count == 0)) | past
        bad &= recorded | (count > 0)
        if bad.any():
            k = int(np.argmax(bad))
            return (
                f"launch {k}: its events [{int(first[k])}, +{int(count[k])}) do not lie "
                f"within the {len(tr.events)} events"
            )
        starts = first[recorded].astype(np.int64)
        if len(starts) and ((np.asarray(tr.events[starts]) >> np.uint64(48)) != TAG_BEGIN).any():
            return "a recorded launch does not start at a BEGIN event"
    return None


MAX_COUNT = 1 << 48  # block and loop counts: more would take a program days to execute


def _check_events(tr: Trace) -> str | None:
    """Every event's tag and id against the header: memory instructions and loops exist, and
    within each recorded launch a loop's iteration index lies below the iterations that
    launch counted."""
    n_mem, n_loops = len(tr.header.mem), len(tr.header.loops)
    unlimited = np.full(n_loops, np.iinfo(np.int64).max, np.int64)
    spans = [(0, len(tr.events), unlimited)]  # tags and ids everywhere (an unfinished launch
    for k in np.flatnonzero(tr.launches["recorded"] != 0):  # too), iterations per launch
        first, count = int(tr.launches["first_event"][k]), int(tr.launches["n_events"][k])
        spans.append((first, first + count, np.asarray(tr.loop_iters[k], np.int64)))
    for start, stop, limits in spans:
        problem = _check_span(tr.events, start, stop, n_mem, n_loops, limits)
        if problem:
            return problem
    return None


def _check_span(ev, start: int, stop: int, n_mem: int, n_loops: int, limits) -> str | None:
    """The first bad event of ``ev[start:stop]`` (``_first_bad_event``) as a line, or None."""
    for lo in range(start, stop, _CHUNK):
        chunk = np.asarray(ev[lo : min(lo + _CHUNK, stop)])
        k, what, value = _event_checker()(chunk.view(np.uint64), n_mem, n_loops, limits)
        if k >= 0:
            if what == 0:
                return f"event {lo + k} names memory instruction {value}, the trace has {n_mem}"
            if what == 1:
                return f"event {lo + k} has the unknown tag {value:#x}"
            if what == 3:
                return f"event {lo + k}: iteration {value} is past its loop's iteration count"
            return f"event {lo + k} names loop {value}, the trace has {n_loops}"
    return None


@functools.cache
def _event_checker():
    """``_first_bad_event`` compiled by numba (cached), made on the first trace checked: the
    tracer imports no numba, whose import goes on beside the compiler (``warmup``)."""
    warmup.join()
    from numba import njit

    return njit(cache=True, nogil=True)(_first_bad_event)


def _first_bad_event(ev, n_mem, n_loops, limits):  # pragma: no cover - numba
    """(index, kind, value) of the first event with an unknown memory instruction (kind 0),
    an unknown marker tag (1), an unknown loop (2) or an iteration index past the loop's
    largest count in a launch (3); index -1 when every event is valid.
    One pass, no temporaries: the trace may hold hundreds of millions of events."""
    for t in range(ev.shape[0]):
        e = ev[t]
        tag = np.int64(e >> np.uint64(48))
        if tag < TAG_MARKERS:
            if tag >= n_mem:
                return t, 0, tag
        elif tag < TAG_EXIT:
            return t, 1, tag
        else:
            loop = np.int64((e >> np.uint64(32)) & np.uint64(0xFFFF))
            if (tag == TAG_LOOP or tag == TAG_EXIT) and loop >= n_loops:
                return t, 2, loop
            if tag == TAG_LOOP:
                it = np.int64(e & np.uint64(0xFFFFFFFF))
                if it >= limits[loop]:
                    return t, 3, it
    return np.int64(-1), 0, np.int64(0)


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
