"""Shared-memory modelling of tiled kernels (SPEC §2.6).

An array named in ``#pragma cgp shared ARRAY tile RxC`` is staged by each block in R x C tiles:
the traced accesses to it become shared-memory accesses whose bank-conflict degree X is computed
from the actual addresses of each warp access, mapped into the tile (element (r, c) of the array
lives at element (r mod R) * C + (c mod C) of the tile, 4-byte word = that x element bytes / 4).
Each tile phase (an iteration of the loop that encloses the strip-mined loop over the tile)
costs two barriers and the staging loads of what the block needs in that phase: the kernel
analysis measures it from the trace (``block_footprints``, the distinct elements of each staged
array one block touches), so non-square blocks, 1-D kernels, two tiles of one array and tiles
larger than the array are counted as the GPU would load them.

Bank rules (device file): ``smem_bank_bytes = 8`` is Kepler's 8-byte mode: word w is in bank
(w / 2) mod banks, and two words of one bank conflict only when they lie in different 64-word
aligned segments; ``smem_bank_bytes = 4``: bank w mod banks, distinct words of a bank conflict.
The same word never conflicts (broadcast). X-way conflict = X passes over the banks.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..frontend.port import opaque_aliases
from ..hashing import hash_slot, hash_table, pow2_log2
from ..instrument.irtext import ELEM_BYTES, global_arrays
from ..warps import WarpTrace
from .shared_phases import phase_groups, phase_lanes, summed_by_access


@dataclass(frozen=True)
class ArrayLayout:
    """Shape of a global array: dimensions (outermost first) and element size."""

    dims: tuple[int, ...]
    elem_bytes: int

    @property
    def row_elems(self) -> int:
        return self.dims[-1] if self.dims else 1


def array_layouts(ir_text: str) -> dict[str, ArrayLayout]:
    """The global arrays of a module, from their IR types (``[128 x [128 x float]]``)."""
    return {
        name: ArrayLayout(dims, elem)
        for name, (dims, elem) in global_arrays(ir_text).items()
        if dims
    }


def param_row_layouts(ir_text: str, names) -> dict[str, ArrayLayout]:
    """Row layouts of arrays that are not globals (``float A[][256]`` or VLA parameters,
    malloc'd rows): the row type of a ``getelementptr [256 x float], ptr %A`` on them gives
    the row length and element size (dims = (row length,): the row count is unknown)."""
    out = {}
    # the plain port reaches an array through the result of an empty asm (port.py)
    aliases: dict[str, list[str]] = {}
    for (_, alias), base in opaque_aliases(ir_text).items():
        aliases.setdefault(base, []).append(alias)
    for name in names:
        for value in (name, *aliases.get(name, ())):
            m = re.search(
                r"getelementptr (?:inbounds )?(?:nuw )?(?:nusw )?\[(\d+) x (\w+)\], ptr %"
                + re.escape(value)
                + r",",
                ir_text,
            )
            if m and m.group(2) in ELEM_BYTES:
                out[name] = ArrayLayout((int(m.group(1)),), ELEM_BYTES[m.group(2)])
                break
    return out



@functools.lru_cache(maxsize=4096)
def array_name(access_text: str) -> str:
    """``A[i][k]`` -> ``A`` (asked for every instruction of every launch modelled: cached)."""
    m = re.match(r"[A-Za-z_]\w*", access_text)
    return m.group(0) if m else ""


@njit(cache=True, nogil=True)
def _conflict_degrees(words, starts, ends, banks, bank_bytes):  # pragma: no cover - numba
    """conflict_degree of each warp access words[starts[i]:ends[i]] (at most 32 lanes used):
    per bank, the distinct keys (words; 64-word segments with 8-byte banks) its lanes touch,
    kept in a short list per bank, so a conflict-free access costs O(lanes)."""
    out = np.empty(starts.shape[0], np.int64)
    keys = np.empty((banks, 64), np.int64)
    count = np.zeros(banks, np.int64)
    touched = np.empty(banks, np.int64)  # the banks of one access with a key
    mask = banks - 1 if pow2_log2(banks) >= 0 else -1  # 32 banks: a mask
    for i in range(starts.shape[0]):
        nt = 0
        best = 1
        for t in range(starts[i], ends[i]):
            w = words[t]
            if bank_bytes == 8:
                half = w >> 1
                bank, key = half & mask if mask >= 0 else half % banks, w >> 6
            else:
                bank, key = w & mask if mask >= 0 else w % banks, w
            c = count[bank]
            dup = False
            for q in range(c):
                if keys[bank, q] == key:
                    dup = True
                    break
            if not dup and c < 64:
                if c == 0:
                    touched[nt] = bank
                    nt += 1
                keys[bank, c] = key
                count[bank] = c + 1
                if c + 1 > best:
                    best = c + 1
        for q in range(nt):
            count[touched[q]] = 0
        out[i] = best
    return out


def conflict_degrees(words: np.ndarray, starts: np.ndarray, ends: np.ndarray, banks: int,
                     bank_bytes: int) -> np.ndarray:
    """X of each warp access words[starts[i]:ends[i]] (4-byte tile words, SPEC §2.6)."""
    return _conflict_degrees(words, starts, ends, banks, bank_bytes)


def conflict_degree(words: np.ndarray, banks: int, bank_bytes: int) -> int:
    """X for one warp access to 4-byte tile words ``words`` (SPEC §2.6)."""
    words = np.unique(words)
    if bank_bytes == 8:
        bank = (words // 2) % banks
        seg = words // 64
        keys = np.unique(np.stack([bank, seg]), axis=1)
        return int(np.bincount(keys[0]).max())
    bank = words % banks
    return int(np.bincount(bank).max())


@dataclass(frozen=True)
class StagedAccess:
    """One static instruction whose array is staged in shared memory."""

    sid: int
    array: str
    conflicts: tuple[tuple[int, int], ...]  # (X, number of warp instructions)
    # what ptxas makes of it in the unrolled loop: elements one shared load returns (a
    # thread reading consecutive elements of a tile row, iteration after iteration, gets one
    # LDS.64/LDS.128 for 2 or 4 of them) and whether every lane reads the same word
    vector: int = 1
    uniform: bool = False
    elem_bytes: int = 4
    # mean passes of a warp instruction served in phases of lanes (eq. (20w)); 0: one phase
    phased_degree: float = 0.0

    @property
    def wavefronts(self) -> float:
        """Shared-memory wavefronts (bank passes, one a cycle) per element a thread reads: an
        X-way conflict is X passes for the whole load, whatever its width, since a lane's
        vector fills the banks next to its first word's and every lane of one bank brings its
        whole vector in the same pass (an LDS.128 of 32 lanes at a 32-word stride: 32
        wavefronts for 4 elements, not 4 x 32; conflict-free: 512 B in 4); a load whose lanes
        all read one address packs two registers a wavefront when it returns several (an
        LDS.128 broadcast takes 2 wavefronts, not 4: NVIDIA's account of the L1/shared return
        path, 128 B a cycle, for cc 7.x). A load served in phases of lanes takes the sum of its
        phases' passes instead (eq. (20w), memory/shared_phases.py)."""
        if self.phased_degree:
            return self.phased_degree / self.vector
        regs = max(self.vector * self.elem_bytes // 4, 1)
        if self.uniform and regs > 1:
            return regs / 2 / self.vector
        return self.mean_degree / self.vector

    @property
    def mean_degree(self) -> float:
        n = sum(c for _, c in self.conflicts)
        return sum(x * c for x, c in self.conflicts) / n if n else 1.0


def staged_accesses(
    wt: WarpTrace,
    mem_texts: dict[int, str],
    hints,
    layouts,
    banks: int,
    bank_bytes: int,
    bases: dict[str, int] | None = None,
    phase_bytes: int = 0,
) -> tuple[StagedAccess, ...]:
    """Bank-conflict degrees of every warp access to a staged array (``bases``: run-time
    addresses of the arrays; without one, the lowest address the kernel touches;
    ``phase_bytes``: the device's ``smem_phase_bytes``, eq. (20w))."""
    tiles = {a: (r, c) for a, r, c in hints}
    if not wt.n_events:
        return ()
    inst_sid = wt.inst_sid
    bounds = np.r_[wt.inst_start, wt.n_events].astype(np.int64)
    addr = wt.addr
    staged = {sid: text for sid, text in sorted(mem_texts.items()) if array_name(text) in tiles}
    # one base per array: its run-time address, else the lowest address any of its
    # instructions touches (not one per instruction, which would shift each one's tile)
    lowest: dict[str, int] = {}
    mine = np.zeros(int(inst_sid.max()) + 1, np.bool_)
    mine[[s for s in staged if s < len(mine)]] = True
    lows = _sid_min_addrs(addr, inst_sid, bounds, mine)
    for sid, text in staged.items():
        low = int(lows[sid]) if sid < len(lows) else -1
        if low >= 0:
            arr = array_name(text)
            lowest[arr] = min(lowest.get(arr, low), low)
    out = []
    for sid, text in staged.items():
        arr = array_name(text)
        if arr not in lowest:
            continue
        lay = layouts.get(arr)
        rows, cols = tiles[arr]
        base = (bases or {}).get(arr, lowest[arr])
        elem = lay.elem_bytes if lay else 4
        row_len = lay.row_elems if lay else cols
        words, starts, ends, lanes = _staged_words(
            addr, wt.lane, inst_sid, bounds, sid, base, elem, row_len, rows, cols)
        if not len(starts):
            continue
        values, counts = np.unique(_conflict_degrees(words, starts, ends, banks, bank_bytes),
                                   return_counts=True)
        uniform, stride1 = _thread_shape(addr, inst_sid, wt.inst_warp, bounds, sid, elem)
        vector = _vector_width(stride1, elem, cols)
        lpp = phase_lanes(vector * elem, phase_bytes)
        phased = 0.0
        if lpp < 32:  # eq. (20w): conflicts within each phase of lpp lanes, summed
            g = phase_groups(lanes, starts, ends, lpp)
            xs = _conflict_degrees(words[g.order], g.starts, g.ends, banks, bank_bytes)
            phased = float(summed_by_access(xs, g, len(starts)).mean())
        out.append(
            StagedAccess(
                sid=sid,
                array=arr,
                conflicts=tuple((int(x), int(c)) for x, c in zip(values, counts)),
                vector=vector,
                uniform=uniform >= VECTOR_SHARE,
                elem_bytes=elem,
                phased_degree=phased,
            )
        )
    return tuple(out)


#: share of a staged load's warp instructions that must show a pattern for ptxas's treatment
#: of it to be assumed (a thread's next element one element on; every lane one address)
VECTOR_SHARE = 0.75


def _vector_width(stride1: float, elem: int, cols: int) -> int:
    """Elements one shared load returns once ptxas has unrolled the loop: a thread that reads
    the next element of its tile row each iteration gets them 16 bytes at a time (LDS.128 of
    four floats, as the sm_90 SASS of the tiled GEMM reads its A tile) when the tile row
    holds whole vectors; otherwise one (validation/results/sass-check.md)."""
    if stride1 < VECTOR_SHARE or elem >= 16:
        return 1
    width = 16 // elem
    while width > 1 and cols % width:
        width //= 2
    return width


@njit(cache=True, nogil=True)
def one_address(addr, lo, hi) -> bool:  # pragma: no cover - numba
    """Whether the lanes ``lo`` to ``hi`` of one warp instruction all read one address."""
    a0 = np.int64(addr[lo])
    for t in range(lo + 1, hi):
        if np.int64(addr[t]) != a0:
            return False
    return True


@njit(cache=True, nogil=True)
def _thread_shape(addr, inst_sid, inst_warp, bounds, sid, elem):  # pragma: no cover - numba
    """(share of ``sid``'s warp instructions whose lanes all read one address, share of its
    instructions whose first lane reads one element past its previous instance in the same
    warp): broadcast and per-thread unit stride, the two shapes ptxas turns into packed or
    vector shared loads."""
    n = same = unit = pairs = 0
    last_warp = np.int64(-1)
    last_addr = np.int64(0)
    for i in range(inst_sid.shape[0]):
        if inst_sid[i] != sid:
            continue
        n += 1
        a0 = np.int64(addr[bounds[i]])
        same += one_address(addr, bounds[i], bounds[i + 1])
        if inst_warp[i] == last_warp:
            pairs += 1
            unit += a0 - last_addr == elem
        last_warp, last_addr = inst_warp[i], a0
    return (same / n if n else 0.0), (unit / pairs if pairs else 0.0)


@njit(cache=True, nogil=True)
def _sid_min_addrs(addr, inst_sid, bounds, mine):  # pragma: no cover - numba
    """The lowest address each static instruction marked in ``mine`` touches (-1: none), in
    one pass over their events."""
    low = np.full(mine.shape[0], -1, np.int64)
    for i in range(inst_sid.shape[0]):
        s = inst_sid[i]
        if mine[s]:
            for t in range(bounds[i], bounds[i + 1]):
                a = np.int64(addr[t])
                if low[s] < 0 or a < low[s]:
                    low[s] = a
    return low


@njit(cache=True, nogil=True)
def _staged_words(  # pragma: no cover - numba
    addr, lane, inst_sid, bounds, sid, base, elem, row_len, rows, cols
):
    """(words, starts, ends, lanes) of every warp instruction of ``sid``, its lanes'
    addresses mapped to 4-byte words of the tile: element index x element bytes / 4 (a char
    tile packs four elements in a word; a double spans two, its first word stands for it)."""
    n = 0
    for i in range(inst_sid.shape[0]):
        if inst_sid[i] == sid:
            n += 1
    starts = np.empty(n, np.int64)
    ends = np.empty(n, np.int64)
    m = 0
    for i in range(inst_sid.shape[0]):
        if inst_sid[i] == sid:
            starts[m] = ends[m - 1] if m > 0 else 0
            ends[m] = starts[m] + bounds[i + 1] - bounds[i]
            m += 1
    words = np.empty(ends[n - 1] if n else 0, np.int64)
    lanes = np.empty(words.shape[0], np.int64)
    # element bytes and the tile's sides are powers of two in practice: shifts and masks
    # then, one division (by the row length) an address instead of five
    es, rm, cm = pow2_log2(elem), rows - 1, cols - 1
    pow2 = es >= 0 and pow2_log2(rows) >= 0 and pow2_log2(cols) >= 0
    rs = pow2_log2(row_len)  # rows of a power-of-two length too (-1: divide)
    q = 0
    for i in range(inst_sid.shape[0]):
        if inst_sid[i] == sid:
            for t in range(bounds[i], bounds[i + 1]):
                if pow2:
                    e = (np.int64(addr[t]) - base) >> es
                    r = e >> rs if rs >= 0 else e // row_len
                    words[q] = (((r & rm) * cols + ((e - r * row_len) & cm)) << es) >> 2
                else:
                    e = (np.int64(addr[t]) - base) // elem
                    words[q] = ((e // row_len % rows) * cols + (e % row_len % cols)) * elem // 4
                lanes[q] = lane[t]
                q += 1
    return words, starts, ends, lanes


def block_footprints(wt: WarpTrace, sids: dict[str, list[int]], elem_bytes: dict[str, int]):
    """Per staged array: the most distinct elements one block touches over the launch (among
    the blocks with the most threads, so that a partial edge block of the trace grid does not
    set the figure) and that block's thread count. Two tiles of one array (syrk's A[i][k] and
    A[j][k]) are both in it; a tile larger than the array is not."""
    if not wt.n_events:
        return {}
    return footprints_of(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid,
                         -(-wt.block.threads // 32), sids, elem_bytes)


def footprints_of(addr, lane, inst_start, inst_warp, inst_sid, wpb: int,
                  sids: dict[str, list[int]], elem_bytes: dict[str, int]):
    """``block_footprints`` of warp instructions given column by column, ``inst_warp`` the
    warp of each under blocks of ``wpb`` warps (a regrouped trace's footprints read from the
    events of the trace it came from: memory/staging_reuse.py)."""
    active = _threads_per_block(inst_warp, inst_start, lane, wpb, len(addr))
    full = np.flatnonzero(active == active.max())
    bounds = np.r_[inst_start, len(addr)].astype(np.int64)
    n_sids = int(inst_sid.max()) + 1
    out = {}
    for arr, ids in sids.items():
        mine = np.zeros(n_sids, np.bool_)
        mine[[i for i in ids if 0 <= i < n_sids]] = True
        counts = _block_elements(
            addr, inst_warp, inst_sid, bounds, mine, wpb,
            max(elem_bytes.get(arr, 4), 1), len(active),
        )  # fmt: skip
        if not counts.any():
            continue
        best = int(full[np.argmax(counts[full])])
        out[arr] = (int(counts[best]), int(active[best]))
    return out


@njit(cache=True, nogil=True)
def _threads_per_block(inst_warp, inst_start, lane, wpb, n):  # pragma: no cover - numba
    """Pseudo-threads of every block: the distinct (warp, lane) pairs of its warps (a
    thread is one lane of one warp)."""
    n_warps = 0
    for i in range(inst_warp.shape[0]):
        n_warps = max(n_warps, inst_warp[i] + 1)
    used = np.zeros((n_warps, 32), np.bool_)
    for i in range(inst_warp.shape[0]):
        hi = inst_start[i + 1] if i + 1 < inst_start.shape[0] else n
        for t in range(inst_start[i], hi):
            used[inst_warp[i], lane[t]] = True
    active = np.zeros((n_warps + wpb - 1) // wpb, np.int64)
    for w in range(n_warps):
        for ln in range(32):
            if used[w, ln]:
                active[w // wpb] += 1
    return active


@njit(cache=True, nogil=True)
def _block_elements(  # pragma: no cover - numba
    addr, inst_warp, inst_sid, bounds, mine, wpb, elem, n_blocks
):
    """Distinct elements (addr // elem) each block touches through the instructions marked
    in ``mine``: a bitmap of (block, element) when it is small, else a hash set."""
    lo, hi, n = np.int64(-1), np.int64(-1), 0
    es = pow2_log2(elem)  # a shift for the usual element sizes
    for i in range(inst_sid.shape[0]):
        if mine[inst_sid[i]]:
            for t in range(bounds[i], bounds[i + 1]):
                e = _index(addr[t], elem, es)
                if lo < 0 or e < lo:
                    lo = e
                hi = max(hi, e)
                n += 1
    counts = np.zeros(n_blocks, np.int64)
    if n == 0:
        return counts
    span = hi - lo + 1
    if n_blocks * span <= (1 << 26):
        seen = np.zeros(n_blocks * span, np.bool_)
        for i in range(inst_sid.shape[0]):
            if mine[inst_sid[i]]:
                for t in range(bounds[i], bounds[i + 1]):
                    b = inst_warp[i] // wpb
                    key = b * span + _index(addr[t], elem, es) - lo
                    if not seen[key]:
                        seen[key] = True
                        counts[b] += 1
        return counts
    keys, used, down = hash_table(n)
    for i in range(inst_sid.shape[0]):
        if mine[inst_sid[i]]:
            for t in range(bounds[i], bounds[i + 1]):
                b = inst_warp[i] // wpb
                v = np.uint64(b * span + _index(addr[t], elem, es) - lo)
                h = hash_slot(keys, used, v, down)
                if not used[h]:
                    used[h] = True
                    keys[h] = v
                    counts[b] += 1
    return counts


@njit(cache=True, nogil=True, inline="always")
def _index(a, elem, es):  # pragma: no cover - numba
    """The element index a // elem, by the shift ``es`` when it is one (>= 0)."""
    return np.int64(a) >> es if es >= 0 else np.int64(a) // elem


def tile_bytes(hints, layouts) -> int:
    """Shared memory one block allocates for its tiles."""
    total = 0
    for arr, r, c in hints:
        lay = layouts.get(arr)
        total += r * c * (lay.elem_bytes if lay else 4)
    return total
