"""Cache analysis with temporal conflict sets (SPEC §2.3).

A cache of line size B, K sets and associativity A. The (warp-ordered) byte-address trace is
turned into line numbers m = addr // B, line m maps to set m mod K and each set's sub-trace is
analysed on its own. For the j-th reference to line m (j > 1) its temporal conflict set TCS is
the set of distinct *other* lines referenced in that set since the (j-1)-th reference to m; the
reference hits iff |TCS| < A. First references miss. Every access (load or store) allocates;
replacement is LRU. This is exactly what an LRU cache does, and the tests check it against a
plain LRU simulator and against pycachesim.

How it is computed (``_lru_stack_kernel``): only whether |TCS| < A matters, never its exact
size, so each set keeps its A most recently used distinct lines, most recent first (an LRU
stack of depth A, Mattson et al. 1970). After a reference to m, m is on top. Each later
reference in the set to a line x that is not m moves m down by one position exactly when x was
*below* m (or absent), i.e. when x is a line not yet seen since m's reference; a reference to a
line already above m reorders the lines above m and leaves m where it is. Hence the depth of m
(0-based) equals |TCS| for as long as m is in the stack, and m drops out of a stack of depth A
exactly when |TCS| reaches A. So "m is found in its set's stack" is "|TCS| < A": exact, O(A)
time per access, O(K * A) memory, no sort and no per-line state. Hits are usually near the top
(the scan stops at the first match), which makes it the fastest exact method for GPU
associativities (<= 32).

For a high associativity (more than ``_STACK_MAX_WAYS`` ways, e.g. a fully associative cache)
an O(A) scan per access gets slow, and ``_lru_list_kernel`` is used instead: lines are
renumbered densely (``dense_ids``, a hash table, O(n)) and each set's stack is a doubly linked
list over line ids with a residency flag per line: O(1) per access, O(n) memory. Both kernels
compute the same mask (tested).

``sector_hit_mask`` extends the stack with a bitmask of fetched sectors per resident line, for
sectored caches (128-B lines of 32-B sectors on recent NVIDIA GPUs): tags and LRU order at line
granularity, sectors filled on demand, all cleared when the line is (re)allocated.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..hashing import as_uint64_1d, dense_ids

__all__ = [
    "CacheConfig",
    "CacheStats",
    "analyze_cache",
    "hit_mask",
    "line_addresses",
    "sector_hit_mask",
]

# Above this associativity hit_mask switches from the O(A) LRU stack to the O(1) linked list
# (which first renumbers the lines with a hash table). Measured crossover on random traces: between
# 64 and 128 ways; on GEMM-like traces the stack stays faster up to 256 ways.
_STACK_MAX_WAYS = 64
# Sector-valid bits are kept in one uint64 per resident line.
_MAX_SECTORS_PER_LINE = 64


def _is_pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        # ValueError, not TypeError: every invalid geometry is reported the same way.
        got = f"{type(value).__name__} {value!r}"
        raise ValueError(f"{name} must be an integer, got {got}")  # noqa: TRY004
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)


@dataclass(frozen=True)
class CacheConfig:
    """Geometry of one cache level (SPEC §2.3): line size B, K sets, associativity A.

    line_bytes: B, a power of two. sets: K, any positive integer (set = line mod K; GPUs such as
    the H100 have L2s whose set count is not a power of two). ways: A, positive.
    """

    line_bytes: int
    sets: int
    ways: int

    def __post_init__(self) -> None:
        for name in ("line_bytes", "sets", "ways"):
            object.__setattr__(self, name, _check_positive_int(name, getattr(self, name)))
        if not _is_pow2(self.line_bytes):
            raise ValueError(f"line_bytes must be a power of two, got {self.line_bytes}")

    @classmethod
    def from_capacity(cls, capacity_bytes: int, line_bytes: int, ways: int) -> CacheConfig:
        """The cache of capacity_bytes = line_bytes * sets * ways; the division must be exact."""
        capacity_bytes = _check_positive_int("capacity_bytes", capacity_bytes)
        line_bytes = _check_positive_int("line_bytes", line_bytes)
        ways = _check_positive_int("ways", ways)
        way_bytes = line_bytes * ways
        if capacity_bytes % way_bytes:
            raise ValueError(
                f"capacity_bytes={capacity_bytes} is not a multiple of "
                f"line_bytes * ways = {line_bytes} * {ways} = {way_bytes}"
            )
        return cls(line_bytes=line_bytes, sets=capacity_bytes // way_bytes, ways=ways)

    @property
    def capacity_bytes(self) -> int:
        return self.line_bytes * self.sets * self.ways


@dataclass(frozen=True)
class CacheStats:
    """Hit counts of one trace through one cache (SPEC §2.3). hit_rate is 0.0 for no accesses."""

    accesses: int
    hits: int

    def __post_init__(self) -> None:
        if not 0 <= self.hits <= self.accesses:
            raise ValueError(
                f"expected 0 <= hits <= accesses, got hits={self.hits}, accesses={self.accesses}"
            )

    @property
    def misses(self) -> int:
        return self.accesses - self.hits

    @property
    def hit_rate(self) -> float:
        return self.hits / self.accesses if self.accesses else 0.0


def line_addresses(byte_addresses: np.ndarray, line_bytes: int) -> np.ndarray:
    """Line numbers m = addr // line_bytes (uint64) of a byte-address trace (SPEC §2.3)."""
    line_bytes = _check_positive_int("line_bytes", line_bytes)
    if not _is_pow2(line_bytes):
        raise ValueError(f"line_bytes must be a power of two, got {line_bytes}")
    addrs = as_uint64_1d(byte_addresses, "byte addresses")
    return addrs >> np.uint64(line_bytes.bit_length() - 1)


@njit(cache=True, nogil=True, inline="always")
def _way_of(stack, base, f, m):  # pragma: no cover - numba
    """Where line ``m`` stands in its set's LRU stack (the ``f`` lines from ``base``, most
    recent first), -1 when it is not resident."""
    for i in range(f):
        if stack[base + i] == m:
            return i
    return -1


@njit(cache=True, nogil=True, inline="always")
def _way_of_miss(fill, s, f, ways):  # pragma: no cover - numba
    """Where a missing line enters set ``s``'s stack (``f`` lines held) before it moves to
    the front: the next free way, or the LRU way (|TCS| of that line's next reference would
    be >= A: it is evicted)."""
    if f < ways:
        fill[s] = f + 1
        return f
    return ways - 1


@njit(cache=True, nogil=True)
def _lru_stack_kernel(lines, n_sets, ways, out):
    """out[t] = hit of lines[t]; per-set LRU stacks of depth `ways` (see module docstring)."""
    stack = np.empty(n_sets * ways, dtype=np.uint64)
    fill = np.zeros(n_sets, dtype=np.int64)
    k = np.uint64(n_sets)
    pow2 = (n_sets & (n_sets - 1)) == 0
    set_mask = np.uint64(n_sets - 1)
    for t in range(lines.size):
        m = lines[t]
        if pow2:
            s = np.int64(m & set_mask)
        else:
            s = np.int64(m % k)
        base = s * ways
        f = fill[s]
        pos = _way_of(stack, base, f, m)
        out[t] = pos >= 0
        if pos < 0:
            pos = _way_of_miss(fill, s, f, ways)
        for i in range(pos, 0, -1):
            stack[base + i] = stack[base + i - 1]
        stack[base] = m


@njit(cache=True, nogil=True)
def _lru_list_kernel(ids, set_of_id, n_sets, ways, out):
    """Same mask as _lru_stack_kernel, O(1) per access: ids are dense line ids (0..n_ids-1)."""
    n_ids = set_of_id.size
    nxt = np.full(n_ids, -1, dtype=np.int64)
    prv = np.full(n_ids, -1, dtype=np.int64)
    resident = np.zeros(n_ids, dtype=np.bool_)
    head = np.full(n_sets, -1, dtype=np.int64)
    tail = np.full(n_sets, -1, dtype=np.int64)
    count = np.zeros(n_sets, dtype=np.int64)
    for t in range(ids.size):
        i = ids[t]
        s = set_of_id[i]
        if resident[i]:
            out[t] = True
            if head[s] == i:
                continue
            p = prv[i]  # i is not the head, so p >= 0
            q = nxt[i]
            nxt[p] = q
            if q >= 0:
                prv[q] = p
            else:
                tail[s] = p
        else:
            out[t] = False
            if count[s] == ways:  # evict the LRU line (the tail)
                v = tail[s]
                p = prv[v]
                if p >= 0:
                    nxt[p] = -1
                else:
                    head[s] = -1
                tail[s] = p
                resident[v] = False
            else:
                count[s] += 1
            resident[i] = True
        h = head[s]
        prv[i] = -1
        nxt[i] = h
        if h >= 0:
            prv[h] = i
        else:
            tail[s] = i
        head[s] = i


def _hit_mask_list(lines: np.ndarray, cache: CacheConfig) -> np.ndarray:
    out = np.empty(lines.size, dtype=np.bool_)
    if lines.size:
        ids, uniq = dense_ids(lines)
        set_of_id = (uniq % np.uint64(cache.sets)).astype(np.int64)
        _lru_list_kernel(ids, set_of_id, cache.sets, cache.ways, out)
    return out


def _hit_mask_stack(lines: np.ndarray, cache: CacheConfig) -> np.ndarray:
    out = np.empty(lines.size, dtype=np.bool_)
    if lines.size:
        _lru_stack_kernel(lines, cache.sets, cache.ways, out)
    return out


def hit_mask(lines: np.ndarray, cache: CacheConfig) -> np.ndarray:
    """Per access, True when it hits (SPEC §2.3, temporal conflict sets; exact LRU).

    lines: line numbers (e.g. from line_addresses) in access order. Line m maps to set m mod K;
    a reference hits iff it is not the first to m and fewer than A distinct other lines of its
    set were referenced since the previous reference to m. O(n * A) time (usually far less:
    the scan stops at the hit) for A <= 64, O(n log n) above; O(n) memory. The input is not
    modified.
    """
    arr = as_uint64_1d(lines, "line numbers")
    if cache.ways > _STACK_MAX_WAYS:
        return _hit_mask_list(arr, cache)
    return _hit_mask_stack(arr, cache)


def analyze_cache(lines: np.ndarray, cache: CacheConfig) -> CacheStats:
    """Accesses and hits of a line trace through cache (SPEC §2.3)."""
    mask = hit_mask(lines, cache)
    return CacheStats(accesses=int(mask.size), hits=int(np.count_nonzero(mask)))


@njit(cache=True, nogil=True)
def _sector_stack_kernel(
    addrs, part, active, line_shift, sector_shift, sectors_per_line, n_sets, ways, n_parts, out
):  # pragma: no cover - numba
    """Like _lru_stack_kernel, with a fetched-sector bitmask moving along with each line.
    ``part`` (empty: all 0) picks one of ``n_parts`` independent caches for each access (one
    L1 per SM); an access not ``active`` (empty: all are) passes by, out False."""
    stack = np.empty(n_parts * n_sets * ways, dtype=np.uint64)
    valid = np.empty(n_parts * n_sets * ways, dtype=np.uint64)
    fill = np.zeros(n_parts * n_sets, dtype=np.int64)
    k = np.uint64(n_sets)
    lsh = np.uint64(line_shift)
    ssh = np.uint64(sector_shift)
    sector_mask = np.uint64(sectors_per_line - 1)
    one = np.uint64(1)
    some = active.shape[0] > 0
    parted = part.shape[0] > 0
    for t in range(addrs.size):
        if some and not active[t]:
            out[t] = False
            continue
        a = addrs[t]
        m = a >> lsh
        bit = one << ((a >> ssh) & sector_mask)
        s = np.int64(m % k) + (part[t] * n_sets if parted else 0)
        base = s * ways
        f = fill[s]
        pos = _way_of(stack, base, f, m)
        if pos >= 0:
            bits = valid[base + pos]
            out[t] = (bits & bit) != 0
            bits |= bit
        else:
            out[t] = False
            bits = bit
            pos = _way_of_miss(fill, s, f, ways)
        for i in range(pos, 0, -1):
            stack[base + i] = stack[base + i - 1]
            valid[base + i] = valid[base + i - 1]
        stack[base] = m
        valid[base] = bits


def sector_hit_mask(
    byte_addresses: np.ndarray,
    cache: CacheConfig,
    sector_bytes: int,
    parts: np.ndarray | None = None,
    n_parts: int = 1,
    active: np.ndarray | None = None,
) -> np.ndarray:
    """Per access, True when it hits in a sectored LRU cache (SPEC §2.3 with sectors).

    With ``parts``, access t goes to cache ``parts[t]`` of ``n_parts`` identical, independent
    caches (the L1 of each SM), all in one pass; accesses not ``active`` skip the caches and
    are reported as misses.

    Tags and LRU order are kept per line (line hits are exactly hit_mask's); an access hits
    only when its line is resident and its sector was fetched since the line was allocated.
    A miss (line or sector) fetches the sector; a line miss allocates the line with only that
    sector valid. sector_bytes is a power of two dividing line_bytes, at most 64 sectors a line.
    """
    sector_bytes = _check_positive_int("sector_bytes", sector_bytes)
    if not _is_pow2(sector_bytes) or sector_bytes > cache.line_bytes:
        raise ValueError(
            f"sector_bytes must be a power of two <= line_bytes={cache.line_bytes}, "
            f"got {sector_bytes}"
        )
    sectors_per_line = cache.line_bytes // sector_bytes
    if sectors_per_line > _MAX_SECTORS_PER_LINE:
        raise ValueError(
            f"at most {_MAX_SECTORS_PER_LINE} sectors per line are supported, got "
            f"{sectors_per_line} ({cache.line_bytes} B lines / {sector_bytes} B sectors)"
        )
    addrs = as_uint64_1d(byte_addresses, "byte addresses")
    out = np.empty(addrs.size, dtype=np.bool_)
    if parts is not None and len(parts) != addrs.size:
        raise ValueError(f"expected one part per access, got {len(parts)} for {addrs.size}")
    if active is not None and len(active) != addrs.size:
        raise ValueError(f"expected one flag per access, got {len(active)} for {addrs.size}")
    if addrs.size:
        part = np.zeros(0, np.int64) if parts is None else np.asarray(parts, np.int64)
        if len(part) and (part.min() < 0 or part.max() >= n_parts):
            raise ValueError(f"parts must lie in [0, {n_parts}), got {part.min()}..{part.max()}")
        _sector_stack_kernel(
            addrs,
            part,
            np.zeros(0, np.bool_) if active is None else np.asarray(active, np.bool_),
            cache.line_bytes.bit_length() - 1,
            sector_bytes.bit_length() - 1,
            sectors_per_line,
            cache.sets,
            cache.ways,
            max(n_parts, 1),
            out,
        )
    return out
