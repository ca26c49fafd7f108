#!/usr/bin/env python3
"""Host loops of short launches split into the GPU's time and the gaps between launches
(thirteenth round, t7): which of the model's terms is short on heat1d and wavefront.

For every kernel a port launches more than once in a measured run (the sources of
``loop_launches.py`` and the worst-rows leases), per launch in microseconds:

* ``pair``: the measured event pairs' sum a launch (``run_ms`` / launches), the least and
  largest repetition, the least single pair;
* ``gpu``: Nsight Compute's ``gpu__time_duration`` of the profiled launches of the same run
  (median; caches flushed, the launch alone, no queued start; the profiled launches are the
  run's first ones, so a loop of growing grids shows its smallest);
* ``gap``: pair - gpu, what of the pair is not the launch's own GPU time (the queued start,
  the event records and the GPU's wait for the host);
* the model's terms, from ``cgpredict run --json`` outputs in ``--runs DIR`` (named
  ``PROGRAM-BLOCK.json``, ``PROGRAM-BLOCK-r.json`` for the restrict port): the kernel time a
  launch (``kernel_ms`` / launches, the mean over a loop's launches), ``w`` = kernel +
  ``launch_gap_us`` and the event-timed pair of eqs. (E1)-(E4) (``event_timing``), and
  ``short`` = measured pair - model pair;
* ``host``: the host's own period a launch, the run's ``all_host_issue_ms`` (the host clock
  around each repetition's launches, validation/cuda/common.cuh since this round; median over
  the repetitions) over its launches, where the measured file has it (none of the leases
  before this round's change: ``-``).

``python validation/launch_split.py [--runs DIR] [--all] [--source JSON[:NCU_DIR]]``: heat1d and
wavefront by default, every host loop with ``--all``; ``--source`` adds a later lease's file
(gpu_loops.sh); the lease of 2026-11-28's loops are read by default. Run from the repository
root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cgpredict.device_schema import GPUDevice

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loop_launches import MEASURED, SOURCES, LoopRow, loop_rows  # noqa: E402

#: the worst-rows leases (2026-11-27, second pass): heat1d and wavefront at three blocks
WORST2 = (("h100-worst2-2026-11-27/blind.json", "h100-worst2-2026-11-27/blind-ncu"),)
#: the lease of 2026-11-28 (fourteenth round): the same loops with the host clock
#: (``all_host_issue_ms``); its ncu of the middle diagonals is read by loop_leases.py
LEASE28 = tuple((f"h100-lease-2026-11-28/loops/{f}.json", None)
                for f in ("blind", "blind-restrict", "corpus"))
PROGRAMS = ("heat1d", "wavefront")


@dataclass(frozen=True)
class Model:
    """The model's terms for one kernel of a host loop, microseconds a launch."""

    kernel_us: float  # mean GPU work of a launch (kernel_ms / launches)
    w_us: float  # kernel + launch_gap_us, eq. (E1)'s w
    pair_us: float  # the event-timed pair, eqs. (E1)-(E4)


@dataclass(frozen=True)
class Split:
    """One measured host-loop row split into GPU time and gaps, with the model's terms."""

    row: LoopRow
    gpu_us: float | None  # ncu's gpu__time_duration of the profiled launches (median)
    model: Model | None
    host_us: float | None = None  # the host's issue time a launch (all_host_issue_ms)

    @property
    def gap_us(self) -> float | None:
        """The part of the measured pair that is not the launch's own GPU time."""
        return None if self.gpu_us is None else self.row.pair_us - self.gpu_us

    @property
    def short_us(self) -> float | None:
        """Measured pair less the model's: what the model leaves out a launch."""
        return None if self.model is None else self.row.pair_us - self.model.pair_us


def host_periods(data: dict) -> dict[tuple[str, str], float]:
    """(program, block) -> the host's issue time a launch in us: the median over repetitions
    of ``all_host_issue_ms`` over the run's launches (every kernel's), where recorded."""
    out = {}
    for entry in data.get("results", []):
        res = entry.get("result") or {}
        issued = res.get("all_host_issue_ms")
        n = sum(ln.get("count", 0) for ln in res.get("launches", []))
        if issued and n > 0:
            out[(entry["kernel"], entry["config"])] = statistics.median(issued) / n * 1e3
    return out


def model_terms(run: dict, kernel: str, device: GPUDevice) -> Model | None:
    """The model's kernel time, w and event-timed pair a launch of ``kernel`` from one
    ``cgpredict run --json`` output (every kernel of the program enters the recurrence)."""
    from cgpredict.models.event_timing import event_timed_ms

    ks = run.get("kernels") or []
    mine = [k for k in ks if k.get("name") == kernel] or ks[:1]
    if not mine or not mine[0].get("launches"):
        return None
    k = mine[0]
    n = k["launches"]
    total, _ = event_timed_ms([(x["kernel_ms"], x["launches"]) for x in ks], device)
    kernel_us = k["kernel_ms"] / n * 1e3
    share = total / sum(x["launches"] for x in ks) * 1e3  # the program's mean pair
    return Model(kernel_us=kernel_us, w_us=kernel_us + device.launch_gap_us, pair_us=share)


def load_model(runs: Path | None, row: LoopRow, device: GPUDevice) -> Model | None:
    """The model's terms for a row from ``runs/PROGRAM-BLOCK[-r].json``, if present."""
    if runs is None:
        return None
    suffix = "-r" if "restrict" in row.source else ""
    path = runs / f"{row.program}-{row.block}{suffix}.json"
    if not path.exists():
        return None
    try:
        run = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return model_terms(run, row.kernel, device)


def splits(runs: Path | None, every: bool = False,
           extra: tuple[tuple[str, str | None], ...] = ()) -> list[Split]:
    """Every host-loop row of the sources and ``extra`` ((measured JSON, ncu folder or None),
    relative to validation/measured), heat1d and wavefront unless ``every``."""
    from cgpredict.devices import load_device

    device = load_device("h100")
    out = []
    for source, ncu_dir in SOURCES + WORST2 + LEASE28 + extra:
        if not (MEASURED / source).exists():
            continue
        hosts = host_periods(json.loads((MEASURED / source).read_text()))
        for row in loop_rows(source, ncu_dir):
            if every or row.program in PROGRAMS:
                out.append(Split(row=row, gpu_us=row.ncu_us, model=load_model(runs, row, device),
                                 host_us=hosts.get((row.program, row.block))))
    return out


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _line(s: Split) -> str:
    """One Markdown row of the split table."""
    r, m = s.row, s.model
    cells = [r.source, r.program, r.kernel, r.block, str(r.launches), f"{r.pair_us:.2f}",
             f"{r.rep_lo_us:.2f}-{r.rep_hi_us:.2f}", f"{r.min_us:.2f}", _f(s.gpu_us),
             _f(s.gap_us), _f(s.host_us), _f(m and m.kernel_us), _f(m and m.w_us),
             _f(m and m.pair_us), _f(s.short_us)]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, help="folder of cgpredict run --json outputs")
    ap.add_argument("--all", action="store_true", help="every host loop, not only heat1d "
                    "and wavefront")
    ap.add_argument("--source", action="append", default=[], metavar="JSON[:NCU_DIR]",
                    help="one more measured file (and its ncu folder), under "
                         "validation/measured: a later lease's gpu_loops.sh output")
    args = ap.parse_args(argv)
    extra = tuple((j, n or None) for j, _, n in (x.partition(":") for x in args.source))
    print("| source | program | kernel | block | launches | pair us | repetitions | least "
          "| ncu gpu | gap | host | model kernel | model w | model pair | short |")
    print("|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = splits(args.runs, args.all, extra)
    for s in rows:
        print(_line(s))
    ps = [s.row.pair_us for s in rows if s.row.program in PROGRAMS]
    if ps:
        print(f"\nheat1d and wavefront pairs: median {statistics.median(ps):.2f} us a launch, "
              f"{min(ps):.2f}-{max(ps):.2f} over {len(ps)} runs")


if __name__ == "__main__":
    main()
