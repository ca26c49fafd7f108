"""Whether one tree's numba cache holds every compiled kernel signature another tree's holds
(issues 24 and 26: a fresh install must not compile on its first cold `run`).

Each tree is a cgpredict source tree whose numba cache sits next to its modules
(``cgpredict/**/__pycache__/*.nbi``, numba's index files: one per function, one entry per
compiled signature). Fill the first, NEED, with the commands a user runs (for instance every
corpus file's `run --json --no-cache`), the second, HAVE, as the wheel's build does
(``python -m cgpredict.numba_warm polybench_c``); this prints each function of NEED with a
signature HAVE lacks, which the first such command after an install would compile. Only the
index is read (numba's own pickle of (source stamp, {(signature, target): data file})); the
source stamps are not compared: both trees hold the same source.

    PYTHONPATH=/tmp/warm python -m cgpredict.numba_warm /tmp/warm/polybench_c
    python bench/numba_coverage.py /tmp/need-tree /tmp/warm
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path


def signatures(tree: Path) -> dict[str, set[str]]:
    """Per index file name (``module.function-line.py311.nbi``) of ``tree``'s numba cache, its
    compiled signatures as text."""
    out: dict[str, set[str]] = {}
    for index in sorted(tree.glob("cgpredict/**/__pycache__/*.nbi")):
        with open(index, "rb") as fh:
            pickle.load(fh)  # numba's version
            _stamp, overloads = pickle.loads(fh.read())
        out.setdefault(index.name, set()).update(str(key[0]) for key in overloads)
    return out


def missing(need: dict[str, set[str]], have: dict[str, set[str]]) -> dict[str, set[str]]:
    """The signatures of ``need`` that ``have`` lacks, per index file."""
    gaps = {name: sigs - have.get(name, set()) for name, sigs in need.items()}
    return {name: sigs for name, sigs in gaps.items() if sigs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("need", type=Path, help="tree whose cache the commands filled")
    ap.add_argument("have", type=Path, help="tree whose cache the build's warm-up filled")
    a = ap.parse_args(argv)
    need, have = signatures(a.need), signatures(a.have)
    gaps = missing(need, have)
    n_need = sum(len(s) for s in need.values())
    print(f"{a.need}: {len(need)} functions, {n_need} signatures; {a.have}: {len(have)} "
          f"functions; missing from {a.have}: {sum(len(s) for s in gaps.values())}")
    for name, sigs in sorted(gaps.items()):
        for sig in sorted(sigs):
            print(f"  {name}: {sig}")
    return 1 if gaps else 0


if __name__ == "__main__":
    raise SystemExit(main())
