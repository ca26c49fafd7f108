"""``cgpredict explain``: what drives the measured time, by a random forest beside the model.

``explain`` reads a measured file, predicts every configuration (features from cgpredict's own
analysis, ``features.py``), optionally reads Nsight Compute counters (``counters.py``), then fits
the forest (``forest.py``): leave-one-kernel-out error next to the analytical model's on the same
rows, permutation importance, PCA, partial dependence, and the configurations the analytical
model misses most with the features the forest leans on for them. ``to_text``/``to_json``
render it; ``write_outputs`` writes the feature table and the figures.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..devices import load_device
from ..prediction import Report
from . import counters as ctr
from .features import FEATURES, FeatureTable, build_table, write_csv, write_parquet
from .forest import ErrorSummary
from .measured import MeasuredError, MeasuredRow, check_enough, infer_device, read_measured

SCHEMA_VERSION = 1
TOP = 10  # features shown in the importance table
BLIND = 5  # configurations listed under "where the model is blind"
# (label, the model's feature, the counter quantity it is compared with)
COMPARED = (
    ("L2 hit rate", "l2_hit_rate", "l2_hit_rate"),
    ("L1 hit rate", "l1_hit_rate", "l1_hit_rate"),
    ("DRAM bytes", "dram_bytes", "dram_bytes"),
    ("warp instructions", "warp_insts_total", "warp_insts"),
    ("global load warp insts", "load_warp_insts", "global_load_insts"),
    ("global store warp insts", "store_warp_insts", "global_store_insts"),
    ("occupancy", "occupancy", "achieved_occupancy"),
)


@dataclass(frozen=True)
class RowResult:
    key: str
    kernel: str
    block: str
    measured_ms: float
    analytical_ms: float
    forest_loko_ms: float
    corrected_loko_ms: float  # the analytical time x exp(LOKO forest of its log error)


@dataclass(frozen=True)
class BlindSpot:
    """A configuration the analytical model misses by much, and what the forest leans on."""

    key: str
    measured_ms: float
    analytical_error_pct: float
    forest_loko_error_pct: float
    features: tuple[tuple[str, float], ...]  # (feature, mean |change of log time|)


@dataclass(frozen=True)
class CounterComparison:
    """One quantity the model predicts and ncu measured, for one configuration."""

    key: str
    quantity: str
    predicted: float
    measured: float


@dataclass(frozen=True)
class Explanation:
    measured_file: str
    measured_format: str
    device: str
    model: str
    rows: tuple[RowResult, ...]
    dropped: tuple[tuple[str, str], ...]
    features: tuple[str, ...]
    constant_features: tuple[str, ...]
    analytical: ErrorSummary
    forest: ErrorSummary  # LOKO, forest of log(measured time)
    corrected: ErrorSummary  # LOKO, model x exp(forest of the model's log error)
    importance: tuple[tuple[str, float, float], ...]
    pca_explained: tuple[float, ...]
    pca_loadings: tuple[tuple[tuple[str, float], ...], ...]  # first components, top features
    partial_dependence: tuple[tuple[str, tuple[float, ...], tuple[float, ...]], ...]  # ms
    blind: tuple[BlindSpot, ...]
    counters_file: str | None
    counter_gpu: str | None
    counter_comparison: tuple[CounterComparison, ...]
    seconds: dict[str, float]
    table: FeatureTable = field(repr=False, compare=False, default=None)  # type: ignore
    pca_scores: np.ndarray = field(repr=False, compare=False, default=None)  # type: ignore
    pca_components: np.ndarray = field(repr=False, compare=False, default=None)  # type: ignore


def port_kernels(corpus: Path, stem: str) -> set[str]:
    """The ``__global__`` function names of ``validation/cuda/<stem>.cu`` beside the corpus."""
    port = Path(corpus).resolve().parent / "validation" / "cuda" / f"{stem}.cu"
    try:
        return set(re.findall(r"__global__\s+void\s+(\w+)", port.read_text()))
    except OSError:
        return set()


def _expected_grids(rep: Report) -> set[tuple[int, int]]:
    out = set()
    for k in rep.kernels:
        bx, _, by = k.block.partition("x")
        bx, by = int(bx), int(by or 1)
        gx, gy = k.grid_threads
        out.add((max(math.ceil(gx / bx), 1), max(math.ceil(gy / by), 1)))
    return out


def match_launches(
    cf: ctr.CounterFile, row: MeasuredRow, rep: Report, corpus: Path, unique_block: bool
) -> list[ctr.Launch]:
    """The launches of a counter file that belong to one configuration: a kernel of its CUDA
    port, its block, and a grid of one of its kernels (or any grid when no other measured row
    of this kernel file has this block)."""
    names = port_kernels(corpus, row.kernel)
    bx, _, by = row.block.partition("x")
    block = (int(bx), int(by), 1)
    grids = _expected_grids(rep)
    out = []
    for ln in cf.launches:
        if names and ln.kernel not in names:
            continue
        if ln.block != block:
            continue
        if (ln.grid[0], ln.grid[1]) in grids or unique_block:
            out.append(ln)
    return out


def _counter_columns(q: dict[str, float]) -> dict[str, float]:
    return {f"ctr_{k}": v for k, v in q.items()}


def _device_name(measured: Path, mset, device: str | None) -> str:
    """The GPU the measurements are of: ``device``, else the one the file names; one line
    when it cannot be told or the rows are of another."""
    dev_name = device or infer_device(mset)
    if dev_name is None:
        raise MeasuredError(f"{measured}: cannot tell which GPU it measured: give --device")
    other = sorted({r.device for r in mset.rows if r.device and r.device != dev_name})
    if other:
        raise MeasuredError(
            f"{measured}: rows for device {', '.join(other)}, but explaining {dev_name}"
        )
    return dev_name


def _counter_files(counters: Path | None, mset, dev_name: str,
                   gpu_name: str) -> dict[str, ctr.CounterFile]:
    """The counter files by the rows' names ("" for ``counters``), each checked to be of
    the explained GPU."""
    files: dict[str, ctr.CounterFile] = {}
    if counters is not None:
        files[""] = ctr.read_counters(counters)
    for r in mset.rows:
        if r.counters_csv and r.counters_csv not in files:
            files[r.counters_csv] = ctr.read_counters(Path(r.counters_csv))
    for cf in files.values():
        ctr.check_gpu(cf, dev_name, gpu_name)
    return files


def _check_table(measured: Path, table: FeatureTable) -> None:
    """One line when too few configurations, or one kernel only, could be predicted."""
    if len(table.data) < 5:
        raise MeasuredError(
            f"{measured}: only {len(table.data)} configuration(s) could be predicted; explain "
            f"needs at least 5 (dropped: {'; '.join(f'{k}: {w}' for k, w in table.dropped)})"
        )
    kernels = np.unique(table.groups)
    if len(kernels) < 2:
        raise MeasuredError(f"{measured}: one kernel only ({kernels[0]}); explain needs two")


def _dependence(fr, full, X, names, importance) -> list[tuple[str, tuple, tuple]]:
    """The partial dependence of the time on the three most important features."""
    pdp = []
    for name, _, _ in importance[:3]:
        grid, avg = fr.partial_dependence(full, X, names.index(name))
        pdp.append((name, tuple(float(g) for g in grid), tuple(float(v) for v in np.exp(avg))))
    return pdp


def _blind_spots(fr, table: FeatureTable, meas, pred, loko, full, X, names) -> list[BlindSpot]:
    """The configurations the analytical model misses most, with the forest's error and
    the features it leans on for each (``fr``: the forest module)."""
    ana_err = np.abs(np.log(pred / meas))
    blind = []
    for i in np.argsort(-ana_err, kind="stable")[:BLIND]:
        blind.append(
            BlindSpot(
                str(table.data["key"][i]),
                float(meas[i]),
                float(100 * (pred[i] - meas[i]) / meas[i]),
                float(100 * (loko[i] - meas[i]) / meas[i]),
                tuple(fr.local_reliance(full, X, int(i), names)),
            )
        )
    return blind


def explain(
    measured: Path,
    device: str | None = None,
    corpus: Path = Path("polybench_c"),
    model: str = "cgpredict",
    counters: Path | None = None,
    progress=None,
    jobs: int = 1,
) -> Explanation:
    """The whole report (see the module docstring)."""
    from . import forest as fr  # needs scikit-learn

    t0 = time.perf_counter()
    mset = read_measured(measured, corpus)
    check_enough(mset)
    dev_name = _device_name(measured, mset, device)
    dev = load_device(dev_name)
    gpu_name = dev.provenance.gpu_name if dev.provenance else ""
    files = _counter_files(counters, mset, dev_name, gpu_name)
    blocks_seen: dict[tuple[str, str], int] = {}
    for r in mset.rows:
        blocks_seen[(r.kernel, r.block)] = blocks_seen.get((r.kernel, r.block), 0) + 1
    quantities: dict[str, dict[str, float]] = {}

    def counter_features(row: MeasuredRow, rep: Report) -> dict[str, float]:
        cf = files.get(row.counters_csv or "") or files.get("")
        if cf is None:
            return {}
        unique = blocks_seen[(row.kernel, row.block)] == 1
        launches = match_launches(cf, row, rep, corpus, unique)
        if not launches:
            return {}
        scale = row.counter_scale if row.counters_csv else 1.0
        q = ctr.totals(launches, scale)
        quantities[row.key] = q
        return _counter_columns(q)

    table, kept = build_table(
        mset.rows, dev, dev_name, corpus, model, progress, counter_features if files else None,
        jobs,
    )
    t_features = time.perf_counter() - t0
    _check_table(measured, table)
    if progress:
        progress("fitting the forest")
    X_all = table.matrix()
    keep = fr.usable_columns(X_all)
    names = tuple(n for n, k in zip(table.features, keep) if k)
    constant = tuple(n for n, k in zip(table.features, keep) if not k)
    X = X_all[:, keep]
    meas = table.data["measured_ms"]
    y = np.log(meas)
    pred = table.data["predicted_ms"]
    loko = np.exp(fr.loko_predictions(X, y, table.groups))
    # the same forest on the analytical model's log error: it extrapolates through the model
    resid = np.log(meas / pred)
    hybrid = pred * np.exp(fr.loko_predictions(X, resid, table.groups))
    full = fr.make_forest().fit(X, y)
    importance = fr.permutation_importance(full, X, y, names)
    p = fr.pca(X, names)
    pdp = _dependence(fr, full, X, names, importance)
    blind = _blind_spots(fr, table, meas, pred, loko, full, X, names)
    comparison = _compare(table, quantities, dev.warp_size)
    rows = tuple(
        RowResult(str(r["key"]), str(r["kernel"]), str(r["block"]), float(r["measured_ms"]),
                  float(r["predicted_ms"]), float(lk), float(hy))
        for r, lk, hy in zip(table.data, loko, hybrid)
    )
    t_end = time.perf_counter()
    gpus = sorted({cf.gpu for cf in files.values()})
    return Explanation(
        str(measured), mset.fmt, dev_name, model, rows, mset.skipped + table.dropped, names,
        constant,
        fr.errors(pred, meas), fr.errors(loko, meas), fr.errors(hybrid, meas), tuple(importance),
        p.explained, tuple(tuple(p.top_loadings(c)) for c in range(min(3, len(p.explained)))),
        tuple(pdp), tuple(blind), str(counters) if counters else None,
        ", ".join(gpus) or None, comparison,
        {"features": t_features, "forest": t_end - t0 - t_features, "total": t_end - t0},
        table, p.scores, p.loadings,
    )


def _compare(
    table: FeatureTable, quantities: dict[str, dict[str, float]], warp_size: int
) -> tuple[CounterComparison, ...]:
    """Every COMPARED quantity of every configuration with counters (per-thread loads and
    stores turned into warp instructions, as ncu counts them)."""
    out = []
    for rec in table.data:
        q = quantities.get(str(rec["key"]))
        if not q:
            continue
        warps_per_thread = 1.0 / warp_size
        model = {n: float(rec[n]) for n in FEATURES}
        model["load_warp_insts"] = model["load_per_thread"] * model["threads_total"] * (
            warps_per_thread)
        model["store_warp_insts"] = model["store_per_thread"] * model["threads_total"] * (
            warps_per_thread)
        for label, feat, quantity in COMPARED:
            if quantity in q:
                out.append(CounterComparison(str(rec["key"]), label, model[feat], q[quantity]))
    return tuple(out)


def _ms(x: float) -> str:
    return f"{x:.4g}"


def to_text(e: Explanation) -> str:
    """The report as plain text."""
    lines = [
        f"explain: {len(e.rows)} measured configurations of {len({r.kernel for r in e.rows})} "
        f"kernels ({e.measured_file}, {e.measured_format}) on {e.device}, "
        f"{e.model} model; {len(e.features)} features",
    ]
    for key, why in e.dropped:
        lines.append(f"  not predicted: {key}: {why}")
    if e.constant_features:
        lines.append(f"  constant over these rows (not used): {', '.join(e.constant_features)}")
    lines += [
        "",
        "Error on the same rows (forests: leave-one-kernel-out, each kernel predicted by forests "
        "trained on the other kernels only):",
        f"  {'':34s} {'MAPE %':>8s} {'median %':>9s} {'gmean factor':>13s}",
    ]
    for label, err in (
        ("analytical model", e.analytical),
        ("forest of log time (LOKO)", e.forest),
        ("model x forest of its error (LOKO)", e.corrected),
    ):
        lines.append(f"  {label:34s} {err.mape_pct:8.1f} {err.median_ape_pct:9.1f} "
                     f"{err.gmean_factor:13.2f}")
    lines += [
        "",
        f"  {'configuration':24s} {'measured':>9s} {'model':>9s} {'forest':>9s} "
        f"{'corrected':>9s}  (ms)",
    ]
    for r in e.rows:
        lines.append(f"  {r.key:24s} {_ms(r.measured_ms):>9s} {_ms(r.analytical_ms):>9s} "
                     f"{_ms(r.forest_loko_ms):>9s} {_ms(r.corrected_loko_ms):>9s}")
    lines += ["", "Permutation importance (increase in squared error of log time, all rows):"]
    for name, mean, std in e.importance[:TOP]:
        lines.append(f"  {name:26s} {mean:8.4f} +- {std:.4f}  {FEATURES.get(name, name)}")
    lines += ["", "PCA of the standardised features: explained variance "
              + " ".join(f"PC{i + 1} {v:.0%}" for i, v in enumerate(e.pca_explained[:5]))]
    for i, loads in enumerate(e.pca_loadings):
        lines.append(f"  PC{i + 1}: " + ", ".join(f"{n} {v:+.2f}" for n, v in loads))
    lines += ["", "Partial dependence of the forest's time on the top features "
              "(geometric mean over the rows, ms):"]
    for name, grid, ms in e.partial_dependence:
        pts = ", ".join(f"{g:.3g}->{m:.3g}" for g, m in zip(grid, ms))
        lines.append(f"  {name}: {pts}")
    lines += ["", "Where the analytical model is blind (largest errors) and what the forest "
              "leans on there (mean |change of log time| when the feature takes other rows' "
              "values):"]
    for b in e.blind:
        feats = ", ".join(f"{n} {v:.2f}" for n, v in b.features)
        lines.append(f"  {b.key:24s} measured {_ms(b.measured_ms)} ms, model "
                     f"{b.analytical_error_pct:+.0f}%, forest (LOKO) "
                     f"{b.forest_loko_error_pct:+.0f}%: {feats}")
    if e.counter_gpu:
        lines += ["", f"Hardware counters ({e.counter_gpu}): measured / predicted over the "
                  f"{len({c.key for c in e.counter_comparison})} configurations with counters "
                  f"(median, min, max; every row in --json)"]
        if not e.counter_comparison:
            lines.append("  no profiled launch matches a measured configuration")
        for label, *_ in COMPARED:
            ratios = [c.measured / c.predicted for c in e.counter_comparison
                      if c.quantity == label and c.predicted]
            if ratios:
                lines.append(f"  {label:24s} {np.median(ratios):8.3g} {min(ratios):8.3g} "
                             f"{max(ratios):8.3g}")
        used = [n for n in e.features if n.startswith("ctr_")]
        lines.append(f"  counters used as forest features: {', '.join(used) or 'none'}")
    s = e.seconds
    lines += ["", f"{s['total']:.1f} s ({s['features']:.1f} s predicting the configurations, "
              f"{s['forest']:.1f} s the forest)"]
    return "\n".join(lines) + "\n"


def to_json(e: Explanation) -> str:
    d = asdict(e)
    for k in ("table", "pca_scores", "pca_components"):
        d.pop(k, None)
    d["features_table"] = [
        {n: (v.item() if hasattr(v, "item") else v) for n, v in zip(rec.dtype.names, rec)}
        for rec in e.table.data
    ] if e.table is not None else []
    d["feature_descriptions"] = {n: FEATURES.get(n, "hardware counter") for n in e.features}
    if e.pca_components is not None:  # every loading of the first three components
        d["pca_components"] = [
            {n: float(v) for n, v in zip(e.features, row)} for row in e.pca_components[:3]
        ]
    d["schema_version"] = SCHEMA_VERSION
    return json.dumps(d, indent=2, sort_keys=True)


def write_outputs(e: Explanation, out_dir: Path) -> list[Path]:
    """features.csv (and .parquet with pyarrow), the importance bar chart, the PCA biplot and
    the partial-dependence plots, in ``out_dir`` (an existing folder)."""
    out = [write_csv(e.table, out_dir / "features.csv")]
    try:
        out.append(write_parquet(e.table, out_dir / "features.parquet"))
    except ImportError:
        pass
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = e.importance[:TOP][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(top) + 1.2))
    ax.barh([t[0] for t in top], [t[1] for t in top], xerr=[t[2] for t in top], color="tab:blue")
    ax.set_xlabel("increase in squared error of log(time) when shuffled")
    ax.set_title(f"Permutation importance ({e.device}, {len(e.rows)} configurations)")
    fig.tight_layout()
    out.append(out_dir / "importance.png")
    fig.savefig(out[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 6))
    kernels = sorted({r.kernel for r in e.rows})
    cmap = plt.get_cmap("tab10")
    for i, k in enumerate(kernels):
        m = np.array([r.kernel == k for r in e.rows])
        ax.scatter(e.pca_scores[m, 0], e.pca_scores[m, 1], color=cmap(i % 10), label=k)
    load = e.pca_components[:2]
    strength = np.hypot(load[0], load[1])
    span = np.abs(e.pca_scores).max() if len(e.pca_scores) else 1.0
    for j in np.argsort(-strength)[:8]:
        ax.arrow(0, 0, load[0, j] * span, load[1, j] * span, color="grey", width=0.01 * span)
        ax.annotate(e.features[j], (load[0, j] * span * 1.08, load[1, j] * span * 1.08),
                    fontsize=8, color="dimgrey")
    ax.set_xlabel(f"PC1 ({e.pca_explained[0]:.0%})")
    ax.set_ylabel(f"PC2 ({e.pca_explained[1]:.0%})" if len(e.pca_explained) > 1 else "PC2")
    ax.set_title("PCA of the standardised features (biplot)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.append(out_dir / "pca_biplot.png")
    fig.savefig(out[-1], dpi=120)
    plt.close(fig)

    n = max(len(e.partial_dependence), 1)
    fig, axes = plt.subplots(1, n, figsize=(4 * n, 3.2), squeeze=False)
    for ax, (name, grid, ms) in zip(axes[0], e.partial_dependence):
        ax.plot(grid, ms, marker="o")
        ax.set_xlabel(name)
        ax.set_ylabel("forest time, geometric mean (ms)")
    fig.suptitle("Partial dependence (forest)")
    fig.tight_layout()
    out.append(out_dir / "partial_dependence.png")
    fig.savefig(out[-1], dpi=120)
    plt.close(fig)
    return out
