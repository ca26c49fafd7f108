"""Store merging in the L1's write path (eq. (SM1)): which store sectors never reach the L2.

An SM's L1 is write-through for global stores, but it does not send every store sector to
the L2 on its own: a sector that one warp's store instruction writes and the warp's next store
instruction writes again leaves the L1 once, with both writes' bytes. ncu on an H100
(validation/measured/h100-session-2026-11-27b/counters/user-ncu/particles-256x1.csv,
step_aos: three back-to-back ``STG`` of a 24-byte struct's x, y, z) counts 24 L1 store
sectors a request but 10.7 sectors a request on the L1->crossbar write path
(``l1tex__m_l1tex2xbar_write_sectors``) and at the L2 (``lts__t_sectors_srcunit_tex_op_write``).
Every other plain, restrict and user port measured that session sends each store sector
(ratio 1.000), among them the ports that store one address every iteration with loads of
other arrays between the stores (GEMM, SYRK, COVAR, Deriche's row walks): nvcc keeps a load
that may alias the stored array between the two stores, and the stores do not merge.

Rule (SM1): a store transaction (sector) of warp w merges, and does not reach the L2, when
the warp's previous store instruction wrote the same sector and no load of another array
lies between the two in the warp's program order (a load of the stored array itself, at the
fixed offsets of a struct's fields, ptxas hoists above the stores: step_aos's SASS has its
six ``LDG`` first, then ``FFMA, STG`` three times).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def merged_stores(
    inst: np.ndarray,
    sectors: np.ndarray,
    inst_warp: np.ndarray,
    inst_sid: np.ndarray,
    is_store: np.ndarray,
    array_of: np.ndarray,
) -> np.ndarray:
    """Per transaction (issue order, ``inst`` its warp instruction, ``sectors`` its sector):
    True when eq. (SM1) merges it into the same warp's previous store of its sector.
    ``is_store`` and ``array_of`` (a dense id of each static instruction's array) are per
    static instruction."""
    if not inst.shape[0]:
        return np.zeros(0, np.bool_)
    n_warps = int(inst_warp.max()) + 1 if inst_warp.shape[0] else 1
    _, dense = np.unique(sectors, return_inverse=True)
    # each warp's transactions together, in its program order (a stable sort of the issue
    # order): another warp's stores in between do not hide a warp's own earlier store
    order = np.argsort(inst_warp[inst], kind="stable")
    out = np.empty(inst.shape[0], np.bool_)
    out[order] = _merge_kernel(
        inst[order].astype(np.int64), dense.astype(np.int64).ravel()[order],
        inst_warp.astype(np.int64), inst_sid.astype(np.int64), np.asarray(is_store, np.bool_),
        np.asarray(array_of, np.int64), n_warps,
    )  # fmt: skip
    return out


@njit(cache=True, nogil=True)
def _merge_kernel(inst, dense, inst_warp, inst_sid, is_store, array_of,
                  n_warps):  # pragma: no cover - numba
    """One pass over the transactions, warp by warp (eq. (SM1)). Per warp: its current
    instruction, its last store instruction and whether that store is still open (no load
    of another array since); per sector: the last store instruction that wrote it."""
    n = inst.shape[0]
    out = np.zeros(n, np.bool_)
    cur = np.full(n_warps, -1, np.int64)
    last = np.full(n_warps, -1, np.int64)
    open_ = np.zeros(n_warps, np.bool_)
    n_sec = dense.max() + 1
    writer = np.full(n_sec, -1, np.int64)
    for t in range(n):
        i = inst[t]
        w = inst_warp[i]
        if cur[w] != i:  # the warp's next instruction starts
            p = cur[w]
            if p >= 0 and is_store[inst_sid[p]]:
                last[w] = p
                open_[w] = True
            cur[w] = i
            s = inst_sid[i]
            if not is_store[s] and last[w] >= 0 and \
                    array_of[s] != array_of[inst_sid[last[w]]]:
                open_[w] = False
        if not is_store[inst_sid[i]]:
            continue
        d = dense[t]
        if open_[w] and last[w] >= 0 and writer[d] == last[w]:
            out[t] = True
        writer[d] = i
    return out
