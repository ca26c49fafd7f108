"""One row of features per measured configuration, from cgpredict's own analysis.

``config_features`` is the one place that turns a prediction (a :class:`Report` with its
kernels' :class:`KernelProfile` and model results) into named numbers; add a field there and it
reaches the table, the CSV, the forest and the PCA. ``build_table`` predicts every measured row,
tracing each corpus file once (the trace and its trip-count fits are reused for every size and
block of that file), and returns a :class:`FeatureTable`: a numpy structured array.

Totals (``*_total``, ``dram_bytes``) cover every launch of every kernel of the configuration at
its work size; per-thread counts are averages over all threads of all launches; rates and model
quantities of several kernels (MWP, CWP, occupancy) are weighted by each kernel's share of the
predicted time, since the kernel that takes the time is the one that explains it.
"""

from __future__ import annotations

import concurrent.futures
import csv
import math
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..block import Block
from ..devices import GPUDevice
from ..errors import CGPredictError
from ..prediction import Report, RunOptions
from ..prepared import Prepared, prepare
from ..trace_analysis import analyze_trace
from .measured import MeasuredRow

OCC_LIMITS = ("warps", "blocks", "registers", "shared_memory")

# name -> what it is (the CSV's and the JSON's documentation of every column)
FEATURES: dict[str, str] = {
    "block_x": "block width as measured",
    "block_y": "block height as measured",
    "threads_per_block": "threads per block as measured",
    "port_restrict": "1 when the measured CUDA has __restrict__ pointers, 0 when plain",
    "kernels": "kernels (regions) of the configuration",
    "launches": "kernel launches in all",
    "threads_total": "threads of every launch",
    "coal_trans_per_warp": "L2 transactions per coalesced warp instruction",
    "uncoal_trans_per_warp": "L2 transactions per uncoalesced warp instruction",
    "const_trans_per_warp": "L2 transactions per constant-address warp instruction",
    "coal_share": "share of global warp memory instructions that are coalesced",
    "uncoal_share": "share of global warp memory instructions that are uncoalesced",
    "l1_hit_rate": "share of global warp loads served by the L1",
    "l2_hit_rate": "L2 hit rate (transaction-weighted)",
    "dram_bytes": "DRAM bytes moved (L2 misses x sector bytes, staging loads included)",
    "l2_trans_total": "L2 transactions (staging loads included)",
    "warp_insts_total": "warp instructions issued (memory + computation)",
    "comp_per_thread": "computation instructions per thread",
    "fp_per_thread": "floating-point instructions per thread",
    "sfu_per_thread": "SFU instructions per thread",
    "load_per_thread": "global loads per thread",
    "store_per_thread": "global stores per thread",
    "shared_per_thread": "shared-memory accesses per thread (staging loads included)",
    "sync_per_thread": "barriers per thread",
    "mem_share": "share of a thread's instructions that access global memory",
    "bytes_per_thread": "global bytes a thread loads and stores",
    "arith_intensity": "computation instructions per DRAM byte",
    "occupancy": "active warps / max warps per SM (time-weighted)",
    "occ_limit_warps": "time share of kernels whose occupancy the warp limit sets",
    "occ_limit_blocks": "time share of kernels whose occupancy the block limit sets",
    "occ_limit_registers": "time share of kernels whose occupancy the registers set",
    "occ_limit_shared_memory": "time share of kernels whose occupancy shared memory sets",
    "mwp": "memory warp parallelism (time-weighted)",
    "cwp": "computation warp parallelism (time-weighted)",
    "memory_bound_share": "time share of kernels the model calls memory-bound",
    "waves": "waves of resident blocks per SM (time-weighted)",
    "predicted_ms": "the analytical model's predicted time",
}


@dataclass(frozen=True)
class FeatureTable:
    """Features per measured configuration: ``data`` has one record per row, with the string
    fields ``key``, ``kernel``, ``block``, ``variant``, ``device``, ``port``, the float
    ``measured_ms`` and every name in ``features`` (``predicted_ms`` among them). ``dropped``
    names the rows that could not be predicted, with the reason."""

    data: np.ndarray
    features: tuple[str, ...]
    device: str
    model: str
    dropped: tuple[tuple[str, str], ...]
    seconds: float

    def matrix(self, names: tuple[str, ...] | None = None) -> np.ndarray:
        """The float matrix (rows x features) of ``names`` (default: every feature)."""
        names = names or self.features
        return np.column_stack([self.data[n].astype(float) for n in names])

    @property
    def groups(self) -> np.ndarray:
        """The kernel (corpus file) of every row: the groups of leave-one-kernel-out."""
        return self.data["kernel"]


def _w(values: list[float], weights: list[float]) -> float:
    total = sum(weights)
    if total <= 0:
        return sum(values) / len(values) if values else 0.0
    return sum(v * w for v, w in zip(values, weights)) / total


def _time_weighted(kernels, times: list[float]) -> dict[str, float]:
    """The per-kernel features weighted by each kernel's share of the time: occupancy and its
    limit, MWP, CWP, the memory-bound share, waves."""
    f = {"occupancy": _w([k.occupancy for k in kernels], times)}
    for lim in OCC_LIMITS:
        f[f"occ_limit_{lim}"] = _w([float(k.occupancy_limit == lim) for k in kernels], times)
    f["mwp"] = _w([k.result.mwp for k in kernels], times)
    f["cwp"] = _w([k.result.cwp for k in kernels], times)
    f["memory_bound_share"] = _w([float(k.result.bound == "memory") for k in kernels], times)
    f["waves"] = _w([k.batches for k in kernels], times)
    return f


def config_features(report: Report, row: MeasuredRow, device: GPUDevice) -> dict[str, float]:
    """The features of one configuration from its prediction (see FEATURES)."""
    blk = Block.parse(row.block)
    warp = device.warp_size
    sector = device.l2_sector_bytes
    kernels = report.kernels
    times = [k.total_ms for k in kernels]
    pats = ("coal", "uncoal", "const")
    winsts = {p: 0.0 for p in pats}
    l2 = {p: 0.0 for p in pats}
    dram = l1_served = global_loads = staged_l2 = 0.0
    threads_total = warp_total = 0.0
    per_thread = {n: 0.0 for n in ("comp", "fp", "sfu", "load", "store", "shared", "sync")}
    bytes_thread = 0.0
    for k in kernels:
        p = k.profile
        warps = math.ceil(p.threads_per_block / warp) * p.blocks * k.launches
        threads = p.threads * k.launches
        threads_total += threads
        warp_total += p.total_insts * warps
        for name in pats:
            c = getattr(p, name)
            reach = c.insts * (1.0 - c.l1_hit_fraction) * warps
            winsts[name] += c.insts * warps
            l2[name] += reach * c.l2_trans_per_warp
            dram += reach * c.dram_trans_per_warp * sector
            l1_served += c.insts * c.l1_hit_fraction * warps
        # a tiled kernel's staging loads (global -> shared): L2 sectors, compulsory DRAM
        staged_l2 += p.shared.load_l2_trans * warps
        dram += p.shared.load_dram_trans * warps * sector
        loads = sum(m.per_thread for m in k.mem if m.kind == "load" and m.pattern != "shared")
        stores = sum(m.per_thread for m in k.mem if m.kind == "store" and m.pattern != "shared")
        global_loads += loads * warps
        for name, v in (
            ("comp", p.comp_insts),
            ("fp", p.fp_insts),
            ("sfu", p.sfu_insts),
            ("load", loads),
            ("store", stores),
            ("shared", p.shared.accesses + p.shared.load_insts),
            ("sync", p.sync_insts),
        ):
            per_thread[name] += v * threads
        bytes_thread += (loads + stores) * p.bytes_per_access * threads
    mem_warps = sum(winsts.values())
    l2_total = sum(l2.values()) + staged_l2
    comp_total = per_thread["comp"]
    f: dict[str, float] = {
        "block_x": blk.x,
        "block_y": blk.y,
        "threads_per_block": blk.x * blk.y,
        "port_restrict": float(row.port == "restrict"),
        "kernels": len(kernels),
        "launches": sum(k.launches for k in kernels),
        "threads_total": threads_total,
    }
    for name in pats:
        f[f"{name}_trans_per_warp"] = l2[name] / winsts[name] if winsts[name] else 0.0
    f["coal_share"] = winsts["coal"] / mem_warps if mem_warps else 0.0
    f["uncoal_share"] = winsts["uncoal"] / mem_warps if mem_warps else 0.0
    f["l1_hit_rate"] = l1_served / global_loads if global_loads else 0.0
    f["l2_hit_rate"] = 1.0 - dram / sector / l2_total if l2_total else 0.0
    f["dram_bytes"] = dram
    f["l2_trans_total"] = l2_total
    f["warp_insts_total"] = warp_total
    for name, v in per_thread.items():
        f[f"{name}_per_thread"] = v / threads_total if threads_total else 0.0
    total_per_thread = warp_total * warp / threads_total if threads_total else 0.0
    mem_per_thread = mem_warps * warp / threads_total if threads_total else 0.0
    f["mem_share"] = mem_per_thread / total_per_thread if total_per_thread else 0.0
    f["bytes_per_thread"] = bytes_thread / threads_total if threads_total else 0.0
    f["arith_intensity"] = comp_total / dram if dram else comp_total
    f.update(_time_weighted(kernels, times))
    f["predicted_ms"] = report.total_ms
    missing = set(FEATURES) - set(f)
    assert not missing, f"config_features does not set {sorted(missing)}"
    return {n: float(f[n]) for n in FEATURES}


def predict_rows(
    rows: tuple[MeasuredRow, ...],
    device: GPUDevice,
    device_name: str,
    corpus: Path,
    model: str = "cgpredict",
    progress=None,
    jobs: int = 1,
) -> list[tuple[MeasuredRow, Report | None, str]]:
    """Predict every row: (row, report, "") or (row, None, why it failed). Each corpus file is
    traced once, at its trace size for the largest measured work size; a row below that trace
    size is traced on its own. ``jobs`` > 1 predicts that many corpus files at once, in
    forked worker processes (Linux; elsewhere one process)."""
    by_file: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_file.setdefault(r.kernel, []).append(i)
    groups = [(stem, tuple(rows[i] for i in idx)) for stem, idx in sorted(by_file.items())]
    results: dict[str, list[tuple[MeasuredRow, Report | None, str]]] = {}
    pool = _pool(min(jobs, len(groups)))
    if pool is None:
        for stem, group in groups:
            if progress:
                progress(f"predicting {stem}")
            results[stem] = _predict_file(stem, group, device, device_name, corpus, model)
    else:
        with pool:
            futs = {pool.submit(_predict_file, stem, group, device, device_name, corpus, model):
                    stem for stem, group in groups}
            for fut in concurrent.futures.as_completed(futs):
                results[futs[fut]] = fut.result()
                if progress:
                    progress(f"predicted {futs[fut]}")
    out: list = [None] * len(rows)
    for stem, idx in by_file.items():
        for i, res in zip(idx, results[stem]):
            out[i] = (rows[i], res[1], res[2])
    return out


def _pool(jobs: int):
    """A pool of ``jobs`` forked workers, or None for one process (or where fork is absent)."""
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    ctx = multiprocessing.get_context("fork")
    return concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def _predict_file(
    stem: str,
    group: tuple[MeasuredRow, ...],
    device: GPUDevice,
    device_name: str,
    corpus: Path,
    model: str,
) -> list[tuple[MeasuredRow, Report | None, str]]:
    """The rows of one corpus file, from one trace."""
    largest = max(group, key=lambda r: sorted(r.work_sizes.values(), reverse=True))
    opts = RunOptions(
        device=device_name, model=model, work_sizes=largest.work_sizes, port=largest.port
    )
    source = Path(corpus) / f"{stem}.c"
    try:
        prep = prepare(source, opts)
    except CGPredictError as exc:
        return [(r, None, _first_line(exc)) for r in group]
    with prep:  # the Prepared trace keeps its pseudo-warps for every row of a block
        return [_analyze(prep, source, r, device, opts) for r in group]


def _analyze(prep: Prepared, source: Path, row: MeasuredRow, device: GPUDevice, opts):
    o = replace(opts, work_sizes=row.work_sizes, block=Block.parse(row.block), port=row.port)
    traced = prep.trace_sizes
    below = any(row.work_sizes.get(n, v) < v for n, v in traced.items())
    fixed = traced == prep.work_sizes and dict(row.work_sizes) != prep.work_sizes
    other_port = row.port != prep.trace.header.port
    try:
        if below or fixed or other_port:
            # below the shared trace size, that trace taken at the work size (no trip-count
            # fit to scale with), or of the other port: traced on its own, as `run` would
            with prepare(source, o) as own:
                return row, own.analyze(o, device), ""
        rep = analyze_trace(prep.trace, device, o, prep.sizes, traced, dict(row.work_sizes))
    except CGPredictError as exc:
        return row, None, _first_line(exc)
    return row, rep, ""


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def build_table(
    rows: tuple[MeasuredRow, ...],
    device: GPUDevice,
    device_name: str,
    corpus: Path,
    model: str = "cgpredict",
    progress=None,
    extra: Callable[[MeasuredRow, Report], dict[str, float]] | None = None,
    jobs: int = 1,
) -> tuple[FeatureTable, list[tuple[MeasuredRow, Report]]]:
    """Predict every row and tabulate its features; ``extra(row, report)`` adds columns (the
    hardware counters), kept when every row has them. Returns the table and the (row, report)
    pairs it was built from."""
    t0 = time.perf_counter()
    results = predict_rows(rows, device, device_name, corpus, model, progress, jobs)
    kept, dropped, recs = [], [], []
    for row, rep, why in results:
        if rep is None:
            dropped.append((row.key, why))
            continue
        recs.append((row, config_features(rep, row, device), extra(row, rep) if extra else {}))
        kept.append((row, rep))
    extra_names: tuple[str, ...] = ()
    if recs:
        extra_names = tuple(sorted(set.intersection(*(set(e) for _, _, e in recs))))
    names = tuple(FEATURES) + extra_names
    dtype = [("key", "U64"), ("kernel", "U32"), ("block", "U16"), ("variant", "U16"),
             ("device", "U32"), ("port", "U8"), ("measured_ms", "f8")] + [(n, "f8") for n in names]
    data = np.zeros(len(recs), dtype=dtype)
    for j, (row, feats, ext) in enumerate(recs):
        data[j] = (row.key, row.kernel, row.block, row.variant, device_name, row.port,
                   row.measured_ms,
                   *[feats[n] for n in FEATURES], *[ext[n] for n in extra_names])
    table = FeatureTable(data, names, device.name, model, tuple(dropped),
                         time.perf_counter() - t0)
    return table, kept


def write_csv(table: FeatureTable, path: Path) -> Path:
    """The table as CSV: one header line of field names, one line per configuration."""
    names = table.data.dtype.names
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        for rec in table.data:
            w.writerow([f"{v:.6g}" if isinstance(v, float | np.floating) else v for v in rec])
    return Path(path)


def write_parquet(table: FeatureTable, path: Path) -> Path:
    """The table as Parquet (needs pyarrow)."""
    import pyarrow as pa  # optional
    import pyarrow.parquet as pq

    cols = {n: table.data[n].tolist() for n in table.data.dtype.names}
    pq.write_table(pa.table(cols), str(path))
    return Path(path)
