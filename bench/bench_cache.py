"""Benchmark of cgpredict.memory.lru.hit_mask (SPEC §2.3) against pycachesim.

Run: python bench/bench_cache.py [--accesses 20000000] [--pycachesim-accesses 1000000]

Traces: a GEMM-like warp-ordered line stream (C = A @ B, float32, batches of warps advancing
instruction by instruction: per k, each warp reads one line of A (a broadcast) and two 64-B
lines of B), and uniformly random lines over four times the cache capacity. The cache is the
TK1 L2 of SPEC §2.3 (128 KiB, 64-B lines, 16 ways) plus an H100-like sectored L2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cgpredict.memory import lru as cache_mod
from cgpredict.memory.lru import CacheConfig, hit_mask, line_addresses, sector_hit_mask

FLOAT_BYTES = 4
WARP = 32


def gemm_byte_trace(n_accesses: int, warps_per_batch: int = 8) -> np.ndarray:
    """Byte addresses of a warp-ordered GEMM (first thread of each warp), ~n_accesses long."""
    n = WARP
    while 3 * n**3 // WARP < n_accesses:  # 3 accesses per (warp, k): n * n/32 warps * n k's
        n += WARP
    a_base, b_base = 0, n * n * FLOAT_BYTES
    k = np.arange(n)
    w = np.arange(warps_per_batch)
    out = []
    for i0 in range(0, n, warps_per_batch):
        rows = i0 + w  # one warp per row i, 32 consecutive j
        for j0 in range(0, n, WARP):
            a = a_base + (rows[None, :] * n + k[:, None]) * FLOAT_BYTES  # (k, warp)
            b0 = b_base + (k[:, None] * n + j0) * FLOAT_BYTES + 0 * rows[None, :]
            b1 = b0 + 16 * FLOAT_BYTES  # second half of the warp: the next 64-B line
            out.append(np.stack([a, b0, b1], axis=-1).ravel())
    return np.concatenate(out).astype(np.uint64)[:n_accesses]


def timed(fn, *args):
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


def best_of(repeats: int, fn, *args):
    best = float("inf")
    result = None
    for _ in range(repeats):
        result, dt = timed(fn, *args)
        best = min(best, dt)
    return result, best


def pycachesim_loop(addrs: list[int], cfg: CacheConfig) -> int:
    import cachesim

    mem = cachesim.MainMemory()
    l2 = cachesim.Cache("L2", cfg.sets, cfg.ways, cfg.line_bytes, "LRU")
    mem.load_to(l2)
    mem.store_from(l2)
    sim = cachesim.CacheSimulator(l2, mem)
    for a in addrs:
        sim.load(a, length=1)
    return int(l2.backend.HIT_count)


def pycachesim_iter(addrs: list[int], cfg: CacheConfig) -> int:
    import cachesim

    mem = cachesim.MainMemory()
    l2 = cachesim.Cache("L2", cfg.sets, cfg.ways, cfg.line_bytes, "LRU")
    mem.load_to(l2)
    mem.store_from(l2)
    sim = cachesim.CacheSimulator(l2, mem)
    sim.load(addrs, length=1)  # one call; pycachesim iterates in C
    return int(l2.backend.HIT_count)


def report_compile() -> None:
    tiny = np.arange(8, dtype=np.uint64)
    cfg = CacheConfig(64, 2, 2)
    kernels = [
        ("hit_mask (stack kernel)", cache_mod._lru_stack_kernel, lambda: hit_mask(tiny, cfg)),
        (
            "hit_mask (list kernel, ways > 64)",
            cache_mod._lru_list_kernel,
            lambda: hit_mask(tiny, CacheConfig(64, 1, 128)),
        ),
        (
            "sector_hit_mask",
            cache_mod._sector_stack_kernel,
            lambda: sector_hit_mask(tiny, CacheConfig(128, 2, 2), 32),
        ),
    ]
    for name, kernel, call in kernels:
        _, dt = timed(call)
        st = kernel.stats
        how = "loaded from numba's on-disk cache" if st.cache_hits else "compiled"
        print(f"  first call {name:36s} {dt * 1e3:8.1f} ms ({how})")


def bench_trace(
    name: str, lines: np.ndarray, addrs: np.ndarray, cfg: CacheConfig, n_py: int, repeats: int
) -> None:
    mask, dt = best_of(repeats, hit_mask, lines, cfg)
    rate = lines.size / dt
    print(f"\n{name}: {lines.size:,} accesses, cache {cfg}")
    print(
        f"  hit_mask        {dt:8.3f} s  {rate / 1e6:8.1f} M accesses/s  hit rate {mask.mean():.4f}"
    )

    sub = [int(a) for a in addrs[:n_py]]
    sub_mask, dt_sub = best_of(repeats, hit_mask, lines[:n_py], cfg)
    ours = lines[:n_py].size / dt_sub
    try:
        hits_loop, dt_loop = timed(pycachesim_loop, sub, cfg)
        hits_iter, dt_iter = timed(pycachesim_iter, sub, cfg)
    except ImportError:
        print("  pycachesim not installed: comparison skipped")
        return
    agree = hits_loop == hits_iter == int(sub_mask.sum())
    print(f"  on the first {n_py:,} accesses (hits agree: {agree}):")
    print(f"    hit_mask                 {ours / 1e6:8.2f} M accesses/s")
    for label, t in (("pycachesim load() loop", dt_loop), ("pycachesim load(iterable)", dt_iter)):
        r = n_py / t
        print(f"    {label:24s} {r / 1e6:8.2f} M accesses/s   hit_mask is {ours / r:6.1f}x faster")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accesses", type=int, default=20_000_000)
    parser.add_argument("--pycachesim-accesses", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print("compile / cache-load times:")
    report_compile()

    tk1 = CacheConfig.from_capacity(128 * 1024, 64, 16)
    gemm = gemm_byte_trace(args.accesses)
    bench_trace(
        "GEMM-like", line_addresses(gemm, 64), gemm, tk1, args.pycachesim_accesses, args.repeats
    )

    rng = np.random.default_rng(0)
    footprint = 4 * tk1.capacity_bytes // tk1.line_bytes
    rand_lines = rng.integers(0, footprint, args.accesses).astype(np.uint64)
    bench_trace(
        "random",
        rand_lines,
        rand_lines * np.uint64(64),
        tk1,
        args.pycachesim_accesses,
        args.repeats,
    )

    h100 = CacheConfig.from_capacity(50 * 1024 * 1024, 128, 16)
    big = rng.integers(0, 2 * h100.capacity_bytes, args.accesses).astype(np.uint64)
    _, dt = best_of(args.repeats, sector_hit_mask, big, h100, 32)
    print(
        f"\nsector_hit_mask, random bytes over 2x capacity, {h100}, 32-B sectors: "
        f"{args.accesses / dt / 1e6:.1f} M accesses/s"
    )

    fa = CacheConfig(64, 1, 1024)
    sub = rand_lines[: args.accesses // 4]
    _, dt = best_of(1, hit_mask, sub, fa)
    print(
        f"hit_mask, fully associative 1024 ways (list kernel), random: "
        f"{sub.size / dt / 1e6:.1f} M accesses/s"
    )


if __name__ == "__main__":
    main()
