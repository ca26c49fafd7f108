#!/usr/bin/env python3
"""The host loops of the lease of 2026-11-28 as measurement files ``validate`` reads (issue
24, fourteenth round, t2), and how each row compares with the same row of earlier leases.

``validation/gpu_loops.sh`` timed heat1d and wavefront (blind ports, plain and restrict,
32x1-1024x1) and 3DCONV (corpus port, four 2-D shapes) with the ports' host clock; its raw
output (``h100-lease-2026-11-28/loops/{blind,blind-restrict,corpus}.json``) lacks the two
annotations ``validate`` uses: ``registers`` (ptxas's count; the same kernel and port's
count in the committed set files, the build flags and work sizes being the same) and
``reset`` / ``reset_bytes`` (``port_resets.py``, read off the port's source). This writes
the annotated copies to ``h100-lease-2026-11-28/loops-measured/`` (the raw files stay as the
lease left them) and prints per row the run's total on this lease beside the committed set's
row (the blind lease of 2026-11-27 for heat1d and wavefront, 2026-11-26 and the blind lease
for 3DCONV) and the worst-rows lease's second pass (2026-11-27, session 45).

``python validation/import_lease_loops.py [--check]`` from the repository root; ``--check``
only compares, writing nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from port_resets import RESET_FROM, reset_fields  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "validation" / "measured"
LEASE = MEASURED / "h100-lease-2026-11-28"
OUT = LEASE / "loops-measured"
SET = "nvidia-h100-80gb-hbm3"
#: raw file -> (ports' folder, the committed set files of the same port and corpus)
FILES = {
    "blind.json": ("cuda/blind", (f"{SET}-blind.json", f"{SET}-blind-blocks.json")),
    "blind-restrict.json": ("cuda/blind", (f"{SET}-blind-restrict.json",)),
    "corpus.json": ("cuda", (f"{SET}.json", f"{SET}-blocks.json")),
}
WORST2 = "h100-worst2-2026-11-27/blind.json"


def _entries(path: Path) -> dict[tuple[str, str], dict]:
    """(kernel, block) -> entry of a measurement file (none if it is absent)."""
    if not path.exists():
        return {}
    return {(e["kernel"], e["config"]): e for e in json.loads(path.read_text())["results"]}


def annotate(raw: dict, src_dir: Path, committed: list[dict[tuple[str, str], dict]]) -> dict:
    """A copy of the raw lease file with each entry's ``registers`` (the committed files'
    count for the same kernel and port) and ``reset`` / ``reset_bytes`` (its port's source)."""
    regs = {k: e["registers"] for c in committed for (k, _), e in c.items() if "registers" in e}
    out = json.loads(json.dumps(raw))
    for e in out["results"]:
        if e["kernel"] in regs:
            e["registers"] = regs[e["kernel"]]
        e.update(reset_fields((src_dir / f"{e['kernel']}.cu").read_text(),
                              e.get("work_sizes", {})))
    out["registers_from"] = ("the committed set file's count for the same kernel and port "
                             "(ptxas -v, validation/port_registers.py): "
                             "validation/import_lease_loops.py")
    out["reset_from"] = RESET_FROM
    return out


def compare(name: str, raw: dict, committed: list[dict], worst2: dict) -> list[str]:
    """Markdown rows: a row's total (ms) on this lease, on the committed set's lease and on
    the worst-rows lease, and this lease's host issue time and event pairs a launch (us)."""
    rows = []
    for e in raw["results"]:
        key = (e["kernel"], e["config"])
        res = e["result"]
        n = sum(ln["count"] for ln in res["launches"])
        host = sorted(res.get("all_host_issue_ms") or [0.0])[len(res.get("all_host_issue_ms")
                                                                 or [0.0]) // 2]
        old = next((c[key]["result"]["total_ms"] for c in committed if key in c), None)
        w2 = worst2.get(key) if name == "blind.json" else None
        cells = [name.removesuffix(".json"), e["kernel"], e["config"], f"{res['total_ms']:.3f}",
                 _pct(res["total_ms"], old), _pct(res["total_ms"],
                                                  w2 and w2["result"]["total_ms"]),
                 f"{res['total_ms'] / n * 1e3:.2f}", f"{host / n * 1e3:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _pct(new: float, old: float | None) -> str:
    """``old`` ms and the new row's change from it."""
    return "-" if not old else f"{old:.3f} ({(new / old - 1) * 100:+.1f} %)"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = ap.parse_args(argv)
    worst2 = _entries(MEASURED / WORST2)
    print("| file | kernel | block | total ms (2026-11-28) | committed set's lease | "
          "worst-rows lease | pairs us a launch | host issue us a launch |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name, (src, sets) in FILES.items():
        raw = json.loads((LEASE / "loops" / name).read_text())
        committed = [_entries(MEASURED / s) for s in sets]
        for line in compare(name, raw, committed, worst2):
            print(line)
        if not args.check:
            OUT.mkdir(exist_ok=True)
            data = annotate(raw, ROOT / "validation" / src, committed)
            (OUT / name).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
