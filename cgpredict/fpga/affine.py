"""Affine access functions of a loop nest from the trace (SPEC §5, tiling).

The tiled FPGA design needs, for every memory access of a kernel's loop nest, which loops move
its address and by how much: ``address = base + sum_L coef[L] * iteration[L]`` (bytes). The
trace has iteration markers for the loops of the marked depth (``MARKED_DEPTH``); one deeper
innermost loop is counted by occurrences of the access since the last marker of its parent.
The coefficients are solved exactly (integers) from the first events of one launch and checked
on every sample: an access they do not fit (an indirect ``a[idx[i]]``, a data-dependent branch)
is reported as not affine, with its source line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MARKER_TAG = 0xFFFF
SAMPLE_EVENTS = 400_000  # events of the launch scanned for the access functions


@dataclass(frozen=True)
class AffineAccess:
    """One memory access of the nest: ``coef[k]`` bytes per iteration of ``loops[k]`` (0 when
    the loop does not move it), ``base`` the address at iteration 0 of every loop."""

    mem_id: int
    array: str
    kind: str  # load | store
    bytes: int
    base: int
    coef: tuple[int, ...]


@dataclass(frozen=True)
class AffineNest:
    loops: tuple[int, ...]  # loop ids, outermost first
    accesses: tuple[AffineAccess, ...]
    problem: str = ""  # why the nest is not affine ("" when it is)


def _levels(events: np.ndarray, loops: Sequence[int], marked: Sequence[bool]):
    """Per event, the current iteration of every marked loop (forward-filled from markers),
    -1 before the first marker; and per event the index of the last marker of any nest loop."""
    tag = events >> np.uint64(48)
    is_mark = tag == MARKER_TAG
    lid = ((events >> np.uint64(32)) & np.uint64(0xFFFF)).astype(np.int64)
    idx = (events & np.uint64(0xFFFFFFFF)).astype(np.int64)
    pos = np.arange(len(events))
    it = {}
    last_mark = np.full(len(events), -1, dtype=np.int64)
    for k, (loop, m) in enumerate(zip(loops, marked)):
        if not m:
            continue
        sel = is_mark & (lid == loop)
        where = np.where(sel, pos, -1)
        lastpos = np.maximum.accumulate(where)
        val = np.where(lastpos >= 0, idx[np.maximum(lastpos, 0)], -1)
        it[k] = val
        last_mark = np.maximum(last_mark, lastpos)
    return tag, is_mark, it, last_mark


def affine_nest(
    events: np.ndarray,
    loops: Sequence[int],
    marked: Sequence[bool],
    mems: Sequence,  # MemInstr of the nest's accesses
    level_of: dict[int, int],  # mem id -> index in loops of the deepest loop holding it
    lines: Sequence[int] = (),
) -> AffineNest:
    """Solve every access's coefficients. At most the innermost loop may be unmarked."""
    loops = tuple(loops)
    if any(not m for m in marked[:-1]):
        return AffineNest(loops, (), "the loop nest is deeper than the trace's iteration markers")
    ev = np.asarray(events[:SAMPLE_EVENTS])
    tag, is_mark, it, last_mark = _levels(ev, loops, marked)
    out = []
    inner = len(loops) - 1
    for m in mems:
        sel = np.flatnonzero((tag == m.id) & ~is_mark)
        if len(sel) < 2:
            continue
        lev = level_of.get(m.id, inner)
        cols = []
        for k in range(lev + 1):
            if k in it:
                cols.append(it[k][sel])
            else:  # the unmarked innermost loop: occurrences since the parent's last marker
                lm = last_mark[sel]
                newent = np.r_[True, lm[1:] != lm[:-1]]
                start = np.maximum.accumulate(np.where(newent, np.arange(len(sel)), 0))
                cols.append(np.arange(len(sel)) - start)
        addr = (ev[sel] & np.uint64((1 << 48) - 1)).astype(np.int64)
        X = np.column_stack([np.ones(len(sel), dtype=np.int64)] + cols).astype(np.float64)
        if np.any(X[:, 1:] < 0):
            keep = np.all(X[:, 1:] >= 0, axis=1)
            X, addr = X[keep], addr[keep]
        if len(addr) < 2:
            continue
        flat = [k for k in range(X.shape[1] - 1) if np.all(X[:, k + 1] == X[0, k + 1])]
        if flat and len(np.unique(addr)) > 1:
            k = flat[0]
            where = f"line {lines[k]}" if lines else f"level {k + 1}"
            return AffineNest(
                loops,
                (),
                f"the traced sample shows one iteration of the loop at {where} only "
                f"(trace a smaller size to tile it)",
            )
        sol, *_ = np.linalg.lstsq(X, (addr - addr[0]).astype(np.float64), rcond=None)
        c = np.rint(sol).astype(np.int64)
        if not np.array_equal(X.astype(np.int64) @ c, addr - addr[0]):
            return AffineNest(
                loops,
                (),
                f"the access at line {m.line} ({m.base.split('[')[0]}) is not an affine "
                f"function of the loop indices",
            )
        coef = tuple(int(x) for x in c[1:]) + (0,) * (len(loops) - lev - 1)
        out.append(
            AffineAccess(
                m.id, m.base.split("[")[0], m.kind, m.bytes, int(addr[0] + c[0]), coef
            )
        )
    return AffineNest(loops, tuple(out))
