"""The checks of a trace file read back: the section table against the file size, the
header's tables, the section shapes against the header, and every event (numba, in chunks),
each answering the first problem as one line or None, so a flipped byte is a corrupt trace,
never another answer."""

from __future__ import annotations

import functools

import numpy as np

from .. import warmup
from .tracefile_format import (
    LAUNCH_DTYPE,
    MAX_COUNT,
    MAX_DIM,
    SECTION_DTYPES,
    SECTIONS,
    TAG_BEGIN,
    TAG_EXIT,
    TAG_LOOP,
    TAG_MARKERS,
    Trace,
    TraceHeader,
    _dtype,
)


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
        ndim = 1 if name in ("events", "launches", "trips") else 2
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


def _check_trips(tr: Trace, n: int) -> str | None:
    """The trips section against the launches and loops (a record naming neither is corrupt;
    row ``n`` is the launch a program left before its end wrote it, which is diagnosed as
    such afterwards, and whose records no launch reads)."""
    t, nl = tr.trips, len(tr.header.loops)
    if t.ndim != 1 or t.dtype != SECTION_DTYPES["trips"]:
        return "section trips has the wrong layout"
    if len(t) and (int(t["row"].max()) > n or int(t["loop"].max()) >= nl):
        return f"section trips names a launch or loop beyond the trace's {n} and {nl}"
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
    problem = _check_trips(tr, n)
    if problem:
        return problem
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
