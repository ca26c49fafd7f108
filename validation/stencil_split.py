"""Where the 2-D stencils' 16x16 misses lie: in the kernel Nsight Compute times, or outside it.

The lease of 2026-11-28 timed 2DCONV, FDTD-2D and Jacobi-2D at 32x8, 16x16, 64x4 and 32x32
with event pairs (``nvidia-h100-80gb-hbm3-shapes.json``, ``-user-shapes.json``) and profiled
the same binaries with ncu ``--cache-control all`` (``h100-lease-2026-11-28/shapes``); its
sixth call profiled FDTD-2D's launches in sequence with ``--cache-control none`` as well
(``fdtd-seq/``). For each launch and shape this prints, in microseconds a launch:

    events   the event pair's median (and its fastest launch) at the lease's 1.98 GHz
    ncu      gpu__time_duration with the caches flushed (about 1.57 GHz)
    seq      ncu in sequence, the caches left as the previous launch left them (FDTD-2D)
    model    the model's kernel time a launch (``--model``: cgpredict.predict at work size)
    L2       the L2 read sectors from the L1, the model's (``bounds.l2_load_trans``) and ncu's

so that a row's miss splits into the kernel's (model - ncu) and the event pair's outside
(events - ncu), and each shape's step over 32x8 into the same two parts. The second table is
3DCONV's host-paced loop (``h100-lease-2026-11-28/loops/corpus.json``: 254 launches a run,
seven runs a shape, the host's issue time of each run): one least-squares slope of a run's
time on its host issue time, common to the four shapes, and an intercept a shape,

    total_ms = a_shape + b x host_issue_ms                                          (3DCONV split)

so that the shapes compare at one host pace (``a_shape + b x`` the median host time). A
third fits ncu's warp life ``m`` (stencil_shapes.py) of the fifteen 8-warp launches to a
warp's own work, read from the same counters (not a model term; docs/validation.md):

    m = m_0 + c_req x L2 requests + c_inst x instructions + c_line x DRAM lines  (life fit)

With
the model, a third table splits each program row of the lease's committed tables
(``validation/results/h100-lease-2026-11-28/{shapes,user-shapes}``) into the points of its
error that are the kernel's (model - ncu, over the run's launches) and the rest. Usage:

    python validation/stencil_split.py [--model]

(``--model``: the model's column and the third table, twenty predictions, a few minutes.)
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ncu_csv import read_ncu
from shape_terms import LAUNCHES, LEASE, SHAPES, ncu_terms
from stencil_shapes import decompose, read_rows

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MEASURED = Path(__file__).parent / "measured"
EVENTS = {"polybench_c": MEASURED / "nvidia-h100-80gb-hbm3-shapes.json",
          "examples": MEASURED / "nvidia-h100-80gb-hbm3-user-shapes.json"}
SEQ = LEASE.parent / "fdtd-seq"
LOOPS = LEASE.parent / "loops" / "corpus.json"
BILINEAR = LEASE.parent / "blind" / "plain-ncu"
RESULTS = ROOT / "validation" / "results" / "h100-lease-2026-11-28"
# a program's row: its table, kernel stem, launches a run of each of its launch labels
PROGRAMS = (("2DCONV", "shapes", "2dconv", {"2DCONV": 1}),
            ("FDTD-2D", "shapes", "fdtd2d", {"FDTD-2D k1": 500, "FDTD-2D k2": 500,
                                             "FDTD-2D k3": 500}),
            ("Jacobi-2D", "user-shapes", "jacobi2d", {"Jacobi-2D": 10}))


def event_launch(path: Path, kernel: str, shape: str) -> dict[str, float]:
    """One launch's event pair in a measured file: median and fastest, microseconds."""
    for row in json.loads(path.read_text())["results"]:
        if row["config"] != shape:
            continue
        for launch in row["result"]["launches"]:
            if launch["name"] == kernel:
                return {"median": launch["median_ms"] * 1e3, "min": launch["min_ms"] * 1e3}
    raise KeyError(f"{kernel} {shape} not in {path.name}")


def seq_launch(shape: str, kernel: str, cache: str = "none") -> float | None:
    """FDTD-2D's launch in sequence (``fdtd-seq``, ncu ``--cache-control`` cache): the median
    of its profiled launches, microseconds; None where the shape was not profiled."""
    path = SEQ / f"fdtd2d-{shape}-{cache}.csv"
    if not path.is_file():
        return None
    times = [x.metrics["gpu__time_duration.sum"] for x in read_ncu(path) if x.kernel == kernel]
    return statistics.median(times) / 1e3 if times else None


def model_launch(source: str, sizes: dict[str, int], shape: str, kernel: str
                 ) -> dict[str, float]:
    """The model's kernel time of one launch of ``kernel`` (its kernel_ms over its launches,
    us) and its L2 load sectors (``bounds.l2_load_trans``, to set beside ncu's read sectors)."""
    import cgpredict
    rep = cgpredict.predict(ROOT / source, block=shape, device="h100", sizes=sizes)
    k = next(k for k in rep.kernels if k.name == kernel)
    return {"us": k.kernel_ms * 1e3 / max(k.launches, 1),
            "l2_sectors": k.result.bounds.l2_load_trans}


def ncu_read_sectors(path: Path, kernel: str) -> float:
    """ncu's L2 read sectors from the L1 (``lts__t_sectors_srcunit_tex_op_read``), median."""
    mine = [x for x in read_ncu(path) if x.kernel in (kernel, f"{kernel}_kernel")]
    return statistics.median(x.metrics["lts__t_sectors_srcunit_tex_op_read.sum"] for x in mine)


def launch_rows(with_model: bool = False) -> list[dict[str, Any]]:
    """Every launch and shape: events, ncu, seq (FDTD-2D) and, with_model, the model."""
    rows = []
    for label, source, sizes, stem, kernel in LAUNCHES:
        events = EVENTS[source.split("/")[0]]
        for shape in SHAPES:
            n = ncu_terms(LEASE / f"{stem}-{shape}.csv", kernel)
            e = event_launch(events, kernel, shape)
            m = model_launch(source, sizes, shape, kernel) if with_model else {}
            row = {"launch": label, "shape": shape, "events": e["median"],
                   "events_min": e["min"], "ncu": n["t_us"],
                   "seq": seq_launch(shape, kernel) if "fdtd" in stem else None,
                   "model": m.get("us"), "model_l2_sectors": m.get("l2_sectors"),
                   "ncu_l2_sectors": ncu_read_sectors(LEASE / f"{stem}-{shape}.csv", kernel)}
            rows.append(row)
    return rows


def host_split(path: Path = LOOPS) -> dict[str, Any]:
    """Eq. (3DCONV split): a run's time on its host issue time, one slope b for every shape
    and an intercept each (least squares); ``at_median`` each shape at the median host time
    of all runs, ``fastest`` its fastest run."""
    runs = [(r["config"], t, h) for r in json.loads(path.read_text())["results"]
            for t, h in zip(r["result"]["all_total_ms"], r["result"]["all_host_issue_ms"])]
    shapes = sorted({s for s, _, _ in runs}, key=[s for s, _, _ in runs].index)
    a = np.zeros((len(runs), 1 + len(shapes)))
    for i, (s, _, h) in enumerate(runs):
        a[i, 0] = h
        a[i, 1 + shapes.index(s)] = 1.0
    y = np.array([t for _, t, _ in runs])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    host = statistics.median(h for _, _, h in runs)
    return {"slope": float(coef[0]), "host_ms": host,
            "intercept": dict(zip(shapes, map(float, coef[1:]))),
            "at_median": {s: float(c + coef[0] * host) for s, c in zip(shapes, coef[1:])},
            "fastest": {s: min(t for x, t, _ in runs if x == s) for s in shapes},
            "rms": float(np.sqrt(np.mean((a @ coef - y) ** 2)))}


def row_split(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each program row's error (the committed table of the lease) in two parts, points of
    the measured time: the kernel's (model - ncu, every launch of the run) and the rest,
    what the event pairs and the gaps hold outside ncu's kernel time; needs the model."""
    by = {(r["launch"], r["shape"]): r for r in rows}
    out = []
    for label, table, stem, launches in PROGRAMS:
        data = json.loads((RESULTS / table / "h100-cgpredict.json").read_text())
        for shape in SHAPES:
            row = next(x for x in data["rows"] if x["kernel"] == stem and x["block"] == shape)
            measured, predicted = row["measured_ms"] * 1e3, row["predicted_ms"] * 1e3
            kernel = sum(n * (by[(k, shape)]["model"] - by[(k, shape)]["ncu"])
                         for k, n in launches.items())
            out.append({"program": label, "shape": shape,
                        "error": 100 * (predicted - measured) / measured,
                        "kernel": 100 * kernel / measured,
                        "outside": 100 * (predicted - measured - kernel) / measured})
    return out


def life_terms(path: Path, kernel: str) -> list[float]:
    """One launch's per-warp terms for eq. (life fit): 1, L2 read and write requests, warp
    instructions executed, DRAM read bytes in 128-B lines (medians over its launches)."""
    mine = [x for x in read_ncu(path) if x.kernel in (kernel, f"{kernel}_kernel")]

    def med(metric: str) -> float:
        return statistics.median(x.metrics[metric] for x in mine)

    def size(cell: str) -> int:
        return int(np.prod([int(v) for v in cell.strip("()").split(",")]))

    warps = size(mine[0].cells["Grid Size"]) * size(mine[0].cells["Block Size"]) / 32
    requests = (med("lts__t_requests_srcunit_tex_op_read.sum")
                + med("lts__t_requests_srcunit_tex_op_write.sum"))
    return [1.0, requests / warps, med("smsp__inst_executed.sum") / warps,
            med("dram__bytes_read.sum") / warps / 128]


def life_fit(shapes: tuple[str, ...] = ("32x8", "16x16", "64x4")) -> dict[str, Any]:
    """Eq. (life fit): ncu's warp life ``m`` of each 8-warp launch as a floor plus a cost a
    request, an instruction and a DRAM line (least squares over the five launches at
    ``shapes``), and each kernel left out in turn (its rows' errors at the others' fit)."""
    rows = [(label, shape, life_terms(LEASE / f"{stem}-{shape}.csv", kernel),
             ncu_terms(LEASE / f"{stem}-{shape}.csv", kernel)["m"])
            for label, _, _, stem, kernel in LAUNCHES for shape in shapes]
    x = np.array([r[2] for r in rows])
    y = np.array([r[3] for r in rows])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    loko = {}
    for label in dict.fromkeys(r[0] for r in rows):
        keep = np.array([r[0] != label for r in rows])
        c, *_ = np.linalg.lstsq(x[keep], y[keep], rcond=None)
        loko[label] = [float(100 * (x[i] @ c - y[i]) / y[i]) for i in np.flatnonzero(~keep)]
    outside = {}  # the blind bilinear (a quarter line a warp), not in the fit
    for shape in ("32x8", "32x32"):
        path = BILINEAR / f"bilinear-{shape}.csv"
        life = decompose(read_rows(path)["bilinear"])["m"]
        outside[shape] = (float(np.array(life_terms(path, "bilinear")) @ coef), life)
    return {"coef": [float(v) for v in coef], "rows": rows, "loko": loko,
            "errors": [float(100 * (p - m) / m) for p, m in zip(x @ coef, y)],
            "bilinear": outside}


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def main(with_model: bool = False) -> None:
    """Print the two tables of docs/validation.md."""
    rows = launch_rows(with_model)
    print("| launch | shape | events median (fastest) | ncu | ncu in sequence | model | "
          "events - ncu | model - ncu | L2 read sectors, M: model / ncu |")
    print("|---|---|" + "---:|" * 7)
    for r in rows:
        model, sectors = r["model"], r["model_l2_sectors"]
        print(f"| {r['launch']} | {r['shape']} | {r['events']:.1f} ({r['events_min']:.1f}) | "
              f"{r['ncu']:.1f} | {_fmt(r['seq'])} | {_fmt(model)} | "
              f"{r['events'] - r['ncu']:+.1f} | "
              f"{_fmt(None if model is None else model - r['ncu'], '+.1f')} | "
              f"{_fmt(None if sectors is None else sectors / 1e6, '.3f')} / "
              f"{r['ncu_l2_sectors'] / 1e6:.3f} |")
    if with_model:
        print("\n| program | shape | error % | kernel (model - ncu), points | outside, points |")
        print("|---|---|---:|---:|---:|")
        for r in row_split(rows):
            print(f"| {r['program']} | {r['shape']} | {r['error']:+.1f} | {r['kernel']:+.1f} | "
                  f"{r['outside']:+.1f} |")
    f = life_fit()
    c = f["coef"]
    print(f"\nlife fit: m = {c[0]:.0f} + {c[1]:.1f} x requests + {c[2]:.1f} x instructions + "
          f"{c[3]:.0f} x DRAM lines (a warp); fit errors "
          f"{min(f['errors']):+.1f}..{max(f['errors']):+.1f} %; each kernel left out:")
    for label, errs in f["loko"].items():
        print(f"  {label}: " + " / ".join(f"{e:+.1f}" for e in errs) + " % (32x8 / 16x16 / 64x4)")
    for shape, (fit, life) in f["bilinear"].items():
        print(f"  blind bilinear {shape} (not fitted): {fit:.0f} against ncu's {life:.0f}")
    s = host_split()
    print(f"\n3DCONV: slope {s['slope']:.3f} ms of run a ms of host issue, rms "
          f"{s['rms'] * 1e3:.0f} us; at the median host time {s['host_ms']:.3f} ms:")
    for shape, t in s["at_median"].items():
        print(f"  {shape}: {t:.3f} ms ({t / 254 * 1e3:.2f} us a launch), fastest run "
              f"{s['fastest'][shape]:.3f} ms")


if __name__ == "__main__":
    main(with_model="--model" in sys.argv[1:])
