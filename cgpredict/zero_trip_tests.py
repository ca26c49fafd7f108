"""The zero-trip tests of a thread's first loops that ptxas merges into its guard (SPEC §2.4):
where a thread writes nothing before the test and nothing when the loop does not run, the
guard and the test are one predicate and one ``EXIT`` (eq. (12g)); a compile-time trip count
has no such test at all (eq. (12ct)). ``machine_code`` and ``guard_exits`` count from them."""

from __future__ import annotations

from .constant_trips import constant_bound
from .frontend.tracefile import Trace
from .loop_blocks import mapped_above, own_blocks
from .parallelism import ir_module


def _writes(block, upto: int | None = None) -> bool:
    """Whether IR ``block`` (its first ``upto`` instructions) writes memory or calls a
    function that may: what a thread must do before it may leave."""
    for ins in block.instrs[:upto]:
        if ins.opcode in ("store", "atomicrmw", "cmpxchg", "fence"):
            return True
        callee = ins.callee or ""
        if ins.opcode == "call" and callee and not callee.startswith("llvm."):
            return True
    return False


def _reach(blocks: dict, start: list[str], within: set[str], stop: set[str]) -> set[str]:
    """Labels reachable from ``start`` through ``within``, not going past ``stop``."""
    seen: set[str] = set()
    todo = [b for b in start if b in within]
    while todo:
        b = todo.pop()
        if b not in seen and b not in stop:
            seen.add(b)
            todo += [n for n in blocks[b].successors if n in within]
    return seen


def _zero_trip_test(blocks: dict, test: str, own: set[str], inner: set[str], head: str,
                    loop_head: str) -> bool:
    """Whether block ``test`` of a mapped loop's body (``own``, header ``head``) branches
    into its inner loop (``inner``, header ``loop_head``) or past it: its zero-trip test,
    which a compile-time trip count of the port does not have (eq. (12ct): SYR2K)."""
    succ = blocks[test].successors
    if len(succ) != 2:
        return False
    enters = [loop_head in _reach(blocks, [n], own | inner, {head}) for n in succ]
    return sorted(enters) == [False, True]


def _merges(blocks: dict, test: str, own: set[str], inner: set[str], head: str, loop_head: str):
    """Whether block ``test`` of a mapped loop's body (``own``, header ``head``) is the
    zero-trip test of its inner loop (``inner``, header ``loop_head``) that ptxas merges into
    the guard: one successor enters the loop, the other skips it and writes nothing before
    the next thread's iteration, and nothing is written from the body's start to the test."""
    succ = blocks[test].successors
    if len(succ) != 2:
        return False
    enters = [loop_head in _reach(blocks, [n], own | inner, {head}) for n in succ]
    if sorted(enters) != [False, True]:
        return False
    skip = succ[enters.index(False)]
    if any(_writes(blocks[b]) for b in _reach(blocks, [skip], own, {head})):
        return False
    before = {b for b in _reach(blocks, [head], own, {test})
              if test in _reach(blocks, blocks[b].successors, own, {head}) or b == head}
    return not any(_writes(blocks[b]) for b in before) and not _writes(blocks[test], -1)


def merged_zero_trip_tests(trace: Trace, region: int, grid: int) -> tuple[int, ...]:
    """Block ids of the zero-trip tests of ``region``'s first sequential loops (depth
    ``grid`` + 1) that ptxas merges into the thread's guard (``_merges``): where a thread
    writes nothing before the test and nothing when the loop does not run, leaving at once
    is right for both, so the guard and the test are one predicate and one ``EXIT``
    (read from the sm_90 SASS of MVT, GEMVER k3 and Deriche's forward passes; ATAX, GEMM
    and the others store before their loop and keep the test apart). Not when a mapped loop
    around writes (code of the thread's row)."""
    return tuple(dict.fromkeys(t for t, _ in merged_test_entries(trace, region, grid)))


def merged_test_entries(trace: Trace, region: int, grid: int) -> tuple[tuple[int, int], ...]:
    """(test, entry) block ids of each ``merged_zero_trip_tests`` test and its successor
    entering the loop (guard_exits: threads taking the other side leave at the guard)."""
    h = trace.header
    mod = ir_module(h.ir_text)
    out = []
    for lp in h.loops:
        if lp.region != region or lp.depth != grid + 1 or lp.parent < 0:
            continue
        m = h.loops[lp.parent]
        if m.function not in mod.functions:
            continue
        blocks = {b.label: b for b in mod.functions[m.function].blocks}
        known = constant_bound(trace, lp)  # eq. (12ct): a compile-time trip has no such test
        if not known and any(_writes(blocks[h.blocks[b].label]) for q in mapped_above(h, m)
                             for b in own_blocks(trace, q)):
            continue
        own = {h.blocks[b].label: b for b in own_blocks(trace, m)}
        ids = {blk.label: blk.id for blk in h.blocks if blk.function == m.function}
        inner = {h.blocks[b].label for b in lp.blocks}
        for t in sorted(own):
            if (_zero_trip_test(blocks, t, set(own), inner, m.header, lp.header) if known
                    else _merges(blocks, t, set(own), inner, m.header, lp.header)):
                enter = [n for n in blocks[t].successors
                         if lp.header in _reach(blocks, [n], set(own) | inner, {m.header})]
                out.append((own[t], ids.get(enter[0], -1) if enter else -1))
    return tuple(out)
