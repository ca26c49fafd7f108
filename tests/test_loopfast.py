"""The inline loop probe (instrument/loopfast.py): a launch that is not recorded (past
--max-launches, or a count-only probe run) counts its loops on the inline path, and its block,
iteration and entry counts equal those of the same launch recorded in full, which equal the
trip counts derived by hand from the source."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from cgpredict.instrument.loopfast import PROBE, probe_call

from cgpredict.frontend.tracefile import TAG_LOOP
from cgpredict.frontend.tracer import TraceOptions, trace_program

pytestmark = pytest.mark.usefixtures("compiler")

REPS = 3
# a 3-deep triangular nest whose innermost trip count changes per launch (rep), a loop left by
# a `break` that never fires, and a helper with a loop called once per i (its loop's parent is
# a call of the helper)
NEST_C = f"""\
#include <stdio.h>
float a[64];
float s;
__attribute__((noinline)) float row(int n) {{
  float t = 0.0f;
  for (int q = 0; q < n; q++)  /* Q loop */
    t += a[q];
  return t;
}}
int main(void) {{
  for (int rep = 0; rep < {REPS}; rep++) {{
#pragma cgp kernel k
    for (int i = 0; i < 8; i++) {{  /* I loop */
      for (int j = 0; j <= i; j++) {{  /* J loop */
        for (int k = 0; k < j + rep; k++)  /* K loop */
          a[i + k] += 1.0f;
        if (a[j] > 1e30f) break;
      }}
      s += row(i + 1);
    }}
  }}
  printf("%f\\n", s);
  return 0;
}}
"""


def expected(rep: int) -> dict[str, tuple[int, int]]:
    """{loop: (iterations, entries)} of launch ``rep``, counted by running the nest in Python
    (an entry is a run of at least one iteration: a loop of zero trips never reaches its
    header)."""
    k_iters = sum(j + rep for i in range(8) for j in range(i + 1))
    k_entries = sum(1 for i in range(8) for j in range(i + 1) if j + rep > 0)
    return {
        "I": (8, 1),
        "J": (sum(i + 1 for i in range(8)), 8),
        "K": (k_iters, k_entries),
        "Q": (sum(i + 1 for i in range(8)), 8),
    }


def _trace(tmp_path: Path, name: str, **opts):
    src = tmp_path / "nest.c"
    src.write_text(NEST_C)
    return trace_program(src, tmp_path / f"{name}.cgptrace", TraceOptions(**opts))


def _loop_columns(tr) -> dict[str, int]:
    """{loop name: column of the loop tables}, found by the source line of each loop."""
    lines = NEST_C.split("\n")
    out = {}
    for lp in tr.header.loops:
        m = re.search(r"/\* (\w) loop \*/", lines[lp.line - 1])
        assert m, lines[lp.line - 1]
        out[m.group(1)] = lp.id
    return out


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("loopfast")
    return {
        "all": _trace(tmp, "all", max_launches=0),
        "first": _trace(tmp, "first", max_launches=1),
        "count": _trace(tmp, "count", count_only=True),
    }


def test_counts_match_the_hand_derived_trips(traces):
    tr = traces["all"]
    cols = _loop_columns(tr)
    assert sorted(cols) == ["I", "J", "K", "Q"]
    for rep in range(REPS):
        got = {n: (int(tr.loop_iters[rep, c]), int(tr.loop_entries[rep, c]))
               for n, c in cols.items()}
        assert got == expected(rep)


@pytest.mark.parametrize("other", ["first", "count"])
def test_unrecorded_launches_count_like_recorded_ones(traces, other):
    full, part = traces["all"], traces[other]
    assert full.launches["recorded"].tolist() == [1] * REPS
    assert part.launches["recorded"].tolist() == ([1, 0, 0] if other == "first" else [0] * REPS)
    np.testing.assert_array_equal(part.bb_counts, full.bb_counts)
    np.testing.assert_array_equal(part.loop_iters, full.loop_iters)
    np.testing.assert_array_equal(part.loop_entries, full.loop_entries)


def test_recorded_launch_events_do_not_depend_on_later_launches(traces):
    np.testing.assert_array_equal(
        traces["first"].launch_events(0), traces["all"].launch_events(0))


def test_iteration_markers_count_from_zero_per_entry(traces):
    """The J loop (depth 2) writes a marker per iteration: indices 0..i for entry i."""
    tr = traces["all"]
    j = _loop_columns(tr)["J"]
    for rep in range(REPS):
        ev = [int(e) for e in tr.launch_events(rep)]
        mine = [e & 0xFFFFFFFF for e in ev if e >> 48 == TAG_LOOP and (e >> 32) & 0xFFFF == j]
        assert mine == [k for i in range(8) for k in range(i + 1)]


def test_probe_call_names_the_parent_serial():
    """Parent kinds: 0 a loop (its id), 1 the launch, 2 a call of helper -2-parent."""
    assert probe_call(4, 2, False) == f"  call void @{PROBE}(i64 4, i32 0, i64 2, i1 false)"
    assert probe_call(0, -1, True) == f"  call void @{PROBE}(i64 0, i32 1, i64 0, i1 true)"
    assert probe_call(7, -3, False) == f"  call void @{PROBE}(i64 7, i32 2, i64 1, i1 false)"
