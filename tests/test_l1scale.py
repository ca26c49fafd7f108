"""L1 hits at the work size (memory/l1scale.py): hand oracles on a column walk."""

from __future__ import annotations

import numpy as np

from cgpredict.memory.l1scale import scale_l1_hits, sweep_growth
from cgpredict.memory.lru import CacheConfig, sector_hit_mask

LINE, SECTOR = 128, 32
CAP = 128  # lines of the L1 in these tests (one set, fully associative)


def _walk(rows: int, sweeps: int, again: bool = False):
    """One warp walks a column of ``rows`` rows (one 128-byte line each, its first sector)
    ``sweeps`` times; ``again``: a second load re-reads each row's sector at once."""
    addr, sid = [], []
    for _ in range(sweeps):
        for i in range(rows):
            addr.append(i * 4096)
            sid.append(0)
            if again:
                addr.append(i * 4096)
                sid.append(1)
    a = np.array(addr, np.uint64)
    s = np.array(sid, np.int64)
    ordinal = np.zeros(len(a), np.int64)  # executions of each load by the warp before
    seen = {0: 0, 1: 0}
    for t, x in enumerate(s):
        ordinal[t] = seen[int(x)]
        seen[int(x)] += 1
    return a, s, ordinal


def _scaled(a, s, ordinal, growth):
    exact = sector_hit_mask(a, CacheConfig(LINE, 1, CAP), SECTOR)
    n = len(a)
    zeros = np.zeros(n, np.int64)
    out = scale_l1_hits(a >> np.uint64(5), 2, zeros, zeros, s, ordinal, np.ones(n, bool),
                        exact, CAP, growth)
    return exact, out


def test_sweep_growth_multiplies_inner_loops_first():
    g = sweep_growth(3, ((128.0, 1024.0), (64.0, 64.0), (4.0, 8.0)))
    assert g.sid == 3
    assert g.steps == ((128, 8.0), (8192, 8.0), (32768, 16.0))


def test_column_walk_that_fits_the_trace_but_not_the_work_size_misses():
    # 64 rows: the second sweep reuses each line 63 lines later, a hit at the trace size;
    # at 512 rows (ratio 8) 63 * 8 = 504 lines lie in between, more than the 128 the L1 holds
    a, s, o = _walk(64, 2)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 512.0),)),))
    assert exact[:64].sum() == 0 and exact[64:].all()
    assert not out.any()


def test_column_walk_that_still_fits_keeps_its_hits():
    # 96 rows at the work size: 63 * 1.5 = 94.5 lines < 128, every second sweep still hits
    a, s, o = _walk(64, 2)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 96.0),)),))
    assert np.array_equal(out, exact)


def test_reuse_inside_a_sweep_keeps_its_hit():
    # the second load re-reads the sector the first just fetched: no sweep in between (its
    # own previous execution precedes the first load), a hit at every size
    a, s, o = _walk(64, 2, again=True)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 512.0),)),
                                   sweep_growth(1, ((64.0, 512.0),))))
    again = s == 1
    assert exact[again].all() and out[again].all()
    assert not out[~again].any()  # the first load's second sweep: 63 lines * 8 apart


def test_no_growth_is_the_exact_analysis():
    a, s, o = _walk(64, 2)
    exact, out = _scaled(a, s, o, (sweep_growth(0, ((64.0, 64.0),)),))
    assert np.array_equal(out, exact)
