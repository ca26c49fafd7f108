"""The SASS side of the check for code a thread runs outside its loops, weighed by path.

``sass_check.sass_per_thread`` charges the code outside a kernel's loops to every thread once
(static counts). That holds when every thread runs one path through it; it does not where
the threads split: fdtd_k1's ``if (i == 0)`` row (1 load and 1 store) against the other rows
(3 loads, 1 store), each path ending in its own ``EXIT``, and gs_k1, whose ``t == 0`` ptxas
merges into the guard's ``EXIT`` (255 of 256 threads leave there). The static count charged
both arms of fdtd_k1 to every thread (4 loads, 2 stores) and gs_k1's one thread's loop set-up,
square root and store to all 256.

Here the code outside the loops is walked path by path (``outside_paths``: from the entry,
a predicated ``EXIT`` or ``BRA`` forks, an outermost loop is entered at its header and left
after its back edge, a path through an IEEE slow-path call is dropped as ordinary operands
skip it: ``sass_counts.slow_call_blocks``), and each path is weighed by the share of threads
that run it (``path_weights``): the non-negative weights, summing to 1, under which the
paths' global loads, stores and loop entries are the C program's per thread at the traced
size (what cgpredict's trace counts: ``sass_model.ModelKernel.outside``). That is a fact of
the program's run, not of the model's instruction rules, and it changes the SASS side only
where the static count contradicts it and some weighing of the paths meets it
(``weighted_outside``): elsewhere the static count stays, and where no weighing meets it the
SASS runs other memory instructions than the C on every path (a gap of the model,
``sass_gaps``; the stores nvcc keeps across blocks, CORR's restrict means, agree since
eq. (12w)), not a split of the threads. It also counts CORR's standard deviation's
conditional store ``if (stddev[j] <= EPS) stddev[j] = 1`` (clang if-converts it into one
store) as the threads that skip it run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sass_counts import ClassCounts, SassKernel, sass_class

#: paths walked at most before the walk gives up (the static count stays)
MAX_PATHS = 4096
#: how far the static count's loads, stores or loop entries per thread may be from the C's
#: before the paths are weighed (absolute, per thread)
TOLERANCE = 0.05


@dataclass
class SassPath:
    """One path through the code outside the loops: its counts and the outermost loops it
    enters (indices into the kernel's loop list)."""

    counts: ClassCounts
    entered: tuple[int, ...]


def _top_loop_at(k: SassKernel, i: int) -> int | None:
    """The outermost loop whose instructions hold index ``i``, None outside every loop."""
    for idx, lp in enumerate(k.loops):
        if lp.parent < 0 and lp.start <= i <= lp.end:
            return idx
    return None


def outside_paths(k: SassKernel, skip: set[int] = frozenset()) -> list[SassPath] | None:
    """Every path from the kernel's entry to an ``EXIT`` through its code outside loops
    (module docstring); ``skip``: loops not walked as loops (none); None past MAX_PATHS."""
    out: list[SassPath] = []
    todo = [(0, ClassCounts(), ())]
    while todo:
        if len(out) + len(todo) > MAX_PATHS:
            return None
        i, counts, entered = todo.pop()
        while i < len(k.insts):
            lp = _top_loop_at(k, i)
            if lp is not None and lp not in skip:
                entered, i = entered + (lp,), k.loops[lp].end + 1
                continue
            inst = k.insts[i]
            if inst.slow:
                break  # the slow-path call: ordinary operands take the branch around it
            counts.add(sass_class(inst.opcode))
            op = inst.opcode.split(".")[0]
            if op == "EXIT":
                if not inst.guarded:
                    out.append(SassPath(counts, entered))
                    break
                out.append(SassPath(ClassCounts(dict(counts.counts)), entered))
            elif op == "BRA" and inst.target in k.labels:
                j = k.labels[inst.target]
                if j <= i:
                    break  # a back edge outside every loop: not a path of the thread
                if not inst.guarded:
                    i = j
                    continue
                todo.append((j, ClassCounts(dict(counts.counts)), entered))
            elif op in ("RET", "BRX", "JMX"):
                break
            i += 1
        else:
            out.append(SassPath(counts, entered))
    return out


def _signature(p: SassPath, loops: list[int]) -> list[float]:
    """A path's global loads, stores and entries of each of ``loops``."""
    return [p.counts["ld_global"], p.counts["st_global"], *(float(lp in p.entered) for lp in loops)]


def path_weights(paths: list[SassPath], loops: list[int], target: list[float]
                 ) -> np.ndarray | None:
    """Non-negative weights of ``paths``, summing to 1, whose loads, stores and entries of
    ``loops`` are ``target`` (least squares; the sum held by a heavy row), None when no such
    weights come within TOLERANCE of it (the SASS runs other memory instructions than the C
    on every path: a gap of the model, not a split of the threads). Paths of one signature
    share their weight equally (nothing tells them apart)."""
    from scipy.optimize import nnls

    sigs = [tuple(_signature(p, loops)) for p in paths]
    groups = sorted(set(sigs))
    a = np.array([list(g) + [1.0] for g in groups], dtype=float).T
    b = np.array(list(target) + [1.0], dtype=float)
    scale = np.ones(len(b))
    scale[-1] = 100.0
    w, _ = nnls(a * scale[:, None], b * scale)
    if np.any(np.abs(a @ w - b) > TOLERANCE):
        return None
    share = {g: w[n] / sigs.count(g) for n, g in enumerate(groups)}
    return np.array([share[s] for s in sigs])


def weighted_outside(k: SassKernel, loops: list[int], target: list[float]) -> ClassCounts | None:
    """The code outside ``k``'s loops per thread, its paths weighed (``path_weights``) to the
    C's loads, stores and entries of the outermost loops ``loops`` per thread (``target``),
    where the static count (every outside instruction once, each loop entered once) is more
    than TOLERANCE from them; None where it is not, where no weighing of the paths meets
    them, or where the paths cannot be walked."""
    static = [k.outside["ld_global"], k.outside["st_global"], *([1.0] * len(loops))]
    if all(abs(s - t) <= TOLERANCE for s, t in zip(static, target)):
        return None
    paths = outside_paths(k)
    if not paths:
        return None
    w = path_weights(paths, loops, target)
    if w is None:
        return None
    total = ClassCounts()
    for p, x in zip(paths, w):
        total = total.plus(p.counts, float(x))
    return total
