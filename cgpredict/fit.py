"""Fitting physical device parameters to measured kernel times, with leave-one-kernel-out.

Some device fields have no micro-benchmark in the measurements at hand: what one launch costs
the host timer, a kernel's first launch in a program (module loading), how long a store
transaction occupies an SM's memory path. They are fitted to measured kernel times, but only
as *physical* parameters shared by every kernel (never a factor per kernel), and the error
to state is the leave-one-kernel-out one: fit without kernel K, predict K's rows.

The fit re-predicts each measured row from the launch profiles its analysis kept
(``KernelReport.launch_profiles``): a candidate device is a ``dataclasses.replace`` of the
base one, so the traces and cache analyses are not redone. The objective is the mean
absolute log error (symmetric in over- and under-prediction); the search is a coordinate
descent over a log-spaced grid within each parameter's physical range, refined around the
best point.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .devices import GPUDevice
from .models import kernel_time, module_load_ms, predict, program_sync_ms
from .models.event_timing import event_timed_ms
from .validate import Validation, ValidationRow

__all__ = ["FIT_RANGES", "FitResult", "fit_parameters", "leave_one_kernel_out", "row_ms"]

#: physical range of each fittable field (the search never leaves it)
FIT_RANGES: dict[str, tuple[float, float]] = {
    "launch_sync_us": (0.5, 50.0),
    "first_launch_us": (0.5, 200.0),
    "dd_store_cycles": (0.25, 64.0),
    "dd_l2_cycles": (0.25, 16.0),
    "l1_request_cycles": (0.0, 4.0),  # eq. (B2r): cycles a request adds to its lines
    "l1_store_line_cycles": (0.25, 8.0),
}


@dataclass(frozen=True)
class FitResult:
    """Fitted values, the in-sample error and, per kernel, its leave-one-kernel-out error."""

    values: dict[str, float]
    in_sample_mape: float
    loko_errors_pct: dict[str, tuple[float, ...]]  # kernel -> signed % error of each row

    @property
    def loko_mape(self) -> float:
        errs = [abs(e) for es in self.loko_errors_pct.values() for e in es]
        return sum(errs) / len(errs) if errs else math.nan

    @property
    def loko_worst(self) -> tuple[str, float]:
        if not any(self.loko_errors_pct.values()):
            return "", math.nan
        k, e = max(
            ((k, e) for k, es in self.loko_errors_pct.items() for e in es),
            key=lambda ke: abs(ke[1]),
        )
        return k, e


#: fields that only add to a row's time (models/launches.py): the work is predicted once per
#: value of the other fields, and they are searched jointly, since a program of one launch
#: tells only the sum of a round trip and a module load
LAUNCH_FIELDS = ("launch_sync_us", "launch_gap_us", "first_launch_us")


def row_ms(row: ValidationRow, device: GPUDevice, model: str = "cgpredict") -> float:
    """The predicted time of a measured row on ``device`` from its kept launch profiles,
    with the launch stream of the row's host code (its ``--sync``) and one module load for
    the program (models/launches.py)."""
    return _row_from(_work(row, device, model), row, device)


def _work(row: ValidationRow, device: GPUDevice, model: str) -> tuple:
    """Per kernel of the row, (work of one launch in ms, launches it stands for) pairs."""
    return tuple(
        tuple((predict(p, device, model).time_ms, w) for p, w in k.launch_profiles)
        for k in row.report.kernels
    )


def _row_from(work: tuple, row: ValidationRow, device: GPUDevice) -> float:
    """The row's time from its kernels' work (``_work``) and ``device``'s launch costs."""
    sync = row.report.sync
    parts = [kernel_time(list(w), device, sync) for w in work]
    if row.timer == "events":  # work, queued starts, host launch waits: eq. (E1)-(E3)
        kernels = [(p.kernel_ms, round(sum(n for _, n in w))) for p, w in zip(parts, work)]
        # the first call's late part after the reset's upload, eq. (E6), and the reset's
        # dirty L2 write-back, eq. (E5), as validate predicted them
        return event_timed_ms(kernels, device, row.late_us)[0] + row.writeback_ms
    launched = sum(k.launches for k in row.report.kernels)
    once = program_sync_ms(device, sync, launched)
    return sum(p.kernel_ms + p.launch_ms for p in parts) + module_load_ms(parts) + once


@dataclass
class _Rows:
    """Rows to fit and their kernels' work, predicted once per value of the fields that are
    not launch costs (a launch cost moves no kernel's work)."""

    rows: Sequence[ValidationRow]
    model: str
    cache: dict = field(default_factory=dict)

    def loss(self, device: GPUDevice) -> float:
        """Mean absolute log error of the rows on ``device``."""
        key = tuple(getattr(device, n) for n in FIT_RANGES if n not in LAUNCH_FIELDS)
        if key not in self.cache:
            self.cache[key] = [_work(r, device, self.model) for r in self.rows]
        return sum(
            abs(math.log(_row_from(w, r, device) / r.measured_ms))
            for w, r in zip(self.cache[key], self.rows)
        ) / len(self.rows)


def _usable(rows: Sequence[ValidationRow]) -> list[ValidationRow]:
    return [r for r in rows if r.report is not None and r.measured_ms]


def _mape(rows: Sequence[ValidationRow], device: GPUDevice, model: str) -> float:
    errs = [abs(row_ms(r, device, model) / r.measured_ms - 1) for r in rows]
    return 100 * sum(errs) / len(errs)


def _effective(device: GPUDevice, name: str) -> float:
    """The value the model uses for field ``name``: an unset store cost is the L2's, an
    unset L1 store cost the store cost's."""
    value = getattr(device, name)
    if value is None and name == "dd_store_cycles":
        return device.store_cycles
    if value is None and name == "l1_store_line_cycles":
        return device.l1_store_cycles
    return value if value is not None else FIT_RANGES[name][0]


def _grid(name: str, rnd: int, around: float, prior: float, points: int = 25) -> list[float]:
    """Log-spaced candidates for ``name``: its whole range in round 0, then a band about
    ``around`` narrowing each round; the prior too where it lies inside."""
    lo, hi = FIT_RANGES[name]
    if rnd:
        step = 2.5 ** (1 / rnd)
        lo, hi = max(lo, around / step), min(hi, around * step)
    grid = [lo * (hi / lo) ** (k / (points - 1)) for k in range(points)]
    return grid + ([prior] if lo <= prior <= hi else [])


def _best(fit: _Rows, device: GPUDevice, candidates, prior: dict[str, float]) -> dict:
    """The candidate (a dict of field values) of least loss; where the rows do not tell
    values apart (a store cost no row's bound reaches), the one nearest the prior values."""
    return min(
        candidates,
        key=lambda c: (
            round(fit.loss(dataclasses.replace(device, **c)), 12),
            sum(abs(math.log(v / prior[n])) for n, v in c.items()),
        ),
    )


def fit_parameters(
    rows: Sequence[ValidationRow],
    device: GPUDevice,
    names: Sequence[str],
    model: str = "cgpredict",
    rounds: int = 3,
) -> dict[str, float]:
    """Values of the fields ``names`` that minimise the mean absolute log error on ``rows``:
    coordinate descent over log-spaced grids, each round narrower, the launch costs among
    them searched jointly on a 2-D grid (their valley runs along their sum)."""
    rows = _usable(rows)
    if not rows:
        raise ValueError("no measured row with a prediction to fit")
    for n in names:
        if n not in FIT_RANGES:
            raise ValueError(f"{n} is not a fittable field ({', '.join(FIT_RANGES)})")
    fit = _Rows(rows, model)
    current = {n: min(max(_effective(device, n), FIT_RANGES[n][0]), FIT_RANGES[n][1])
               for n in names}
    prior = dict(current)
    launch = [n for n in names if n in LAUNCH_FIELDS]
    for rnd in range(rounds):
        for n in names:
            grid = _grid(n, rnd, current[n], prior[n])
            current = _best(fit, device, [{**current, n: v} for v in grid], prior)
        for i, a in enumerate(launch):
            for b in launch[i + 1:]:
                pairs = [
                    {**current, a: x, b: y}
                    for x in _grid(a, rnd, current[a], prior[a], 13)
                    for y in _grid(b, rnd, current[b], prior[b], 13)
                ]
                current = _best(fit, device, pairs, prior)
    return {n: round(v, 3) for n, v in current.items()}


def leave_one_kernel_out(
    validation: Validation, device: GPUDevice, names: Sequence[str], model: str = "cgpredict"
) -> FitResult:
    """Fit on all rows (the values to ship), then per kernel refit without it and predict it."""
    rows = _usable(validation.rows)
    values = fit_parameters(rows, device, names, model)
    fitted = dataclasses.replace(device, **values)
    loko: dict[str, tuple[float, ...]] = {}
    for k in sorted({r.kernel for r in rows}):
        train = [r for r in rows if r.kernel != k]
        test = [r for r in rows if r.kernel == k]
        if not train:  # one kernel only: nothing to fit without it
            continue
        dev_k = dataclasses.replace(device, **fit_parameters(train, device, names, model))
        loko[k] = tuple(100 * (row_ms(r, dev_k, model) / r.measured_ms - 1) for r in test)
    return FitResult(values, _mape(rows, fitted, model), loko)
