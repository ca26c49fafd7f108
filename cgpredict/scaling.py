"""From trace size to work size (SPEC §2.1 "trace size" vs "work size").

A trace is taken at a small problem size; the prediction is for the work size. What scales:

* **loop trip counts.** Each loop's mean trip count per entry is modelled as
  ``alpha + beta * MACRO`` for one size macro (or a constant). The model is fitted exactly on
  three runs: the trace and two cheap count-only probe runs (no memory events) whose macros
  take distinct values, so that only the true macro fits all three points. Triangular loops
  give beta = 1/2, strip-mined tile loops beta = 1/32, stencil interiors alpha = -2.
* **per-thread counts** of every block (hence of every memory instruction and operation) scale
  by the product of ``T(work) / T(trace)`` over its enclosing loops inside the thread loops;
* **threads and blocks** come from the mapped loops' trip counts at the work size;
* **launches** of a region inside a host loop scale with the same kind of model;
* **pattern shares and transactions per warp instruction** are kept per static instruction:
  they depend on strides, not on sizes;
* **cache behaviour** (DRAM transactions per warp instruction) is taken from the trace size
  with the real cache geometry. This is exact when the trace-size and work-size working sets
  relate to the L2 capacity alike, and optimistic when the work-size working set overflows an
  L2 that holds the trace-size one: choose a trace size whose per-batch working set is
  representative (the reference trace sizes of SPEC §8 do this).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .frontend.tracefile import Trace
from .instrument.irtext import global_arrays

_COMMENT = r"[ \t]*(?:/\*.*?\*/[ \t]*|//.*)?$"


_OVERRIDABLE = re.compile(
    r"^[ \t]*#[ \t]*ifndef[ \t]+([A-Za-z_]\w*)" + _COMMENT[:-1] + r"\n"
    r"[ \t]*#[ \t]*define[ \t]+\1[ \t]+(\S.*?)" + _COMMENT,
    re.M,
)


def overridable_sizes(source_text: str) -> dict[str, str]:
    """Macros a -D can override (``#ifndef N`` / ``#define N <value>``), the size macros, with
    their replacement text (``macros.evaluate_macros`` gives their values)."""
    return {m.group(1): m.group(2).strip() for m in _OVERRIDABLE.finditer(source_text)}


PROBES = 3


def probe_sizes(trace_sizes: dict[str, int], k: int) -> dict[str, int]:
    """Values of the size macros for the ``k``-th probe run (k < PROBES): three distinct
    values per macro, distinct between macros in one run, no two macros (nor, where the trace
    orders them, two ratios of macros) affinely related over the trace and the probes
    (``fit`` could not tell them apart), and the trace's order between macros kept with room
    to spare (see _group_scales: a grid-stride or triangular loop over two macros keeps
    iterating at every probe); as small as that allows, because a probe runs the whole
    program at these sizes."""
    names = sorted(trace_sizes)
    scales, design = _design(tuple(int(trace_sizes[n]) for n in names))
    return {n: scales[j] * design[k][j] for j, n in enumerate(names)}


def near_probe_sizes(trace_sizes: dict[str, int], k: int) -> dict[str, int]:
    """Values of the size macros for the ``k``-th fallback probe run, close to the trace
    size (2/5, 3/5 or 4/5 of each value, a different fraction for each of three macros in a
    run, multiples of 32 from 64 on): run when a loop was folded away at the small probes or
    not confirmed by them (a loop striding by a constant, ``k += 256``, runs once or never
    at N = 64..128)."""
    out = {}
    for j, n in enumerate(sorted(trace_sizes)):
        v = int(trace_sizes[n]) * (2 + (j + k) % PROBES) // (PROBES + 2)
        out[n] = max(v - v % 32, 32) if int(trace_sizes[n]) >= 64 else max(v, 1)
    return out


def _smallest_prime(m: int) -> int:
    """The smallest prime p >= max(m, PROBES): the modulus of _probe_design."""
    p = max(m, PROBES)
    while any(p % d == 0 for d in range(2, int(p**0.5) + 1)):
        p += 1
    return p


@functools.lru_cache(maxsize=64)
def _design(trace: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """(factor per macro, units per probe and macro). Where the trace orders at most three
    macros the units are first tried as powers of two (2, 4, 8): one macro's probe value then
    divides the larger ones', so a ratio of macros (a strided loop's N / M) is a whole trip
    count at every probe; else, and for every other trace, 2, 3, 4, ..."""
    ordered = len(set(trace)) > 1 and _smallest_prime(len(trace)) == PROBES
    tries = [True, False] if ordered else [False]
    for pow2 in tries:
        scales = _group_scales(trace, pow2)
        runs = _probe_design(trace, scales, pow2)
        if runs is not None:
            return scales, runs
    raise AssertionError("unreachable: the linear design always exists")  # pragma: no cover


def _unit(pow2: bool, i: int) -> int:
    """The i-th smallest probe unit."""
    return 2 << i if pow2 else 2 + i


def _group_scales(trace: tuple[int, ...], pow2: bool = False) -> tuple[int, ...]:
    """Per macro, the factor of its probe units. Macros of equal trace value share one
    factor, 32 (multiples of 32 of at least 64: tiled kernels stay legal and every tile loop
    iterates twice). Where the trace orders macros (``NT`` < ``N``), each larger value takes
    at least twice the largest unit over the smallest times the factor below it, so the
    larger macro stays at least twice the smaller at every probe; a value below 64 under a
    larger one (a time-step count) then starts at the largest power of two up to half its
    value instead of 32, keeping the probes small."""
    values = sorted(set(trace))
    if len(values) == 1:
        return (32,) * len(trace)
    p = _smallest_prime(len(trace))
    ratio = 2 * _unit(pow2, p - 1) // _unit(pow2, 0)
    scale: dict[int, int] = {}
    below = 0
    for v in values:
        base = 32 if v >= 64 else 1 << max(v // 2, 1).bit_length() - 1
        scale[v] = max(base, below * ratio)
        below = scale[v]
    return tuple(scale[v] for v in trace)


def _probe_design(
    trace: tuple[int, ...], scales: tuple[int, ...], pow2: bool = False
) -> tuple[tuple[int, ...], ...] | None:
    """Units per probe and macro: run k gives macro j the unit number (a_k j + b_k) mod p
    (_unit), for the smallest prime p >= max(macros, PROBES) and the first (a, b) found in a
    fixed order that meets probe_sizes' conditions (a permutation of the p smallest units per
    run, the modulus prime); p grows until one does (powers of two: p stays, else None)."""
    m = len(trace)
    p = _smallest_prime(m)
    while True:
        lines = [(a, b) for a in range(1, p) for b in range(p)]
        for combo in itertools.combinations(lines, PROBES):
            runs = tuple(tuple(_unit(pow2, (a * j + b) % p) for j in range(m))
                         for a, b in combo)
            if _separable(trace, runs, scales):
                return runs
        if pow2:
            return None
        p = _smallest_prime(p + 1)


def _separable(
    trace: tuple[int, ...], runs: tuple[tuple[int, ...], ...], scales: tuple[int, ...]
) -> bool:
    """Every macro takes PROBES distinct values over the probes, the trace's order between
    two macros is kept with the larger at least twice the smaller, and no two features (the
    macros; where the trace orders macros, also their ratios) lie on one line over the trace
    and the probes."""
    m = len(trace)
    for j in range(m):
        if len({r[j] for r in runs}) < len(runs):
            return False
    values = [[scales[j] * r[j] for j in range(m)] for r in runs]
    for i in range(m):
        for j in range(m):
            if trace[i] < trace[j] and any(v[j] < 2 * v[i] for v in values):
                return False
    cols = [[float(trace[j])] + [float(v[j]) for v in values] for j in range(m)]
    if len(set(trace)) > 1:
        cols += [[a / b for a, b in zip(cols[i], cols[j])]
                 for i in range(m) for j in range(m) if i != j]
    ones = [1.0] * len(cols[0])
    for j in range(len(cols)):
        for i in range(j):
            if np.linalg.matrix_rank(np.array([cols[i], cols[j], ones])) < 3:
                return False
    return True


@dataclass(frozen=True)
class TripModel:
    """Mean trip count per entry = alpha + beta * sizes[macro] (/ sizes[per] when ``per`` is
    set: a grid-stride loop runs N / NT times per thread); a constant when macro is None."""

    macro: str | None
    alpha: float
    beta: float
    exact: bool = True
    per: str | None = None

    def __call__(self, sizes: dict[str, int]) -> float:
        return self.alpha + (self.beta * _feature(sizes, self.macro, self.per)
                             if self.macro else 0.0)

    def needs(self) -> tuple[str, ...]:
        """The size macros this model reads."""
        return tuple(n for n in (self.macro, self.per) if n)

    @property
    def sized(self) -> bool:
        """Whether the trip count grows with a size macro: the port passes that size as a
        kernel parameter, so ptxas cannot unroll the loop whole however few its trips (12sz)."""
        return self.macro is not None and self.beta != 0.0


def _feature(sizes: dict[str, int], macro: str, per: str | None) -> float:
    """The model's variable at ``sizes``: one macro, or the ratio of two."""
    return float(sizes[macro]) / float(sizes[per]) if per else float(sizes[macro])


def mean_trips(trace: Trace) -> dict[int, float]:
    """Mean iterations of every loop per iteration of its parent (per launch of its region for
    outermost loops, per entry for the top loops of helper functions), over all launches.

    Per *parent iteration* rather than per entry: a triangular loop ``for j < i`` is not
    entered at all when i = 0, so its entries are not the parent's iterations; this way the
    product of the ratios over a nest is exactly the growth of the inner body's executions.
    Headers that run once more than the body (unrotated loops) stay affine in the sizes."""
    out = {}
    iters = trace.loop_iters.sum(axis=0) if trace.loop_iters.size else np.zeros(0)
    entries = trace.loop_entries.sum(axis=0) if trace.loop_entries.size else np.zeros(0)
    launches = launch_counts(trace)
    for lp in trace.header.loops:
        it = float(iters[lp.id]) if lp.id < len(iters) else 0.0
        if lp.parent >= 0:
            per = float(iters[lp.parent]) if lp.parent < len(iters) else 0.0
        elif lp.parent == -1:
            per = float(launches.get(lp.region, 0))
        else:
            per = float(entries[lp.id]) if lp.id < len(entries) else 0.0
        out[lp.id] = it / per if per else 0.0
    return out


def loop_keys(trace: Trace) -> dict[int, tuple[int, int, int]]:
    """(region, source line, n-th loop on that line) of every loop: stable across compilations."""
    seen: dict[tuple[int, int], int] = {}
    out = {}
    for lp in trace.header.loops:
        n = seen.get((lp.region, lp.line), 0)
        seen[(lp.region, lp.line)] = n + 1
        out[lp.id] = (lp.region, lp.line, n)
    return out


def launch_counts(trace: Trace) -> dict[int, int]:
    return {r.index: int((trace.launches["region"] == r.index).sum()) for r in trace.header.regions}


def fit(points: list[tuple[dict[str, int], float]]) -> TripModel:
    """The affine model in one macro (else in a ratio of two) through all points, exact only
    when at least one point the line did not need confirms it (see the module docstring); the
    first point is the trace's, whose value an unconfirmed model that is no line keeps."""
    ys = [y for _, y in points]
    if max(ys) - min(ys) < 1e-9:
        return TripModel(None, ys[0], 0.0)
    names = sorted(points[0][0])
    scale = max(1.0, max(abs(y) for y in ys))
    tol = 1e-6 * scale + 0.01
    single = _best_line(points, [(n, None) for n in names], scale)
    ratios = [(n, d) for n in names for d in names if n != d]
    for cand in (single, _best_line(points, ratios, scale)):
        if cand is not None and cand[1] <= tol and cand[2] >= 3:
            model = cand[0]
            alpha, beta = _snapped(points, model, tol)
            return dataclasses.replace(model, alpha=alpha, beta=beta)
    if single is None:
        return TripModel(None, float(np.mean(ys)), 0.0, exact=False)
    if _line_misses(points, single[0]):  # eq. (TX1): a line that misses is not extrapolated
        return TripModel(None, ys[0], 0.0, exact=False)
    return dataclasses.replace(single[0], exact=False)


#: an unconfirmed line farther than this from one of its points, relative, is no trend (TX1)
LINE_MISS = 0.10


def _line_misses(points, model: "TripModel") -> bool:
    """True when the best line misses one of the points by over LINE_MISS of its value, eq.
    (TX1): a trip count that is no line in the sizes (a data-dependent ``while``, Collatz's
    steps grow as log N) is then held at the first point's, the trace's, value, not carried
    along a line 64 times past the largest size it was fitted on."""
    return any(abs(model(s) - y) > LINE_MISS * max(abs(y), 1.0) for s, y in points)


def _best_line(points, features, scale: float) -> tuple[TripModel, float, int] | None:
    """(the least-squares line, its largest error, distinct x values) of the feature that
    fits best: exact fits first; among them the plainest (beta nearest 1, then smallest
    offset); None when no feature varies over the points."""
    ys = np.array([y for _, y in points])
    best, best_key = None, (float("inf"), float("inf"))
    for macro, per in features:
        xs = np.array([_feature(s, macro, per) for s, _ in points])
        if np.ptp(xs) == 0:
            continue
        beta, alpha = np.polyfit(xs, ys, 1)
        err = float(np.max(np.abs(alpha + beta * xs - ys)))
        key = (round(err / scale, 9), abs(abs(beta) - 1) + abs(alpha) / scale)
        if key < best_key:
            model = TripModel(macro, float(alpha), float(beta), per=per)
            best, best_key = (model, err, len(set(xs.tolist()))), key
    return best


def _snapped(points, model: TripModel, tol: float) -> tuple[float, float]:
    """The least-squares line's coefficients as the simple fractions they are (a trip count
    per iteration is N, N/32, (N - 1)/2, ...), when those fit as well: the growth from trace
    to work size is then the same whatever the probe sizes, not 32 plus or minus rounding
    noise that tips a reuse distance that lands exactly on the cache capacity."""
    b = float(Fraction(model.beta).limit_denominator(4096))
    a = float(Fraction(model.alpha).limit_denominator(4096))
    err = max(abs(a + b * _feature(s, model.macro, model.per) - y) for s, y in points)
    return (a, b) if err <= tol else (model.alpha, model.beta)


def _loop_points(runs, keys, key) -> list[tuple[dict[str, int], float]]:
    """(sizes, mean trips) of the loop ``key`` in every run that has it."""
    points = []
    for (sizes, t), k in zip(runs, keys):
        match = [i for i, kk in k.items() if kk == key]
        if match:
            points.append((sizes, mean_trips(t)[match[0]]))
    return points


@dataclass(frozen=True)
class SizeModel:
    """Trip-count models of every loop and launch-count models of every region."""

    trips: dict[int, TripModel]
    launches: dict[int, TripModel]
    folded: tuple[
        tuple[int, int, int], ...
    ] = ()  # (region, line, n) of loops absent at the trace size
    # global arrays: (a model per dimension, element bytes), to size them at the work size
    arrays: dict[str, tuple[tuple[TripModel, ...], int]] = field(default_factory=dict)

    @classmethod
    def constant(cls, trace: Trace) -> "SizeModel":
        return cls(
            {k: TripModel(None, v, 0.0) for k, v in mean_trips(trace).items()},
            {k: TripModel(None, v, 0.0) for k, v in launch_counts(trace).items()},
            (),
            {
                name: (tuple(TripModel(None, float(d), 0.0) for d in dims), elem)
                for name, (dims, elem) in global_arrays(trace.header.ir_text).items()
            },
        )

    def array_bytes(self, name: str, sizes: dict[str, int]) -> float | None:
        """Bytes of global array ``name`` at ``sizes``; None when unknown or not exactly
        affine in the size macros (dimension by dimension)."""
        got = self.arrays.get(name)
        if got is None or not all(m.exact for m in got[0]):
            return None
        total = float(got[1])
        for m in got[0]:
            known = all(n in sizes for n in m.needs())
            total *= max(m(sizes), 0.0) if known else math.nan
        return None if math.isnan(total) else total

    @classmethod
    def from_runs(cls, runs: list[tuple[dict[str, int], Trace]]) -> "SizeModel":
        """Fit every loop of the first run's trace on all runs (a loop they do not confirm,
        on the trace and the runs after the first PROBES alone: the fallback probes near the
        trace size, when there are). Loops are matched across runs by region and source line
        (their ids change when the compiler folds a loop away at one size); a loop of another
        run with no partner in the first is reported."""
        first = runs[0][1]
        keys = [loop_keys(t) for _, t in runs]
        trips: dict[int, TripModel] = {}
        for lp in first.header.loops:
            key = keys[0][lp.id]
            points = _loop_points(runs, keys, key)
            # a loop the probes folded away keeps its trace count, unconfirmed
            trips[lp.id] = (fit(points) if len(points) > 1
                            else TripModel(None, points[0][1], 0.0, exact=len(runs) == 1))
            if not trips[lp.id].exact and len(runs) > 1 + PROBES:
                # the fallback probes near the trace size (near_probe_sizes) alone
                near = _loop_points([runs[0]] + runs[1 + PROBES:], [keys[0]] + keys[1 + PROBES:],
                                    key)
                if len(near) > 1 and fit(near).exact:
                    trips[lp.id] = fit(near)
        launches = {
            r.index: fit([(s, launch_counts(t)[r.index]) for s, t in runs])
            for r in first.header.regions
        }
        known = set(keys[0].values())
        missing = sorted({kk for k in keys[1:] for kk in k.values()} - known)
        layouts = [global_arrays(t.header.ir_text) for _, t in runs]
        arrays = {}
        for name, (dims, elem) in layouts[0].items():
            seen = [(s, lay[name][0]) for (s, _), lay in zip(runs, layouts)
                    if name in lay and len(lay[name][0]) == len(dims)]
            if len(seen) == len(runs):
                arrays[name] = (
                    tuple(fit([(s, float(d[i])) for s, d in seen]) for i in range(len(dims))),
                    elem,
                )
        return cls(trips, launches, tuple(missing), arrays)

    def inexact(self) -> list[int]:
        return [k for k, m in self.trips.items() if not m.exact]
