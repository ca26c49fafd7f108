#!/usr/bin/env python3
"""Predict the blind set before it is timed: every configuration validation/measure.py
``--set blind`` will measure, written down with the sources' hashes and the commit.

The blind kernels (examples/blind/*.c, ports in validation/cuda/blind/) were written after the
model, by engineers told not to tune them to it. This script predicts each (kernel, block,
port) exactly as ``cgpredict validate`` will predict the measured entry: the work sizes of
measure.py's plan, cudaEvent timing, the registers ptxas gives the port
(validation/port_registers.py) and the port's re-upload (validation/port_resets.py). The
output, committed before the device run, is what the measurement is judged against::

    python validation/blind_predict.py            # -> validation/results/blind/predictions.*

After the run, ``cgpredict validate --corpus examples/blind --measured ...-blind.json``
repeats the predictions next to the times; validation/blind_compare.py checks that they are
the ones committed here.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import measure  # noqa: E402  (validation/ is not a package)
from port_registers import ptxas_registers  # noqa: E402
from port_resets import reset_fields  # noqa: E402

from cgpredict.validate import predict_entries  # noqa: E402

CORPUS = ROOT / "examples" / "blind"
PORTS_DIR = HERE / "cuda" / "blind"
OUT_DIR = HERE / "results" / "blind"



#: the runs of validation/gpu_blind.sh that time the blind set: label -> measure.py arguments
#: (its BLOCKS_1D, BLOCKS_2D for the other block shapes)
RUNS = {
    "plain": ["--port", "plain"],
    "restrict": ["--port", "restrict"],
    "blocks": ["--port", "plain", "--configs-1d", "32x1,128x1,1024x1", "--configs", "16x16,64x4"],
}


def plan_entries(run: list[str], nvcc: str) -> list[dict]:
    """measure.py's plan of the blind set (``run``: its arguments) as measurement entries
    without a result."""
    args = measure._parser().parse_args(["--set", "blind", *run])
    port = args.port
    entries = []
    for p in measure.plan_ports(args):
        src = p["src"].read_text()
        defines = {k: str(v) for k, v in p["work"].items()}
        if port == "restrict":
            defines["CGP_PORT_RESTRICT"] = "1"
        regs = ptxas_registers(p["src"], defines, nvcc)
        fields = reset_fields(src, p["work"])
        for cfg in p["configs"]:
            e = {"kernel": p["name"], "config": cfg, "grid_dims": p["dims"],
                 "work_sizes": dict(p["work"]), "timer": "events", "registers": regs,
                 "reset": fields["reset"], "port": port}
            e.update(fields)  # reset_bytes, memset_bytes after port, where known
            entries.append(e)
    return entries


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _row(r, e: dict) -> dict:
    """A prediction as committed: time, binding per kernel, the inputs it took."""
    kernels = []
    if r.report is not None:
        kernels = [{"name": k.name, "kernel_ms": k.kernel_ms, "launches": k.launches,
                    "bound": k.result.bound, "binding": k.result.binding}
                   for k in r.report.kernels]
    return {"kernel": r.kernel, "config": r.block, "work_sizes": r.work_sizes,
            "predicted_ms": r.predicted_ms, "note": r.note, "registers": e["registers"],
            "reset": e["reset"], "kernels": kernels}


def predict(label: str, device: str, nvcc: str) -> dict:
    """Every planned entry of the run ``label`` (RUNS) predicted on ``device``, with
    provenance."""
    entries = plan_entries(RUNS[label], nvcc)
    port = entries[0]["port"] if entries else "plain"
    files = {f.stem: f for f in sorted(CORPUS.glob("*.c"))}
    rows = predict_entries(device, files, entries, port=port,
                           progress=lambda m: print(f"  {label}: {m}", file=sys.stderr))
    by_key = {(e["kernel"], e["config"]): e for e in entries}
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return {
        "run": label, "device": device, "port": port, "commit": commit,
        "dirty": bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                                      "cgpredict", "examples/blind", "validation/cuda/blind"],
                                     capture_output=True, text=True).stdout.strip()),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "sources": {f.name: _sha(f) for f in [*files.values(), *sorted(PORTS_DIR.glob("*.cu"))]},
        "timing": "cudaEvent pair around each launch (as validation/measure.py times)",
        "rows": [_row(r, by_key[(r.kernel, r.block)]) for r in rows],
    }


def to_markdown(preds: list[dict]) -> str:
    """One table: a row per run, kernel and block: the predicted ms and what bounds it."""
    lines = ["# The blind set: predictions made before the measurement", "",
             f"Device {preds[0]['device']}, commit {preds[0]['commit'][:10]}"
             f"{' (with uncommitted changes)' if preds[0]['dirty'] else ''}, "
             f"{preds[0]['date']}. Made by validation/blind_predict.py.", "",
             "| kernel | block | port | predicted ms | bound (binding) |",
             "|---|---|---|---:|---|"]
    for p in preds:
        for r in sorted(p["rows"], key=lambda r: (r["kernel"], r["config"])):
            ms = f"{r['predicted_ms']:.4f}" if r["predicted_ms"] else r["note"]
            bound = ", ".join(f"{x['bound']} ({x['binding']})" for x in r["kernels"])
            lines.append(f"| {r['kernel']} | {r['config']} | {p['port']} | {ms} | {bound} |")
    return "\n".join(lines) + "\n"



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="h100")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = ap.parse_args(argv)
    preds = [predict(label, args.device, args.nvcc) for label in RUNS]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "predictions.json").write_text(json.dumps(preds, indent=1) + "\n")
    (args.out_dir / "predictions.md").write_text(to_markdown(preds))
    print(f"blind_predict.py: {sum(len(p['rows']) for p in preds)} predictions in "
          f"{args.out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
