"""The marked regions of a parsed module, for the instrumentation pass (``memtrace``): a
region is a whole function named on the command line, or the blocks reachable from its
``__cgp_region_begin(R)`` call without passing the matching ``__cgp_region_end(R)``, each
with the span of its instructions inside the region."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .irtext import Function, Instr, Module
from .opkeys import InstrumentError


@dataclass
class Region:
    index: int
    function: Function
    begin: tuple[int, int] | None  # (block index, instr index) of the begin call; None: entry
    blocks: dict[int, tuple[int, int]] = field(default_factory=dict)  # block -> [lo, hi) instrs


def loop_parents(loops: list[tuple[int, frozenset[int]]]) -> dict[int, int | None]:
    """Header of the innermost loop enclosing each loop (None for outermost ones)."""
    size = {h: len(body) for h, body in loops}
    out: dict[int, int | None] = {}
    for h, _ in loops:
        enclosing = [p for p, pb in loops if p != h and h in pb]
        out[h] = min(enclosing, key=size.__getitem__) if enclosing else None
    return out


def find_regions(mod: Module, function_regions: dict[str, int]) -> list[Region]:
    regions: dict[int, Region] = {}
    for fn in mod.functions.values():
        if fn.name in function_regions:
            r = Region(function_regions[fn.name], fn, None)
            r.blocks = {k: (0, len(b.instrs)) for k, b in enumerate(fn.blocks)}
            regions[r.index] = r
            continue
        for bi, b in enumerate(fn.blocks):
            for ii, ins in enumerate(b.instrs):
                if ins.callee == "__cgp_region_begin":
                    idx = marker_index(ins)
                    if idx in regions:  # the function holding it was inlined more than once
                        raise InstrumentError(
                            "appears at several places of the compiled program: the "
                            "function holding it was inlined into each of its callers; "
                            "declare that function __attribute__((noinline))",
                            region=idx,
                        )
                    regions[idx] = Region(idx, fn, (bi, ii))
    for r in regions.values():
        if r.begin is not None:
            collect_region_blocks(r)
    return [regions[k] for k in sorted(regions)]


def marker_index(ins: Instr) -> int:
    """The region number passed to a __cgp_region_begin/end call. The optimiser may merge two
    marker calls of different kernels into one whose number is a phi (tail merging): the
    kernels' boundaries are then lost, which is said in one line."""
    m = re.search(r"\(i32 (?:noundef )?(-?\d+)\)", ins.text)
    if m is None:
        raise InstrumentError(
            "the compiler merged the markers of several kernels into one call (their code "
            "ends in the same place): mark the loop nests with '#pragma cgp kernel' yourself, "
            "or keep them apart (e.g. __attribute__((noinline)) on their functions) "
            f"[{ins.text.strip()[:80]}]"
        )
    return int(m.group(1))


def collect_region_blocks(r: Region) -> None:
    """Blocks reachable from the begin marker without passing the matching end marker."""
    fn = r.function
    index = {b.label: k for k, b in enumerate(fn.blocks)}
    start_block, start_instr = r.begin
    stack = [(start_block, start_instr + 1)]
    while stack:
        bi, lo = stack.pop()
        if bi in r.blocks and r.blocks[bi][0] <= lo:
            continue
        b = fn.blocks[bi]
        hi = len(b.instrs)
        ended = False
        for ii in range(lo, len(b.instrs)):
            ins = b.instrs[ii]
            if ins.callee == "__cgp_region_end" and marker_index(ins) == r.index:
                hi, ended = ii, True
                break
        r.blocks[bi] = (lo, hi)
        if not ended:
            stack.extend((index[s], 0) for s in b.successors if s in index)
