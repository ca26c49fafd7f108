"""validation/launch_spans.py: a launch's cycles outside its SMs' active span (t10), against
the extended ncu counters of the lease of 2026-11-27 (second session).

Oracles: a hand-built launch's gap is elapsed less active; a correlation of a straight line
is 1 and of a constant against anything 0 (by hand); the committed counters' gap is one
constant, about 3400 cycles, for a 1-block and a 262144-block launch alike."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import launch_spans as lsp  # noqa: E402

HAVE = (ROOT / lsp.COUNTERS).is_dir()


def test_outside_is_elapsed_less_active():
    s = lsp.LaunchSpan("x", 64, 0.24, 3264, 5424.0, 2010.0, 7.9e5)
    assert s.outside == pytest.approx(3414.0)


def test_correlation_by_hand():
    assert lsp._corr([(1.0, 2.0), (2.0, 4.0), (3.0, 6.0)]) == pytest.approx(1.0)
    assert lsp._corr([(1.0, 2.0), (2.0, 1.0), (3.0, 0.0)]) == pytest.approx(-1.0)


@pytest.mark.skipif(not HAVE, reason="extended counters not in this checkout")
def test_the_gap_is_one_constant(monkeypatch):
    monkeypatch.chdir(ROOT)
    spans = lsp.launch_spans()
    kept = [s for s in spans if abs(s.outside) < 10000]
    assert len(spans) == 130 and len(kept) == 120
    single = sorted(s.outside for s in kept if s.waves < 1)
    assert 3300 < single[len(single) // 2] < 3500
    by_grid = [(math.log10(s.grid), s.outside) for s in kept]
    assert abs(lsp._corr(by_grid)) < 0.2
    gs_k1 = next(s for s in spans if s.name == "plain/gramschmidt-256x1" and s.grid == 1)
    transpose = [s for s in spans if s.name == "user/transpose-32x8"][0]
    assert abs(gs_k1.outside - transpose.outside) < 300
