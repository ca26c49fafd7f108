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

The tag stage before it looks up at most ``tag_lines`` 128-B lines a cycle (4 on the H100:
validation/ubench/l1_wavefronts.cu and l1_banks.cu, L1-resident loads at 32-64 warps an SM:
16 and 32 lines each lane in its own bank take 4.0 and 8.0 cycles a load, a random gather of
28 lines 8.0), so a load holds the L1 for

    passes = max((B2w), ceil(lines / tag_lines))                                      (B2t)

cycles: a scattered load with few bank conflicts (a column walk's diagonal, a gather) takes
about a quarter of its lines, where (B2w) gave its busiest bank. ``tag_lines`` 0: no limit.

The sectors a load misses come back from the L2 and are written into the SRAM by the same
stage, in the slots its lines take: ``fill_sectors`` missed sectors a pass (4 on the H100), so
a warp load whose L1 misses m sectors holds the L1 for

    passes = max((B2w), ceil(lines / tag_lines) + ceil(m / fill_sectors))             (B2f)

cycles: a coalesced load that misses its 4 sectors 2 (Nsight Compute 1.93), trmv_t's nine-row
load with 4 one-sector misses 4, a row walk's 32 one-bank passes still 32 (its fills ride in
the slots those leave; ncu 33.00 a warp-iteration of 32 lines and a broadcast, 4 fills).
``fill_sectors`` 0: fills take no pass (docs/models.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["missed_sectors", "wavefront_counts"]


def wavefront_counts(addr: np.ndarray, inst_start: np.ndarray, inst_sid: np.ndarray,
                     pattern: np.ndarray, access_bytes: np.ndarray, n_sids: int,
                     banks: int = 32, bank_bytes: int = 4, tag_lines: int = 0,
                     line_bytes: int = 128, missed: np.ndarray | None = None,
                     fill_sectors: int = 0) -> np.ndarray:
    """Per (static instruction, pattern): the L1 passes (eqs. (B2w), (B2t), (B2f)) of its
    warp instructions, summed (``addr``: every event in instruction order, ``inst_start``:
    each warp instruction's first event; ``access_bytes`` per static instruction;
    ``tag_lines`` the lines the tag stage looks up a cycle, 0 none; ``missed`` each warp
    instruction's sectors the L1 missed, ``fill_sectors`` of them a pass, 0 none)."""
    out = np.zeros((n_sids, 3), np.int64)
    if not len(inst_start):
        return out
    m = np.zeros(len(inst_start), np.int64) if missed is None else np.asarray(missed, np.int64)
    _count(np.asarray(addr, np.uint64), np.asarray(inst_start, np.int64),
           np.asarray(inst_sid, np.int64), np.asarray(pattern, np.int64),
           np.asarray(access_bytes, np.int64), int(banks), int(bank_bytes), int(tag_lines),
           max(int(line_bytes) // max(int(bank_bytes), 1), 1), m, int(fill_sectors), out)
    return out


@njit(cache=True, nogil=True)
def _count(addr, inst_start, inst_sid, pattern, access_bytes, banks, bank_bytes, tag_lines,
           line_words, missed, fill_sectors, out):  # pragma: no cover - numba
    """Adds each warp instruction's passes, (B2w), (B2t) and (B2f), to ``out`` at its (sid,
    pattern); ``line_words``: the words of a line."""
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
        lines = 0
        for q in range(m):
            if q == 0 or ws[q] != ws[q - 1]:  # a distinct word: one more pass of its bank
                b = np.int64(ws[q] % np.uint64(banks))
                per_bank[b] += 1
                most = max(most, per_bank[b])
            if q == 0 or ws[q] // np.uint64(line_words) != ws[q - 1] // np.uint64(line_words):
                lines += 1  # sorted words: a new line
        tags = (lines + tag_lines - 1) // tag_lines if tag_lines > 0 else 0  # (B2t)
        if fill_sectors > 0:  # the fills take the lines' slots (B2f)
            tags += (missed[i] + fill_sectors - 1) // fill_sectors
        out[s, pattern[i]] += max(most, span, tags)
    return out


def with_load_wavefronts(lines: np.ndarray, addr: np.ndarray, inst_start: np.ndarray,
                         inst_sid: np.ndarray, pattern: np.ndarray, access_bytes: np.ndarray,
                         is_store: np.ndarray | None, banks: int,
                         bank_bytes: int, tag_lines: int = 0,
                         line_bytes: int = 128, missed: np.ndarray | None = None,
                         fill_sectors: int = 0) -> np.ndarray:
    """``lines`` (per (static instruction, pattern): the L1 lines its warp instructions
    touch) with every load's row replaced by its L1 passes ((B2w), (B2t), (B2f)); the
    stores' rows stay lines."""
    wf = wavefront_counts(addr, inst_start, inst_sid, pattern, access_bytes, lines.shape[0],
                          banks, bank_bytes, tag_lines, line_bytes, missed, fill_sectors)
    if is_store is None:
        return wf
    store = np.asarray(is_store, bool)[: lines.shape[0]]
    out = wf.copy()
    out[: len(store)][store] = lines[: len(store)][store]
    return out


def missed_sectors(inst: np.ndarray, missed: np.ndarray, inst_sid: np.ndarray,
                   coherent: tuple[bool, ...] = (), sectors_per_unit: int = 1) -> np.ndarray:
    """Per warp instruction: the sectors its L1 missed whose fills pass the data stage, eq.
    (B2f)'s m (``inst``: each transaction's warp instruction, ``missed``: True where the L1
    did not serve it, a transaction ``sectors_per_unit`` sectors; ``coherent`` per static
    instruction, False for a read-only-path load, whose fills take no pass; (): all)."""
    n = len(inst_sid)
    m = np.bincount(np.asarray(inst, np.int64)[np.asarray(missed, bool)], minlength=n)[:n]
    if len(coherent):
        sid = np.asarray(inst_sid, np.int64)
        flags = np.ones(max(int(sid.max()) + 1 if n else 0, len(coherent)), bool)
        flags[: len(coherent)] = coherent
        m = np.where(flags[sid], m, 0)
    return m * max(int(sectors_per_unit), 1)
