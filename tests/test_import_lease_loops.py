"""validation/import_lease_loops.py: the lease of 2026-11-28's host loops annotated for
``validate`` (fourteenth round, t2).

Oracles: the ports' sources by hand (heat1d's reset ends with an upload of N = 65536 floats,
262144 B; wavefront's with the (N+1)^2 ints of H, 16793604 B; 3DCONV's with a cudaMemset);
ptxas's counts of the committed set files; the committed annotated files are what the
script writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import import_lease_loops as il  # noqa: E402


def test_each_row_gets_its_ports_reset_and_registers():
    out = {}
    for name, (src, sets) in il.FILES.items():
        raw = json.loads((il.LEASE / "loops" / name).read_text())
        data = il.annotate(raw, ROOT / "validation" / src,
                           [il._entries(il.MEASURED / s) for s in sets])
        for e in data["results"]:
            out[(name, e["kernel"])] = (e["registers"], e["reset"], e.get("reset_bytes"))
        assert data == json.loads((il.OUT / name).read_text())  # the committed copy
    assert out[("blind.json", "heat1d")] == (14, "upload", 65536 * 4)
    assert out[("blind-restrict.json", "wavefront")] == (16, "upload", 2049 * 2049 * 4)
    assert out[("corpus.json", "3dconv")] == (24, "memset", None)


def test_the_comparison_gives_each_rows_change_from_the_earlier_leases():
    """heat1d 256x1: 0.815 ms on 2026-11-28 against 1.185 in the committed blind set, -31.3 %;
    wavefront 1024x1 23.423 against 32.157 (blind lease) and 24.534 (worst-rows pass)."""
    name = "blind.json"
    raw = json.loads((il.LEASE / "loops" / name).read_text())
    lines = il.compare(name, raw, [il._entries(il.MEASURED / s) for s in il.FILES[name][1]],
                       il._entries(il.MEASURED / il.WORST2))
    heat = next(ln for ln in lines if "| heat1d | 256x1 |" in ln)
    assert "| 0.815 | 1.185 (-31.3 %) | - |" in heat
    wf = next(ln for ln in lines if "| wavefront | 1024x1 |" in ln)
    assert "| 23.423 | 32.157 (-27.2 %) | 24.534 (-4.5 %) |" in wf
