"""A gather's L2 requests at the work size: its picks' shared lines thin out as its array
grows (eq. (GQ) of docs/models.md).

The L2 takes one request for each distinct line among a warp instruction's sectors that the
L1 does not serve (eq. (B2q)). A uniform gather's lanes pick lines of its array at random,
so two lanes share a line with a chance of one over the array's lines: 32 picks from the
traced 64 KB ``x`` of spmv_csr (512 lines) share about 0.97 lines an instruction, from the
4 MB of the work size (32,768 lines) 0.015. The trace counts the shared lines of its own
array; at the work size they are that count over the array's growth g (the expected shared
pairs, C(n, 2) / L, fall as 1 / L), so of an instruction's m sectors past the L1 in q traced
lines

    q_work = m - (m - q) / g                                                       (GQ)

Only gathers grown to the work size take it (footprint.size_check: their picks span the
array, eq. (LP2u)); a banded gather's picks stay within their band and keep their lines.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gather_growth", "grown_requests"]


def grown_requests(requests: np.ndarray, sectors: np.ndarray,
                   gathers: tuple[tuple[int, float], ...]) -> np.ndarray:
    """Per (static instruction, pattern): the L2 requests with each grown gather's shared
    lines divided by its array's growth (``gathers``: static load, growth; eq. (GQ));
    ``sectors``: the same rows' sectors past the L1, the requests when no two share a line."""
    out = np.asarray(requests, np.float64).copy()
    m = np.asarray(sectors, np.float64)
    for s, g in gathers:
        if 0 <= s < out.shape[0] and g > 1.0:
            shared = np.maximum(m[s] - out[s], 0.0)
            out[s] = m[s] - shared / g  # (GQ)
    return out


def gather_growth(*tables: tuple[tuple[int, float], ...]) -> tuple[tuple[int, float], ...]:
    """The largest growth each static load takes in any of ``tables`` (the L2's and the
    L1's gathers of footprint.size_check), in load order."""
    best: dict[int, float] = {}
    for table in tables:
        for s, g in table:
            best[s] = max(best.get(s, 1.0), float(g))
    return tuple(sorted(best.items()))
