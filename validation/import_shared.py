#!/usr/bin/env python3
"""Copy the shared GPU measurements into validation/measured/ in measure.py's format.

The shared measurements, copied into ``validation/measured/raw/`` (see its README), hold
real run times of the PolyBench/GPU CUDA kernels as distributed (plain ``float *``
parameters, no ``__restrict__``) on an H100 SXM5 and, published, on a Jetson TK1. This
script maps each benchmark to its corpus file and size macros and writes
``validation/measured/h100.json`` and ``tk1.json`` with the provenance of every row, so
``cgpredict validate --device h100|tk1`` compares with them.

    python validation/import_shared.py [--shared validation/measured/raw]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cgpredict.stats.measured import OTHER_LAUNCHES

ROOT = Path(__file__).resolve().parents[1]

#: how the PolyBench/GPU host code waits for its launches (CUDA/*/*.cu of the PolyBench-ACC
#: distribution): every benchmark calls cudaThreadSynchronize() after each launch, except MVT
#: (its two kernels are launched back to back, then one synchronisation) and 3DCONV (its
#: host loop of launches is followed by one synchronisation); cgpredict run --sync
SYNC = {"MVT": "end", "3DCONV": "end"}

#: benchmark name -> (corpus file stem, size macros set to the measured size, fixed macros)
BENCHES = {
    "2DCONV": ("2dconv", ("NI", "NJ"), {}),
    "ATAX": ("atax", ("NX", "NY"), {}),
    "CORR": ("corr", ("M", "N"), {}),
    "FDTD-2D": ("fdtd2d", ("NX", "NY"), {"TMAX": 100}),
    "GEMM": ("gemm", ("NI", "NJ", "NK"), {}),
    "MVT": ("mvt", ("N",), {}),
    "SYRK": ("syrk", ("NI", "NJ"), {}),
    "GEMVER": ("gemver", ("N",), {}),
}
H100_GPU = {
    "name": "NVIDIA H100 80GB HBM3 (SXM5)",
    "sm_count": 132,
    "sm_clock_mhz": 1980,
    "driver": "580",
}
H100_PROVENANCE = (
    "shared/measurements/h100-polybench-gpu.jsonl: PolyBench/GPU 1.0 CUDA as distributed "
    "(float * parameters, no __restrict__), nvcc 13.0 -O3 -arch=sm_90, H100 SXM5 at 1980 MHz; "
    "host clock around the launches and the final synchronisation (launch costs included), "
    "median of runs 2-4 of 4"
)
TILING_PROVENANCE = (
    "shared/measurements/h100-gemm-tiling.jsonl: GEMM naive PolyBench/GPU body vs the "
    "textbook 32x32 shared-memory tiled kernel, n = 2048, median of 5 timed launches (cudaEvent)"
)
TK1_PROVENANCE = (
    "shared/measurements/tk1-paper-table4-subset.json: Jetson TK1 (GK20A, 852 MHz), "
    "PolyBench/GPU CUDA without __restrict__, published in Wang, Zhong, Mitra, ACM TECS 2017, "
    "Table 4; 2-D grids 32x32 blocks, 1-D 256x1"
)


def _entry(
    bench: str, size: int, block: str, ms: float, provenance: str, timer: str = "host", **extra
) -> dict:
    """One measured row; ``timer``: "host" (a host clock around the launches and the final
    synchronisation: launch costs and module loading included) or "events" (cudaEvents
    around one launch: the GPU's work alone)."""
    stem, names, fixed = BENCHES[bench]
    work = {n: size for n in names} | fixed
    return {
        "kernel": stem,
        "config": block,
        "work_sizes": work,
        "port": "plain",
        "sync": SYNC.get(bench, "each"),
        "timer": timer,
        "result": {"total_ms": ms, **extra},
        "provenance": provenance,
    }


def h100_entries(shared: Path) -> list[dict]:
    out = []
    for line in (shared / "h100-polybench-gpu.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        block = f"{r['block_x']}x{r['block_y']}"
        if (r["bench"], r["variant"], block) in OTHER_LAUNCHES:  # not the corpus mapping
            continue
        out.append(
            _entry(
                r["bench"],
                r["size"],
                block,
                r["kernel_ms_median"],
                H100_PROVENANCE,
                all_ms=r["kernel_ms_all"],
                variant=r["variant"],
            )
        )
    for line in (shared / "h100-gemm-tiling.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        block = f"{r['block'][0]}x{r['block'][1]}"
        e = _entry("GEMM", r["n"], block, r["ms"], TILING_PROVENANCE, timer="events",
                   variant=r["variant"])
        if r["variant"] == "smem32":  # the textbook kernel: gemm_tiled.c's tiles, each
            e["kernel"] = "gemm_tiled"  # thread copying its element (not the staging loop)
            e["copy"] = "thread"
        out.append(e)
    return out


def tk1_entries(shared: Path) -> list[dict]:
    data = json.loads((shared / "tk1-paper-table4-subset.json").read_text())
    return [
        _entry(b, r["work"], "32x32" if r["grid"] == 2 else "256x1", r["measured_ms"],
               TK1_PROVENANCE)
        for b, r in data.items()
    ]


def _document(gpu: dict, entries: list[dict], source: str) -> dict:
    return {
        "schema_version": 1,
        "gpu": gpu,
        "imported_from": source,
        "timing": "see each row's provenance",
        "results": entries,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT / "validation" / "measured" / "raw")
    ap.add_argument("--out", type=Path, default=ROOT / "validation" / "measured")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    files = {
        "h100.json": _document(H100_GPU, h100_entries(args.shared), "h100-*.jsonl"),
        "tk1.json": _document(
            {"name": "NVIDIA Jetson TK1 (GK20A)", "sm_clock_mhz": 852},
            tk1_entries(args.shared),
            "tk1-paper-table4-subset.json",
        ),
    }
    for name, doc in files.items():
        (args.out / name).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"wrote {args.out / name}: {len(doc['results'])} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
