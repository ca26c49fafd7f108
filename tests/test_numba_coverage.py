"""bench/numba_coverage.py on hand-made numba index files: the signatures one tree's cache
holds and another's lacks, counted by hand."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "numba_coverage", Path(__file__).resolve().parents[1] / "bench" / "numba_coverage.py")
coverage = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(coverage)


def _index(tree: Path, rel: str, sigs: list[str]) -> None:
    """A numba index file as numba writes one: its version pickled, then (source stamp,
    {(signature, target key): data file name})."""
    path = tree / "cgpredict" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    overloads = {(s, ("cpu", "x86-64")): f"f.{i}.nbc" for i, s in enumerate(sigs)}
    with open(path, "wb") as fh:
        pickle.dump("0.68.1", fh)
        fh.write(pickle.dumps((b"stamp", overloads)))


def test_missing_signatures_counted_by_hand(tmp_path, capsys):
    need, have = tmp_path / "need", tmp_path / "have"
    _index(need, "__pycache__/warps.map_kernel-252.py311.nbi", ["(a,)"])
    _index(need, "__pycache__/warp_order._warp_gather-255.py311.nbi", ["(b,)", "(c,)"])
    _index(need, "memory/__pycache__/issue._distinct_lines-106.py311.nbi", ["(d,)"])
    _index(have, "__pycache__/warps.map_kernel-252.py311.nbi", ["(a,)", "(z,)"])
    _index(have, "__pycache__/warp_order._warp_gather-255.py311.nbi", ["(b,)"])
    got = coverage.missing(coverage.signatures(need), coverage.signatures(have))
    # (c,) of the gather and the whole of _distinct_lines: 2 signatures, 2 functions
    assert got == {"warp_order._warp_gather-255.py311.nbi": {"(c,)"},
                   "issue._distinct_lines-106.py311.nbi": {"(d,)"}}
    assert coverage.main([str(need), str(have)]) == 1
    assert "missing from" in capsys.readouterr().out
    assert coverage.main([str(have), str(have)]) == 0
