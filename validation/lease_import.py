"""A validate-ready copy of a lease's raw measurement file (issue 24, round 14).

A lease's raw ``measure.py`` JSON (e.g. ``h100-lease-2026-11-28/shapes/corpus.json``) lacks
the two fields that ``cgpredict validate`` reads from the committed files: each entry's
``registers`` (ptxas of the port: the same source, flags and nvcc as the reference file's
entry of that kernel and work sizes, so copied from it; the block shape is a launch argument
and does not change the binary) and its ``reset`` / ``reset_bytes`` (the port's reset lambda,
validation/port_resets.py). This writes a new file and never overwrites a committed one:

    python validation/lease_import.py RAW.json REFERENCE.json OUT.json [--src validation/cuda/user]

Needs no GPU. A kernel absent from the reference file is an error (one line).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from port_resets import reset_fields  # validation/ is the script's own folder

ROOT = Path(__file__).resolve().parent


def _key(e: dict) -> tuple[str, str]:
    """(kernel, sorted work sizes): what fixes a port's binary."""
    sizes = e.get("work_sizes") or {}
    return e["kernel"], " ".join(f"{k}={v}" for k, v in sorted(sizes.items()))


def annotate(raw: dict, reference: dict, src_dir: Path) -> dict:
    """``raw`` with registers (from ``reference``) and resets (from the ports) on each entry."""
    regs = {_key(e): e["registers"] for e in reference["results"] if "registers" in e}
    for e in raw["results"]:
        if _key(e) not in regs:
            raise KeyError(f"{_key(e)[0]} ({_key(e)[1]}) has no registers in the reference file")
        e["registers"] = regs[_key(e)]
        e.update(reset_fields((src_dir / f"{e['kernel']}.cu").read_text(),
                              e.get("work_sizes", {})))
    raw["registers_from"] = (f"copied from {reference.get('date', '?')}'s file of the same "
                             f"nvcc ({reference.get('registers_from', '?')})")
    raw["reset_from"] = reference.get("reset_from", "validation/port_resets.py")
    return raw


def main() -> int:
    """Write OUT; 2 with a one-line error."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", type=Path)
    ap.add_argument("reference", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--src", type=Path, default=ROOT / "cuda", help="folder of the ports")
    args = ap.parse_args()
    if args.out.exists():
        print(f"{args.out}: exists; this script never overwrites a file", file=sys.stderr)
        return 2
    try:
        data = annotate(json.loads(args.raw.read_text()), json.loads(args.reference.read_text()),
                        args.src)
    except (OSError, ValueError, KeyError) as exc:
        print(f"lease_import: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out} ({len(data['results'])} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
