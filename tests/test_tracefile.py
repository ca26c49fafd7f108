"""Tests of cgpredict.frontend.tracefile: the record layout shared with runtime/cgp_runtime.h
(compiled and compared field by field), the trace file round trip, and every way a trace file
can be bad."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from cgpredict.instrument import memtrace
from cgpredict.instrument.memtrace import BlockInfo, CallSite, LoopInfo, MemInstr

from cgpredict.errors import TraceFormatError
from cgpredict.frontend import tracefile, tracefile_format
from cgpredict.frontend.tracefile import (
    LAUNCH_DTYPE,
    META_HEADER_DTYPE,
    TRIP_DTYPE,
    RegionInfo,
    TraceHeader,
    read_meta,
    read_trace,
    write_trace,
)

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"

# --------------------------------------------------------------------------- struct layout

LAYOUT_C = r"""
#include <stddef.h>
#include <stdio.h>
#include "cgp_runtime.h"

#define FIELD(T, m) printf("field " #T " " #m " %zu %zu %d\n", offsetof(T, m), \
    sizeof(((T *)0)->m), (int)((__typeof__(((T *)0)->m))-1 < 0))

int main(void) {
    printf("size cgp_launch %zu\n", sizeof(cgp_launch));
    FIELD(cgp_launch, region); FIELD(cgp_launch, launch); FIELD(cgp_launch, first_event);
    FIELD(cgp_launch, n_events); FIELD(cgp_launch, recorded); FIELD(cgp_launch, pad);
    printf("size cgp_meta_header %zu\n", sizeof(cgp_meta_header));
    FIELD(cgp_meta_header, magic); FIELD(cgp_meta_header, nbb); FIELD(cgp_meta_header, nloops);
    FIELD(cgp_meta_header, n_events); FIELD(cgp_meta_header, status);
    FIELD(cgp_meta_header, n_launches);
    printf("size cgp_trip %zu\n", sizeof(cgp_trip));
    FIELD(cgp_trip, row); FIELD(cgp_trip, loop); FIELD(cgp_trip, trips);
    FIELD(cgp_trip, index1); FIELD(cgp_trip, index2);
    printf("const HELPER_DEPTH %d\n", CGP_HELPER_DEPTH);
    printf("const NO_INDEX %u\n", CGP_NO_INDEX);
    printf("const TAG_MARKERS %u\n", CGP_TAG_MARKERS);
    printf("const TAG_LOOP %u\n", CGP_TAG_LOOP);
    printf("const TAG_BEGIN %u\n", CGP_TAG_BEGIN);
    printf("const TAG_END %u\n", CGP_TAG_END);
    printf("const TAG_EXIT %u\n", CGP_TAG_EXIT);
    printf("const MARKED_DEPTH %d\n", CGP_MARKED_DEPTH);
    printf("const META_MAGIC %llu\n", (unsigned long long)CGP_META_MAGIC);
    printf("const STATUS_FINISHED %d\n", CGP_FINISHED);
    printf("const STATUS_EVENT_LIMIT %d\n", CGP_EVENT_LIMIT);
    printf("const STATUS_NESTED %d\n", CGP_NESTED);
    return 0;
}
"""


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory, compiler):
    """What the C compiler says about the runtime's structs and constants."""
    tmp = tmp_path_factory.mktemp("layout")
    (tmp / "layout.c").write_text(LAYOUT_C)
    exe = tmp / "layout"
    subprocess.run([*compiler.command, "-I", str(RUNTIME), "-o", str(exe), str(tmp / "layout.c")],
                   check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    sizes, fields, consts = {}, {}, {}
    for line in out.splitlines():
        kind, *rest = line.split()
        if kind == "size":
            sizes[rest[0]] = int(rest[1])
        elif kind == "field":
            fields.setdefault(rest[0], {})[rest[1]] = tuple(int(x) for x in rest[2:])
        else:
            consts[rest[0]] = int(rest[1])
    return sizes, fields, consts


@pytest.mark.parametrize("struct_name, dtype", [("cgp_launch", LAUNCH_DTYPE),
                                                 ("cgp_meta_header", META_HEADER_DTYPE),
                                                 ("cgp_trip", TRIP_DTYPE)])
def test_struct_layout_matches_dtype(c_layout, struct_name, dtype):
    sizes, fields, _ = c_layout
    assert sizes[struct_name] == dtype.itemsize
    c_fields = fields[struct_name]
    assert list(c_fields) == list(dtype.names)  # same fields, same order
    for name, (offset, size, signed) in c_fields.items():
        ft, off = dtype.fields[name][:2]
        assert (off, ft.itemsize) == (offset, size), name
        assert (ft.kind == "i") == bool(signed), name
        assert ft.byteorder in ("<", "=", "|")


def test_constants_match_header(c_layout):
    _, _, consts = c_layout
    assert consts == {
        "TAG_MARKERS": tracefile.TAG_MARKERS, "TAG_LOOP": tracefile.TAG_LOOP,
        "TAG_BEGIN": tracefile.TAG_BEGIN, "TAG_END": tracefile.TAG_END,
        "TAG_EXIT": tracefile.TAG_EXIT,
        "MARKED_DEPTH": tracefile.MARKED_DEPTH, "META_MAGIC": tracefile.META_MAGIC,
        "STATUS_FINISHED": tracefile.STATUS_FINISHED,
        "STATUS_EVENT_LIMIT": tracefile.STATUS_EVENT_LIMIT,
        "STATUS_NESTED": tracefile.STATUS_NESTED,
        "HELPER_DEPTH": memtrace.HELPER_DEPTH, "NO_INDEX": tracefile_format.NO_INDEX,
    }
    assert tracefile_format.HELPER_DEPTH == memtrace.HELPER_DEPTH
    assert memtrace.MARKED_DEPTH == tracefile.MARKED_DEPTH
    assert memtrace.MAX_MEM_IDS == tracefile.TAG_MARKERS
    assert tracefile.META_MAGIC.to_bytes(8, "little") == b"CCGPMETA"


# --------------------------------------------------------------------------- round trip


def make_header(**over) -> TraceHeader:
    fields = {
        "source_name": "k.c", "source_sha256": tracefile.sha256_text("int x;\n"),
        "source_text": "int x;\n", "compiler": "cc (test)", "flags": ("-O1", "-g"),
        "macros": {"N": "16"},
        "regions": (RegionInfo(0, "k", "main", 3, 5, (("A", 32, 16),)),
                 RegionInfo(1, "f", "f", 0, 0)),
        "mem": (MemInstr(0, 0, "main", 1, "load", 4, "float", "k.c", 4, 7, "A[i]"),
             MemInstr(1, -1, "get", 2, "store", 8, "double", "k.c", 9, 3, "p")),
        "loops": (LoopInfo(0, 0, "main", "for.body", -1, 1, 4, True),),
        "blocks": (BlockInfo(0, 0, "main", "entry", (("br", "", "", 1),)),
                BlockInfo(1, 0, "main", "for.body", (("load", "float", "", 1),
                                                     ("fadd", "float", "", 2))),
                BlockInfo(2, -1, "get", "entry", ())),
        "calls": (CallSite(0, "main", "get", True, 4), CallSite(0, "main", "expf", False, 4)),
        "helpers": ("get",), "max_launches": 2, "stdout_tail": "checksum 1\n", "ir_text": "; ir\n",
    }
    fields.update(over)
    return TraceHeader(**fields)


def tag(t: int, payload: int) -> int:
    return (t << 48) | payload


EVENTS = np.array([tag(tracefile.TAG_BEGIN, 0), tag(tracefile.TAG_LOOP, 0), tag(0, 0x1000),
                   tag(1, 0x2000), tag(tracefile.TAG_END, 0), tag(tracefile.TAG_BEGIN, 1),
                   tag(0, 0x1004), tag(tracefile.TAG_END, 1)], dtype="<u8")


def write_sample(path, header=None, events=EVENTS):
    ev = path.with_name("events.bin")
    ev.write_bytes(np.asarray(events, "<u8").tobytes())
    launches = np.zeros(2, LAUNCH_DTYPE)
    launches["region"] = [0, 0]
    launches["launch"] = [0, 1]
    launches["first_event"] = [0, 5]
    launches["n_events"] = [5, 3]
    launches["recorded"] = [1, 1]
    bb = np.array([[1, 4, 0], [1, 1, 2]], "<u8")
    iters = np.array([[4], [1]], "<u8")
    entries = np.array([[1], [1]], "<u8")
    trips = np.array([(0, 0, 4, 0, 0xFFFFFFFF)], TRIP_DTYPE)  # every section holds bytes
    write_trace(path, header or make_header(), ev, launches, bb, iters, entries, trips)
    return launches, bb, iters, entries


def test_round_trip(tmp_path):
    path = tmp_path / "t.cgptrace"
    launches, bb, iters, entries = write_sample(path)
    tr = read_trace(path)
    assert tr.header == make_header()
    assert tr.path == path
    np.testing.assert_array_equal(tr.events, EVENTS)
    assert isinstance(tr.events, np.memmap)
    np.testing.assert_array_equal(tr.launches, launches)
    assert tr.launches.dtype == LAUNCH_DTYPE
    np.testing.assert_array_equal(tr.bb_counts, bb)
    np.testing.assert_array_equal(tr.loop_iters, iters)
    np.testing.assert_array_equal(tr.loop_entries, entries)
    np.testing.assert_array_equal(tr.launch_events(1), EVENTS[5:8])
    assert tr.header.region("k").index == 0 and tr.header.region(1).name == "f"
    with pytest.raises(KeyError):
        tr.header.region("nope")
    assert tr.header.source_line(1) == "int x;" and tr.header.source_line(99) == ""
    assert not path.with_name(path.name + ".part").exists()


def test_layout_magic_version_alignment(tmp_path):
    path = tmp_path / "t.cgptrace"
    write_sample(path)
    raw = path.read_bytes()
    assert raw[:8] == b"CGPTRACE"
    version, hlen, crc, zero = struct.unpack("<IIII", raw[8:24])
    assert version == tracefile.VERSION and zero == 0
    assert zlib.crc32(raw[24:24 + hlen]) == crc
    meta = json.loads(raw[24:24 + hlen])
    sections = meta["sections"]
    assert set(sections) == {"events", "launches", "bb_counts", "loop_iters", "loop_entries",
                             "trips"}
    for sec in sections.values():
        assert sec["offset"] % tracefile.ALIGN == 0
    ev = sections["events"]
    assert np.frombuffer(raw[ev["offset"]:ev["offset"] + 8 * len(EVENTS)], "<u8").tolist() == \
        EVENTS.tolist()
    for sec in sections.values():  # each section carries the CRC-32 of its bytes
        nbytes = int(np.prod(sec["shape"])) * tracefile._dtype(sec["dtype"]).itemsize
        assert zlib.crc32(raw[sec["offset"]:sec["offset"] + nbytes]) == sec["crc32"]


def test_empty_trace_round_trip(tmp_path):
    path = tmp_path / "t.cgptrace"
    ev = tmp_path / "events.bin"
    ev.write_bytes(b"")
    empty = np.zeros((0, 0), "<u8")
    write_trace(path, make_header(), ev, np.zeros(0, LAUNCH_DTYPE), empty, empty, empty)
    tr = read_trace(path)
    assert len(tr.events) == 0 and len(tr.launches) == 0 and tr.launches.dtype == LAUNCH_DTYPE


def test_section_table_settles_across_a_digit_boundary(tmp_path):
    """Brute force over header lengths about the 10,000-byte offsets: where a section's offset
    gains a digit from one try of the table to the next (the header grows past a 64-B step),
    the written table still matches the file. Three tries did not always settle: wavefront's
    restrict trace of 32 launches then read as 'section launches: checksum mismatch'."""
    path = tmp_path / "t.cgptrace"
    for extra in range(7650, 8050):  # headers of about 9,650-10,050 B: 21 failed with three tries
        write_sample(path, make_header(ir_text="; " + "x" * extra + "\n"))
        tr = read_trace(path)  # raises on a stale table
        np.testing.assert_array_equal(tr.events, EVENTS)


# --------------------------------------------------------------------------- bad files


@pytest.fixture()
def good(tmp_path):
    path = tmp_path / "good.cgptrace"
    write_sample(path)
    return path


def test_bad_magic(tmp_path, good):
    bad = tmp_path / "bad.cgptrace"
    bad.write_bytes(b"NOTATRACE" + good.read_bytes()[9:])
    with pytest.raises(TraceFormatError, match="bad magic"):
        read_trace(bad)


@pytest.mark.parametrize("content", [b"", b"CGPT", b"hello world, this is text\n"])
def test_short_or_foreign_file(tmp_path, content):
    bad = tmp_path / "x.cgptrace"
    bad.write_bytes(content)
    with pytest.raises(TraceFormatError, match="not a cgpredict trace"):
        read_trace(bad)


def test_wrong_version(tmp_path, good):
    raw = bytearray(good.read_bytes())
    raw[8:12] = struct.pack("<I", tracefile.VERSION + 1)
    bad = tmp_path / "v.cgptrace"
    bad.write_bytes(bytes(raw))
    with pytest.raises(TraceFormatError, match=f"version {tracefile.VERSION + 1}.*trace the "
                                                "program again"):
        read_trace(bad)


def _prefix(blob: bytes) -> bytes:
    return tracefile.PREFIX.pack(tracefile.MAGIC, tracefile.VERSION, len(blob), zlib.crc32(blob), 0)


def _cut_points(path):
    raw = path.read_bytes()
    hlen = struct.unpack("<I", raw[12:16])[0]
    sections = json.loads(raw[24:24 + hlen])["sections"]
    cuts = [0, 7, 8, 12, 15, 16, 17, 23, 24, 25, 24 + hlen // 2, 24 + hlen - 1]
    for sec in sections.values():
        nbytes = int(np.prod(sec["shape"])) * np.dtype(tracefile._dtype(sec["dtype"])).itemsize
        if nbytes:
            cuts += [sec["offset"], sec["offset"] + nbytes // 2, sec["offset"] + nbytes - 1]
    return raw, sorted(set(cuts))


def test_truncated_file(tmp_path, good):
    raw, cuts = _cut_points(good)
    assert len(cuts) > 15
    bad = tmp_path / "cut.cgptrace"
    for n in cuts:
        bad.write_bytes(raw[:n])
        with pytest.raises(TraceFormatError) as exc:
            read_trace(bad)
        msg = str(exc.value)
        assert "\n" not in msg
        assert ("truncated" in msg) or ("bad magic" in msg and n < 16), (n, msg)


@pytest.mark.parametrize("blob", [b"{not json", b"[]", b'"text"', b"{}", b"\xff\xfe\x00",
                                  b'{"source_name": 1}'])
def test_garbage_header(tmp_path, blob):
    bad = tmp_path / "g.cgptrace"
    bad.write_bytes(_prefix(blob) + blob)
    with pytest.raises(TraceFormatError, match="corrupt trace"):
        read_trace(bad)


def test_garbage_section_table(tmp_path, good):
    raw = good.read_bytes()
    hlen = struct.unpack("<I", raw[12:16])[0]
    meta = json.loads(raw[24:24 + hlen])
    meta["sections"]["launches"]["dtype"] = "not-a-dtype"
    blob = json.dumps(meta).encode()
    bad = tmp_path / "s.cgptrace"
    bad.write_bytes(_prefix(blob) + blob + raw[24 + hlen:])
    with pytest.raises(TraceFormatError):
        read_trace(bad)


def test_missing_file(tmp_path):
    with pytest.raises(TraceFormatError, match="no such trace file"):
        read_trace(tmp_path / "nope.cgptrace")


def test_directory_is_not_a_trace(tmp_path):
    with pytest.raises(TraceFormatError):
        read_trace(tmp_path)


# --------------------------------------------------------------------------- the runtime's meta


def _meta_bytes(status, n_events, launches, counts, magic=tracefile.META_MAGIC, n_launches=None):
    hdr = np.zeros(1, META_HEADER_DTYPE)
    hdr["magic"], hdr["nbb"], hdr["nloops"] = magic, 2, 1
    hdr["n_events"], hdr["status"] = n_events, status
    hdr["n_launches"] = len(launches) if n_launches is None else n_launches
    body = b""
    for launch, row in zip(launches, counts):
        body += launch.tobytes() + np.asarray(row, "<u8").tobytes()
    return hdr.tobytes() + body


def test_read_meta(tmp_path):
    launches = np.zeros(2, LAUNCH_DTYPE)
    launches["region"] = [0, 1]
    launches["launch"] = [0, 0]
    launches["first_event"] = [0, 7]
    launches["n_events"] = [7, 4]
    launches["recorded"] = [1, 1]
    counts = [[3, 5, 10, 2], [1, 0, 4, 1]]  # nbb=2 block counts, then iterations, entries
    meta = tmp_path / "meta.bin"
    meta.write_bytes(_meta_bytes(tracefile.STATUS_FINISHED, 11, launches, counts))
    status, n_events, got, bb, iters, entries, _ = read_meta(meta, nbb=2, nloops=1)
    assert (status, n_events) == (tracefile.STATUS_FINISHED, 11)
    np.testing.assert_array_equal(got, launches)
    assert bb.tolist() == [[3, 5], [1, 0]]
    assert iters.tolist() == [[10], [4]]
    assert entries.tolist() == [[2], [1]]
    # a launch record cut short (the program died while writing) is dropped
    meta.write_bytes(_meta_bytes(tracefile.STATUS_FINISHED, 11, launches, counts)[:-3])
    assert len(read_meta(meta, nbb=2, nloops=1)[2]) == 1


def test_read_meta_bad_magic(tmp_path):
    meta = tmp_path / "meta.bin"
    meta.write_bytes(_meta_bytes(1, 0, np.zeros(0, LAUNCH_DTYPE), [], magic=1234))
    with pytest.raises(TraceFormatError, match="no valid meta"):
        read_meta(meta, nbb=2, nloops=1)


# --------------------------------------------------------------------------- consistency checks


def _rewrite(good, tmp_path, edit_meta=None, edit_raw=None):
    """A copy of ``good`` with its header JSON and/or raw bytes edited (sections kept in place),
    its checksums made right again, so only the consistency checks can find the edit."""
    raw = bytearray(good.read_bytes())
    hlen = struct.unpack("<I", raw[12:16])[0]
    meta = json.loads(raw[24:24 + hlen])
    if edit_raw:
        edit_raw(raw, meta["sections"])
    for sec in meta["sections"].values():
        nbytes = int(np.prod(sec["shape"])) * tracefile._dtype(sec["dtype"]).itemsize
        sec["crc32"] = zlib.crc32(raw[sec["offset"]:sec["offset"] + nbytes])
    if edit_meta:
        edit_meta(meta)
    base = 24 + hlen + tracefile._pad(24 + hlen)  # where the sections start now
    body, shift = bytes(raw[base:]), 0
    for _ in range(3):  # the sections move when the header grows or shrinks
        blob = json.dumps(meta, separators=(",", ":")).encode()
        new = 24 + len(blob) + tracefile._pad(24 + len(blob)) - base
        if new == shift:
            break
        for sec in meta.get("sections", {}).values():
            sec["offset"] += new - shift
        shift = new
    bad = tmp_path / "bad.cgptrace"
    bad.write_bytes(_prefix(blob) + blob + b"\0" * tracefile._pad(24 + len(blob)) + body)
    return bad


def _set_event(k, value):
    def edit(raw, sections):
        off = sections["events"]["offset"] + 8 * k
        raw[off:off + 8] = struct.pack("<Q", value)
    return edit


def _set_count(section, value):
    def edit(raw, sections):
        off = sections[section]["offset"]
        raw[off:off + 8] = struct.pack("<Q", value)
    return edit


def _set_launch(k, field, value):
    def edit(raw, sections):
        off = sections["launches"]["offset"] + k * LAUNCH_DTYPE.itemsize
        off += LAUNCH_DTYPE.fields[field][1]
        fmt = "<Q" if LAUNCH_DTYPE.fields[field][0].itemsize == 8 else "<i"
        raw[off:off + struct.calcsize(fmt)] = struct.pack(fmt, value)
    return edit


@pytest.mark.parametrize("edit_meta, edit_raw, message", [
    (None, _set_event(2, tag(131, 0x1000)),
     r"corrupt trace \(event 2 names memory instruction 131, the trace has 2\)"),
    (None, _set_event(1, tag(tracefile.TAG_LOOP, 7 << 32)), "event 1 names loop 7"),
    (None, _set_event(1, tag(0xF123, 0)), "unknown tag"),
    (None, _set_event(1, tag(tracefile.TAG_LOOP, 4)), "event 1: iteration 4 is past"),
    (None, _set_event(1, tag(tracefile.TAG_LOOP, 0xFFFFFFF0)), "iteration 4294967280 is past"),
    (None, _set_count("bb_counts", 1 << 62), "section bb_counts holds the count"),
    (None, _set_count("loop_iters", 1 << 50), "section loop_iters holds the count"),
    (None, _set_event(0, tag(0, 0x1000)), "does not start at a BEGIN"),
    (None, _set_launch(1, "first_event", 1 << 40), r"launch 1: .* within the 8 events"),
    (None, _set_launch(0, "n_events", 0), "launch 0"),
    (None, _set_launch(0, "n_events", 9), "launch 0"),
    (None, _set_launch(0, "region", 99), "launch 0 names region 99"),
    (lambda m: m.update(mem=[]), None, "names memory instruction 0, the trace has 0"),
    (lambda m: m.update(loops=[]), None, r"section loop_iters has shape \(2, 1\), want \(2, 0\)"),
    (lambda m: m.update(blocks=m["blocks"][:2]), None, "names block 2, the trace has 2"),
    (lambda m: m["mem"][0].update(block=9), None, "memory instruction 0 names block 9"),
    (lambda m: m["mem"][1].update(id=5), None, "memory instruction 1 has id 5"),
    (lambda m: m["sections"].pop("events"), None, r"corrupt trace \(missing section events\)"),
    (lambda m: m.update(sections={}), None, "missing section events, launches"),
])
def test_inconsistent_trace_is_corrupt(tmp_path, good, edit_meta, edit_raw, message):
    bad = _rewrite(good, tmp_path, edit_meta, edit_raw)
    with pytest.raises(TraceFormatError, match=message) as exc:
        read_trace(bad)
    assert "\n" not in str(exc.value) and exc.value.exit_code == 4


def test_unrecorded_launch_is_fine(tmp_path):
    path = tmp_path / "t.cgptrace"
    write_sample(path)
    good = _rewrite(path, tmp_path, None, lambda raw, s: (
        _set_launch(1, "n_events", 0)(raw, s), _set_launch(1, "first_event", 8)(raw, s),
        _set_launch(1, "recorded", 0)(raw, s)))
    tr = read_trace(good)
    assert len(tr.launch_events(1)) == 0


def test_consistency_check_is_fast(tmp_path):
    """4M events are checked in well under a second (vectorised, chunked)."""
    import time

    n = 4_000_000
    ev = np.full(n, tag(0, 0x1000), "<u8")
    ev[0], ev[-1] = tag(tracefile.TAG_BEGIN, 0), tag(tracefile.TAG_END, 0)
    ev[1::1000] = tag(tracefile.TAG_LOOP, 0)
    path = tmp_path / "big.cgptrace"
    (tmp_path / "events.bin").write_bytes(ev.tobytes())
    launches = np.zeros(1, LAUNCH_DTYPE)
    launches["n_events"], launches["recorded"] = n, 1
    one = np.ones((1, 1), "<u8")
    write_trace(path, make_header(), tmp_path / "events.bin", launches,
                np.ones((1, 3), "<u8"), one, one)
    start = time.perf_counter()
    read_trace(path)
    assert time.perf_counter() - start < 1.0


# --------------------------------------------------------------------------- integrity (issue 29)


def _same(a, b) -> bool:
    """Two traces read back hold the same header and arrays (so give the same answer)."""
    return a.header == b.header and all(
        np.array_equal(getattr(a, n), getattr(b, n)) for n in tracefile.SECTIONS)


@pytest.mark.parametrize("section", tracefile.SECTIONS)
def test_a_flipped_byte_in_a_section_is_a_checksum_mismatch(tmp_path, good, section):
    raw = bytearray(good.read_bytes())
    hlen = struct.unpack("<I", raw[12:16])[0]
    raw[json.loads(raw[24:24 + hlen])["sections"][section]["offset"]] ^= 0x10
    bad = tmp_path / "flip.cgptrace"
    bad.write_bytes(bytes(raw))
    with pytest.raises(TraceFormatError, match=f"section {section}: checksum mismatch") as exc:
        read_trace(bad)
    assert exc.value.exit_code == 4


def test_events_checksummed_unless_the_writer_vouches_for_them(tmp_path, good):
    """read_trace(events_crc=) skips the events' checksum only when it is the one the header
    records (the tracer's read-back of what it wrote); any other value checks them."""
    raw = bytearray(good.read_bytes())
    hlen = struct.unpack("<I", raw[12:16])[0]
    events = json.loads(raw[24:24 + hlen])["sections"]["events"]
    raw[events["offset"]] ^= 0x10
    bad = tmp_path / "flip.cgptrace"
    bad.write_bytes(bytes(raw))
    for wrong in (None, events["crc32"] ^ 1, 0):
        with pytest.raises(TraceFormatError, match="section events: checksum mismatch"):
            read_trace(bad, events_crc=wrong)
    assert _same(read_trace(good, events_crc=events["crc32"]), read_trace(good))


def test_a_flipped_byte_in_the_header_is_a_checksum_mismatch(tmp_path, good):
    raw = bytearray(good.read_bytes())
    raw[40] ^= 0x01
    bad = tmp_path / "flip.cgptrace"
    bad.write_bytes(bytes(raw))
    with pytest.raises(TraceFormatError, match="header checksum mismatch"):
        read_trace(bad)


def test_an_old_trace_format_is_named(tmp_path, good):
    raw = bytearray(good.read_bytes())
    raw[8:12] = struct.pack("<I", 1)
    bad = tmp_path / "old.cgptrace"
    bad.write_bytes(bytes(raw))
    with pytest.raises(TraceFormatError, match="version 1 \\(an old trace format\\).*trace the "
                                                "program again"):
        read_trace(bad)


@pytest.mark.parametrize("shape, message", [
    ([1 << 62], "section events has shape"), ([-3], "section events has shape"),
    ([True], "section events has shape"), (["8"], "section events has shape"),
    ([1 << 37], r"truncated trace \(section events cut short\)"), ([4, 2], "has shape"),
])
def test_section_sizes_are_range_checked_before_allocating(tmp_path, good, shape, message):
    def edit(meta):
        meta["sections"]["events"]["shape"] = shape
    with pytest.raises(TraceFormatError, match=message) as exc:
        read_trace(_rewrite(good, tmp_path, edit))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("field, value", [("offset", -64), ("offset", 1 << 50), ("crc32", -1),
                                          ("crc32", "x"), ("dtype", "<f8"), ("dtype", "V99")])
def test_section_descriptions_are_checked(tmp_path, good, field, value):
    def edit(meta):
        meta["sections"]["bb_counts"][field] = value
    with pytest.raises(TraceFormatError, match="section bb_counts"):
        read_trace(_rewrite(good, tmp_path, edit))


def test_writing_never_touches_a_users_part_file(tmp_path):
    part = tmp_path / "t.cgptrace.part"
    part.write_bytes(b"mine")
    write_sample(tmp_path / "t.cgptrace")
    assert part.read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.bin", "t.cgptrace",
                                                          "t.cgptrace.part"]


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory):
    """A small real trace: GEMM at 8x8x8 traced by the whole tool chain."""
    from cgpredict.frontend.tracer import TraceOptions, trace_program

    gemm = Path(__file__).resolve().parent.parent / "polybench_c" / "gemm.c"
    out = tmp_path_factory.mktemp("real") / "gemm.cgptrace"
    return trace_program(gemm, out, TraceOptions(macros={"NI": "8", "NJ": "8", "NK": "8"}))


def test_byte_flips_of_a_real_trace_never_give_another_answer(tmp_path, real_trace):
    """300 single-byte flips (fixed seed) anywhere in a real trace: each is refused in one
    line (exit 4) or, in the padding only, reads back the very same trace."""
    raw = real_trace.path.read_bytes()
    rng = np.random.default_rng(29)
    bad = tmp_path / "flip.cgptrace"
    refused = 0
    for pos, bit in zip(rng.integers(0, len(raw), 300), rng.integers(0, 8, 300)):
        flipped = bytearray(raw)
        flipped[pos] ^= 1 << int(bit)
        bad.write_bytes(bytes(flipped))
        try:
            got = read_trace(bad)
        except TraceFormatError as exc:
            assert "\n" not in str(exc) and exc.exit_code == 4
            refused += 1
            continue
        assert _same(got, real_trace), f"byte {pos} flipped gives another trace"
    assert refused > 250


def test_trips_round_trip_and_corrupt_trips(tmp_path):
    """The trips section comes back as written; a record naming a launch or a loop the trace
    does not have is a corrupt trace, never another answer; a version-2 file is refused."""
    ev = tmp_path / "events.bin"
    ev.write_bytes(np.asarray(EVENTS[:5], "<u8").tobytes())
    launches = np.zeros(1, LAUNCH_DTYPE)
    launches["n_events"], launches["recorded"] = 5, 1
    counts = (np.array([[1, 4, 0]], "<u8"), np.array([[4]], "<u8"), np.array([[1]], "<u8"))
    trips = np.array([(0, 0, 7, 3, 0xFFFFFFFF), (0, 0, 2, 4, 0xFFFFFFFF)], TRIP_DTYPE)
    path = tmp_path / "t.cgptrace"
    write_trace(path, make_header(), ev, launches, *counts, trips)
    np.testing.assert_array_equal(read_trace(path).trips, trips)
    bad = trips.copy()
    bad["loop"][1] = 5
    write_trace(path, make_header(), ev, launches, *counts, bad)
    with pytest.raises(TraceFormatError, match="section trips names"):
        read_trace(path)
    bad = trips.copy()
    bad["row"][1] = 1  # the launch a program left before its end: read, used by no launch
    write_trace(path, make_header(), ev, launches, *counts, bad)
    np.testing.assert_array_equal(read_trace(path).trips, bad)
    bad["row"][1] = 2
    write_trace(path, make_header(), ev, launches, *counts, bad)
    with pytest.raises(TraceFormatError, match="section trips names"):
        read_trace(path)
    raw = bytearray(path.read_bytes())
    raw[8:12] = struct.pack("<I", 2)
    path.write_bytes(bytes(raw))
    with pytest.raises(TraceFormatError, match="version 2 .an old trace format"):
        read_trace(path)
