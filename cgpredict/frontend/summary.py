"""What a trace contains, per region: launches, loops with trip counts, memory instructions with
their source text and dynamic counts, and the executed operation mix (``cgpredict trace-info``).

Dynamic counts come from the per-launch block execution counts, so they are exact for every
launch, including launches whose memory events were not recorded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .tracefile import Trace


@dataclass(frozen=True)
class LoopSummary:
    id: int
    depth: int
    parent: int
    line: int
    entries: int
    iterations: int

    @property
    def mean_trip(self) -> float:
        return self.iterations / self.entries if self.entries else 0.0


@dataclass(frozen=True)
class MemSummary:
    id: int
    kind: str
    bytes: int
    text: str
    location: str
    count: int


@dataclass(frozen=True)
class RegionSummary:
    index: int
    name: str
    location: str
    launches: int
    recorded_launches: int
    events: int
    loops: tuple[LoopSummary, ...]
    mem: tuple[MemSummary, ...]
    ops: tuple[tuple[str, int], ...]  # ("fadd float", count), most frequent first
    external_calls: tuple[str, ...]
    traced_helpers: tuple[str, ...]


def op_label(opcode: str, ty: str, detail: str) -> str:
    """A readable name for an operation key of the instrumentation pass."""
    if opcode == "call":
        return f"call {detail}"
    if opcode == "getelementptr":
        return f"getelementptr ({detail} variable indices)"
    if opcode == "fmul" and detail == "fma":
        return f"fmul {ty} (feeds an fadd: fma)"
    if opcode == "br":
        return "br conditional" if detail == "cond" else "br"
    return " ".join(x for x in (opcode, ty, f"-> {detail}" if detail else "") if x)


def region_block_counts(trace: Trace, region: int) -> np.ndarray:
    """Executions of every block summed over the launches of ``region``."""
    rows = trace.launches["region"] == region
    if not rows.any():
        return np.zeros(len(trace.header.blocks), np.uint64)
    return trace.bb_counts[rows].sum(axis=0)


def op_counts(trace: Trace, region: int) -> Counter:
    """Executed operations of a region, keyed by (opcode, type, detail)."""
    counts = region_block_counts(trace, region)
    ops: Counter = Counter()
    for b in trace.header.blocks:
        n = int(counts[b.id]) if b.id < len(counts) else 0
        if n:
            for opcode, ty, detail, k in b.ops:
                ops[(opcode, ty, detail)] += n * k
    return ops


def summarize(trace: Trace) -> tuple[RegionSummary, ...]:
    """One summary per traced region."""
    h = trace.header
    out = []
    for r in h.regions:
        rows = trace.launches["region"] == r.index
        counts = region_block_counts(trace, r.index)
        nl = len(h.loops)
        iters = trace.loop_iters[rows].sum(axis=0) if rows.any() else np.zeros(nl, np.uint64)
        entries = trace.loop_entries[rows].sum(axis=0) if rows.any() else np.zeros(nl, np.uint64)
        loops = tuple(
            LoopSummary(
                lp.id,
                lp.depth,
                lp.parent,
                lp.line,
                int(entries[lp.id]),
                int(iters[lp.id]) - (0 if lp.rotated else int(entries[lp.id])),
            )
            for lp in h.loops
            if lp.region == r.index
        )
        region_blocks = {b.id for b in h.blocks if b.region in (r.index, -1)}
        mem = tuple(
            MemSummary(
                m.id,
                m.kind,
                m.bytes,
                m.base,
                f"{m.file}:{m.line}:{m.column}",
                int(counts[m.block]) if m.block < len(counts) else 0,
            )
            for m in h.mem
            if m.block in region_blocks and (m.region == r.index or m.region == -1)
        )
        ops = op_counts(trace, r.index)
        out.append(
            RegionSummary(
                index=r.index,
                name=r.name,
                location=f"{h.source_name}:{r.line}",
                launches=int(rows.sum()),
                recorded_launches=int(trace.launches["recorded"][rows].sum()),
                events=int(trace.launches["n_events"][rows].sum()),
                loops=loops,
                mem=tuple(
                    m
                    for m in mem
                    if m.count or m.id in {x.id for x in h.mem if x.region == r.index}
                ),
                ops=tuple((op_label(*k), v) for k, v in ops.most_common()),
                external_calls=tuple(
                    sorted(
                        {
                            c.callee
                            for c in h.calls
                            if not c.traced
                            and not c.callee.startswith("llvm.")
                            and c.region in (r.index, -1)
                        }
                    )
                ),
                traced_helpers=tuple(
                    sorted({c.callee for c in h.calls if c.traced and c.region == r.index})
                ),
            )
        )
    return tuple(out)


def render_summary(trace: Trace) -> str:
    """The text report of ``cgpredict trace-info``."""
    h = trace.header
    lines = [
        f"trace {trace.path.name}: {h.source_name} (sha256 {h.source_sha256[:12]}), "
        f"{len(trace.events)} events, {len(trace.launches)} launches",
        f"  compiled by {h.compiler}",
        f"  macros: {' '.join(f'{k}={v}' for k, v in h.macros.items()) or '(file defaults)'}",
    ]
    for s in summarize(trace):
        lines.append("")
        lines.append(
            f"region {s.index} '{s.name}' at {s.location}: {s.launches} launch(es), "
            f"{s.recorded_launches} recorded, {s.events} events"
        )
        lines.append("  loops:")
        for lp in s.loops:
            indent = "  " * lp.depth
            lines.append(
                f"  {indent}loop {lp.id} (line {lp.line}, depth {lp.depth}): "
                f"{lp.entries} entries, mean trip count {lp.mean_trip:g}"
            )
        lines.append("  memory instructions:")
        for m in s.mem:
            lines.append(
                f"    #{m.id:<3} {m.kind:<5} {m.bytes}B  {m.text:<16} {m.location:<18} x {m.count}"
            )
        lines.append("  operations executed:")
        for label, n in s.ops:
            lines.append(f"    {n:>14}  {label}")
        if s.traced_helpers:
            lines.append(f"  traced through: {', '.join(s.traced_helpers)}")
        if s.external_calls:
            lines.append(f"  external calls (counted as operations): {', '.join(s.external_calls)}")
    return "\n".join(lines)
