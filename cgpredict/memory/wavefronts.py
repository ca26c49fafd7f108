"""Data-stage wavefronts of a warp's global loads in an L1 that caches them, eq. (B2w).

The L1 and shared memory are one SRAM of ``banks`` banks of ``bank_bytes`` each (32 x 4 B on
every NVIDIA GPU since Fermi). One pass of the data stage (a *wavefront*, Nsight Compute's
``l1tex__data_pipe_lsu_wavefronts``) reads one word from each bank; the words of a warp
instruction that share a bank but not an address take one pass each, lanes reading the same
word share it (broadcast). So a warp load takes

    wavefronts = max(max over banks b of its distinct words, ceil(access_bytes / bank_bytes)) (B2w)

passes: 32 consecutive floats take one wherever they start, also across two 128-B lines
(a 1-D stencil's ``in[i + k]``; the line count said two); 32 lanes each in its own row of a
power-of-two pitch take 32 (one bank: the row walks, as the line count); a random gather
about 4 (the busiest of 32 banks). A 64-bit lane takes two banks and the data path returns a
warp's 64-bit words in two passes at least, a 128-bit one's in four (``access_bytes`` term).
Stores are not counted here (their cost is the write path's, per line: models/bounds.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["wavefront_counts"]


def wavefront_counts(addr: np.ndarray, inst_start: np.ndarray, inst_sid: np.ndarray,
                     pattern: np.ndarray, access_bytes: np.ndarray, n_sids: int,
                     banks: int = 32, bank_bytes: int = 4) -> np.ndarray:
    """Per (static instruction, pattern): the wavefronts (eq. (B2w)) of its warp
    instructions, summed (``addr``: every event in instruction order, ``inst_start``: each
    warp instruction's first event; ``access_bytes`` per static instruction)."""
    out = np.zeros((n_sids, 3), np.int64)
    if not len(inst_start):
        return out
    _count(np.asarray(addr, np.uint64), np.asarray(inst_start, np.int64),
           np.asarray(inst_sid, np.int64), np.asarray(pattern, np.int64),
           np.asarray(access_bytes, np.int64), int(banks), int(bank_bytes), out)
    return out


@njit(cache=True, nogil=True)
def _count(addr, inst_start, inst_sid, pattern, access_bytes, banks, bank_bytes,
           out):  # pragma: no cover - numba
    """Adds each warp instruction's wavefronts (B2w) to ``out`` at its (sid, pattern)."""
    n = addr.shape[0]
    n_inst = inst_start.shape[0]
    words = np.empty(32 * 8, np.uint64)
    per_bank = np.zeros(banks, np.int64)
    for i in range(n_inst):
        lo = inst_start[i]
        hi = inst_start[i + 1] if i + 1 < n_inst else n
        s = inst_sid[i]
        size = max(access_bytes[s], 1)
        span = min(max((size + bank_bytes - 1) // bank_bytes, 1), 8)
        m = 0
        for t in range(lo, hi):
            w0 = addr[t] // np.uint64(bank_bytes)
            for j in range(span):
                if m < words.shape[0]:
                    words[m] = w0 + np.uint64(j)
                    m += 1
        ws = np.sort(words[:m])
        per_bank[:] = 0
        most = 0
        for q in range(m):
            if q == 0 or ws[q] != ws[q - 1]:  # a distinct word: one more pass of its bank
                b = np.int64(ws[q] % np.uint64(banks))
                per_bank[b] += 1
                most = max(most, per_bank[b])
        out[s, pattern[i]] += max(most, span)
    return out


def with_load_wavefronts(lines: np.ndarray, addr: np.ndarray, inst_start: np.ndarray,
                         inst_sid: np.ndarray, pattern: np.ndarray, access_bytes: np.ndarray,
                         is_store: np.ndarray | None, banks: int,
                         bank_bytes: int) -> np.ndarray:
    """``lines`` (per (static instruction, pattern): the L1 lines its warp instructions
    touch) with every load's row replaced by its data-stage wavefronts (B2w); the stores'
    rows stay lines."""
    wf = wavefront_counts(addr, inst_start, inst_sid, pattern, access_bytes, lines.shape[0],
                          banks, bank_bytes)
    if is_store is None:
        return wf
    store = np.asarray(is_store, bool)[: lines.shape[0]]
    out = wf.copy()
    out[: len(store)][store] = lines[: len(store)][store]
    return out
