#!/usr/bin/env python3
"""The model's inputs of each launch against what Nsight Compute counted on the H100.

For every row of the own sets (plain ports, user kernels, restrict ports) that has an
extended ncu CSV (``validation/measured/h100-session-2026-11-27b/counters/{plain,user,
restrict}-ncu/<port>-<block>.csv``, its README), per profiled launch, the figure cgpredict's
model uses is set beside the counter. The model side is the library's: ``validate()`` at the
measured configuration (the measured registers, timer, tile copy), each kernel's
``KernelReport.profile`` (its first launch, what ``run --json`` prints) and
``result.bounds`` (``models/bounds.py``); the ncu side is the first launch of the same kernel
name among the (at most 3) profiled ones, which are the first launches of a timed run.

Quantities (per launch; W = the launch's warps, ``LaunchGeometry.total_warps``):

* ``warp_insts``: W x (``profile.total_insts`` (memory + compute instructions per thread)
  + ``shared.accesses`` (the shared loads, each issued once however many wavefronts it
  takes) + ``shared.load_insts`` (a tiled kernel's staging loads, kept apart from the
  memory patterns)) against ``smsp__inst_executed.sum``, which counts every ``LDS`` and
  staging ``LDG`` (``..._op_shared_ld``, ``..._op_global_ld``). Before round 12 the check
  left the last two out: GEMM tiled 1024 then read 0.768 (32x32) and 0.841 (32x8), short by
  exactly ncu's 1280 ``LDS`` and 64/160 staging ``LDG`` a warp.
* ``shared_wavefronts``: W x ``profile.shared.transactions`` (the shared loads' wavefronts
  per thread: accesses times their conflict degree) against
  ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`` (the metric without ``_op_ld``
  also counts one wavefront a warp in kernels with no shared memory, and the staging
  stores). The issue bound's
  ``Bounds.warp_insts`` is W x (``total_insts`` + the wavefronts): a bank-conflicted access
  costs it an issue slot a wavefront, where ncu issues it once (and it has no slot for the
  staging loads).
* ``ld_requests``: W x (global load instructions per thread, ``loads_only()`` patterns, plus
  the staging loads ``shared.load_insts``) against
  ``l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum``.
* ``st_requests``: W x ``stores.insts`` against ``..._op_st.sum``.
* ``l1_sectors``: W x the loads' sectors per warp instruction (``sectors_per_warp``, or
  ``l2_trans_per_warp`` where unknown, at least 1) plus the staging loads' ``load_l2_trans``,
  against ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum``.
* ``l1_hit_pct``: the loads' L1-served share of those sectors (``l1_hit_fraction`` weighted
  by sectors) against ``..._op_ld_lookup_hit.sum`` over the load sectors; compared by the
  difference, flagged beyond 10 points.
* ``l2_read_sectors``: ``Bounds.l2_load_trans`` against
  ``l1tex__m_xbar2l1tex_read_sectors.sum`` (sectors the L1 reads from the L2).
* ``l2_write_sectors``: ``Bounds.l2_store_trans`` less the atomics' sectors, which ride the
  store path in the model (``AtomicCounts.trans``) but are not ncu's writes, against
  ``lts__t_sectors_srcunit_tex_op_write.sum``.
* ``dram_read_bytes`` / ``dram_write_bytes``: ``Bounds.dram_bytes`` split into the loads'
  misses and the stores' write-back (W x ``write_back_trans`` sectors, plus an atomic
  footprint each way) against ``dram__bytes_read.sum`` / ``dram__bytes_write.sum``. Read
  with care: measure.py runs ncu with its default ``--cache-control all``, which flushes the
  L2 before each profiled launch (the model's later launches find what the earlier ones
  left), and the L2 (50 MB) keeps dirty lines past the end of a launch, so ncu's write bytes
  are only what left the L2 during it.
* ``active_warps``: N, the warps resident on an SM (``ModelResult.n_warps``), against
  ``sm__warps_active.avg.pct_of_peak_sustained_active`` x 64 / 100 (achieved, over the SMs'
  active cycles).
* ``registers``: ``profile.registers_per_thread`` against ``launch__registers_per_thread``.

``python validation/counters_check.py [--sets plain user restrict] [--only NAME ...]
[--out validation/results/counters-check.md]`` predicts the rows (several minutes a set) and
writes the tables: per quantity, model / ncu per launch; the launches beyond 10 % listed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import ncu_csv

ROOT = Path(__file__).resolve().parents[1]
COUNTERS = ROOT / "validation" / "measured" / "h100-session-2026-11-27b" / "counters"
MEASURED = ROOT / "validation" / "measured"
#: set -> (measurement file, corpus, port): the own sets of docs/validation.md
SETS = {
    "plain": ("nvidia-h100-80gb-hbm3.json", "polybench_c", "plain"),
    "user": ("nvidia-h100-80gb-hbm3-user.json", "examples/user", "plain"),
    "restrict": ("nvidia-h100-80gb-hbm3-restrict.json", "polybench_c", "restrict"),
}
#: a ratio model / ncu beyond this (either way) is listed
TOLERANCE = 0.10
#: quantities compared by their difference (percentage points) instead: a hit rate near 0
#: has no meaningful ratio
POINTS = {"l1_hit_pct": 10.0}
#: warps an H100 SM holds (sm__warps_active's peak)
MAX_WARPS_PER_SM = 64


@dataclass(frozen=True)
class LaunchFigures:
    """One launch's counts, as the model uses them or as ncu counted them."""

    warp_insts: float
    shared_wavefronts: float
    ld_requests: float
    st_requests: float
    l1_sectors: float
    l1_hit_pct: float
    l2_read_sectors: float
    l2_write_sectors: float
    dram_read_bytes: float
    dram_write_bytes: float
    active_warps: float
    registers: float


QUANTITIES = tuple(f.name for f in fields(LaunchFigures))


@dataclass(frozen=True)
class LaunchCheck:
    """One profiled launch of one row: the model's figures and ncu's."""

    set_name: str
    port: str  # the corpus file (port) name
    block: str
    kernel: str
    model: LaunchFigures
    ncu: LaunchFigures
    error_pct: float | None = None  # the row's time error (validate: predicted/measured - 1)

    @property
    def row(self) -> str:
        return f"{self.set_name} {self.port} {self.block} {self.kernel}"


# ---------------------------------------------------------------- ncu side


def read_ncu(path: Path) -> list[tuple[str, dict[str, float]]]:
    """(kernel name, metric -> value) per profiled launch of an ncu ``--page raw --csv``
    file (ncu_csv.read_ncu): the name cut at its '(', a cell that is no number ('', 'n/a')
    NaN."""
    return [(launch.kernel, {k: launch.metrics.get(k, math.nan) for k in launch.cells
                             if k != "Kernel Name"}) for launch in ncu_csv.read_ncu(path)]


def ncu_figures(m: dict[str, float]) -> LaunchFigures:
    """The counters of one launch (module docstring: which metric is which quantity)."""
    ld_sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    hits = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"]
    return LaunchFigures(
        warp_insts=m["smsp__inst_executed.sum"],
        shared_wavefronts=m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
        ld_requests=m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
        st_requests=m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"],
        l1_sectors=ld_sectors,
        l1_hit_pct=100.0 * hits / ld_sectors if ld_sectors > 0 else 0.0,
        l2_read_sectors=m["l1tex__m_xbar2l1tex_read_sectors.sum"],
        l2_write_sectors=m["lts__t_sectors_srcunit_tex_op_write.sum"],
        dram_read_bytes=m["dram__bytes_read.sum"],
        dram_write_bytes=m["dram__bytes_write.sum"],
        active_warps=m["sm__warps_active.avg.pct_of_peak_sustained_active"]
        * MAX_WARPS_PER_SM / 100.0,
        registers=m["launch__registers_per_thread"],
    )


# ---------------------------------------------------------------- model side


def model_figures(kernel, sector_bytes: int) -> LaunchFigures:
    """The figures the model uses for ``kernel``'s (a ``KernelReport``) first launch:
    its profile per thread times the launch's warps, and its bounds (models/bounds.py)."""
    prof, res = kernel.profile, kernel.result
    b = res.bounds
    warps = float(res.details.geometry.total_warps)
    loads = prof.loads_only()
    pats = (loads.coal, loads.uncoal, loads.const)
    sectors = [p.insts * max(p.sectors_per_warp or p.l2_trans_per_warp, 1.0) for p in pats]
    hit = sum(s * p.l1_hit_fraction for s, p in zip(sectors, pats))
    staged = prof.shared.load_l2_trans
    ld_sectors = sum(sectors) + staged
    write = warps * prof.stores.write_back_trans * sector_bytes + prof.atomics.footprint_bytes
    values = (
        warps * issued_insts(prof),
        warps * prof.shared.transactions,
        warps * (loads.mem_insts + prof.shared.load_insts),
        warps * prof.stores.insts,
        warps * ld_sectors,
        100.0 * hit / ld_sectors if ld_sectors > 0 else 0.0,
        b.l2_load_trans,
        b.l2_store_trans - warps * prof.atomics.trans,  # the stores' (atomics ride along)
        b.dram_bytes - write,
        write,
        res.n_warps,
        prof.registers_per_thread,
    )
    return LaunchFigures(*(float(v) for v in values))


def issued_insts(prof) -> float:
    """Warp instructions a thread's warp issues, as ``smsp__inst_executed`` counts them:
    its memory and compute instructions, each shared load once, and the staging loads."""
    return prof.total_insts + prof.shared.accesses + prof.shared.load_insts


def _base_name(name: str) -> str:
    """A port's kernel name as the C names it: no ``void``, template arguments or
    ``_kernel`` suffix (``void mm_tiled<4096, ...>`` -> ``mm_tiled``)."""
    name = name.removeprefix("void ").split("<")[0].strip()
    return name.removesuffix("_kernel")


def pair_launches(names: list[str], launches: list[tuple[str, dict[str, float]]]
                  ) -> dict[str, dict[str, float]]:
    """Model kernel name -> the counters of its first profiled launch. A launch is the
    kernel's of the same name (or base name); the rest, in launch order, go to the kernels
    not named so far, in the report's order (the host code's: a templated port's
    ``mm_tiled`` launched for 2MM's two kernels)."""
    out: dict[str, dict[str, float]] = {}
    rest = []
    for name, metrics in launches:
        hit = next((n for n in names if n in (name, _base_name(name))), None)
        if hit is None:
            rest.append((name, metrics))
        elif hit not in out:
            out[hit] = metrics
    unnamed = [n for n in names if n not in out]
    if rest and {_base_name(n) for n, _ in rest} == {_base_name(rest[0][0])}:
        out.update(zip(unnamed, (m for _, m in rest)))  # one port kernel for several
    elif len(rest) == len(unnamed) == 1:
        out[unnamed[0]] = rest[0][1]
    return out


def launch_checks(set_name: str, port: str, block: str, report, csv_path: Path,
                  sector_bytes: int) -> list[LaunchCheck]:
    """One check per model kernel that ncu profiled (its first profiled launch)."""
    seen = pair_launches([k.name for k in report.kernels], read_ncu(csv_path))
    return [
        LaunchCheck(set_name, port, block, k.name, model_figures(k, sector_bytes),
                    ncu_figures(seen[k.name]))
        for k in report.kernels if k.name in seen
    ]


def predict_set(set_name: str, only: tuple[str, ...] = ()) -> list[tuple]:
    """(port, block, Report, time error %) of every measured row of ``set_name`` that has an
    ncu CSV, predicted as ``cgpredict validate`` predicts it."""
    from cgpredict.validate import validate

    measured, corpus, port = SETS[set_name]
    csvs = sorted((COUNTERS / f"{set_name}-ncu").glob("*.csv"))
    names = {p.stem.rsplit("-", 1)[0] for p in csvs}
    names = tuple(sorted(names & set(only) if only else names))
    if not names:
        return []
    v = validate("h100", ROOT / corpus, MEASURED / measured, only=names, port=port)
    return [(r.kernel, r.block, r.report, r.error_pct) for r in v.rows if r.report is not None]


def check_set(set_name: str, rows, sector_bytes: int) -> list[LaunchCheck]:
    """The launch checks of the predicted ``rows`` ((port, block, Report, time error %)) of
    a set."""
    out = []
    for port, block, report, error in rows:
        path = COUNTERS / f"{set_name}-ncu" / f"{port}-{block}.csv"
        if path.exists():
            out += [dataclasses.replace(c, error_pct=error) for c in
                    launch_checks(set_name, port, block, report, path, sector_bytes)]
    return out


# ---------------------------------------------------------------- the table


def ratio(model: float, ncu: float) -> float:
    """model / ncu; 1 where both are 0, inf where only ncu is 0."""
    if ncu == 0:
        return 1.0 if model == 0 else math.inf
    return model / ncu


def off(model: float, ncu: float, quantity: str = "") -> bool:
    """Beyond TOLERANCE either way, or for a POINTS quantity beyond its difference (NaN
    counters are never off)."""
    if math.isnan(ncu) or math.isnan(model):
        return False
    if quantity in POINTS:
        return abs(model - ncu) > POINTS[quantity]
    return abs(ratio(model, ncu) - 1.0) > TOLERANCE


def compared(model: float, ncu: float, quantity: str) -> float:
    """What the tables show: model / ncu, or model - ncu for a POINTS quantity."""
    return model - ncu if quantity in POINTS else ratio(model, ncu)


def _cell(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.4g}" if abs(x) < 1e6 else f"{x:.3e}"


def quantity_table(checks: list[LaunchCheck], q: str) -> list[str]:
    """One quantity's markdown table: model, ncu and their ratio per launch."""
    how = "model-ncu" if q in POINTS else "model/ncu"
    lines = [f"### {q}", "", f"| set | port | block | kernel | model | ncu | {how} |",
             "|---|---|---|---|---:|---:|---:|"]
    for c in checks:
        m, n = getattr(c.model, q), getattr(c.ncu, q)
        flag = " **" if off(m, n, q) else ""
        lines.append(f"| {c.set_name} | {c.port} | {c.block} | {c.kernel} | {_cell(m)} | "
                     f"{_cell(n)} | {_cell(compared(m, n, q))}{flag} |")
    return lines + [""]


def summary(checks: list[LaunchCheck]) -> list[str]:
    """Per quantity: how many launches are within 10 %, and the ones beyond."""
    lines = ["| quantity | within 10 % (points) | beyond (model/ncu; model-ncu points) |",
             "|---|---:|---|"]
    for q in QUANTITIES:
        bad = [c for c in checks if off(getattr(c.model, q), getattr(c.ncu, q), q)]
        listed = ", ".join(
            f"{c.set_name}/{c.port} {c.block} {c.kernel} "
            f"{_cell(compared(getattr(c.model, q), getattr(c.ncu, q), q))}" for c in bad)
        lines.append(f"| {q} | {len(checks) - len(bad)}/{len(checks)} | {listed} |")
    return lines


def worst_rows(checks: list[LaunchCheck], at_least_pct: float = 5.0) -> list[str]:
    """The rows whose time error is at least ``at_least_pct`` (largest first), each with the
    quantities of its launches beyond the tolerance."""
    rows: dict[tuple[str, str, str], list[LaunchCheck]] = {}
    for c in checks:
        if c.error_pct is not None and abs(c.error_pct) >= at_least_pct:
            rows.setdefault((c.set_name, c.port, c.block), []).append(c)
    lines = ["| set | port | block | time error % | launch quantities beyond |",
             "|---|---|---|---:|---|"]
    for (s, port, block), cs in sorted(rows.items(), key=lambda kv: -abs(kv[1][0].error_pct)):
        beyond = "; ".join(
            f"{c.kernel} {q} {_cell(compared(getattr(c.model, q), getattr(c.ncu, q), q))}"
            for c in cs for q in QUANTITIES if off(getattr(c.model, q), getattr(c.ncu, q), q))
        lines.append(f"| {s} | {port} | {block} | {cs[0].error_pct:+.1f} | {beyond} |")
    return lines


def to_markdown(checks: list[LaunchCheck]) -> str:
    """The results file: the summary, then one table per quantity (``**``: beyond 10 %)."""
    head = [
        "# The model's inputs against Nsight Compute, per launch (H100)",
        "",
        "`python validation/counters_check.py` (its docstring says how each side is counted):",
        "model / ncu for the first profiled launch of each kernel of every own-set row with an",
        "extended ncu CSV (`validation/measured/h100-session-2026-11-27b/counters/`). `**`: "
        f"beyond {TOLERANCE:.0%} ({', '.join(f'{q}: {v:g} points' for q, v in POINTS.items())}).",
        "",
        "## Summary",
        "",
    ]
    body = ["", "## The rows with the largest time errors (|error| >= 5 %)", "",
            *worst_rows(checks), "", "## Per quantity", ""]
    for q in QUANTITIES:
        body += quantity_table(checks, q)
    return "\n".join(head + summary(checks) + body)


def to_json(checks: list[LaunchCheck]) -> str:
    """Every check's figures, for a second reading without predicting again."""
    return json.dumps([{"set": c.set_name, "port": c.port, "block": c.block,
                        "kernel": c.kernel, "model": asdict(c.model), "ncu": asdict(c.ncu),
                        "error_pct": c.error_pct}
                       for c in checks], indent=1, sort_keys=True)


def from_json(text: str) -> list[LaunchCheck]:
    """The checks ``to_json`` wrote."""
    return [LaunchCheck(d["set"], d["port"], d["block"], d["kernel"],
                        LaunchFigures(**d["model"]), LaunchFigures(**d["ncu"]),
                        d.get("error_pct"))
            for d in json.loads(text)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--only", nargs="*", default=[], help="corpus file names")
    ap.add_argument("--out", type=Path, help="markdown file (default: stdout)")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    ap.add_argument("--from-json", type=Path, help="tabulate a --json file, no prediction")
    a = ap.parse_args(argv)
    if a.from_json:
        checks = from_json(a.from_json.read_text())
    else:
        from cgpredict.devices import load_device

        sector = load_device("h100").l2_sector_bytes
        checks = []
        for s in a.sets:
            checks += check_set(s, predict_set(s, tuple(a.only)), sector)
    if a.json:
        a.json.write_text(to_json(checks) + "\n")
    text = to_markdown(checks) + "\n"
    if a.out:
        a.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
