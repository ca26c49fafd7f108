"""numba's compiled kernels that every ``cgpredict run`` calls, read from its cache early.

numba reads a cached kernel from disk at its first call in a process (about 10 ms of CPU
each, measured on the README's 2-core machine: ~0.15-0.2 s for the 17 of a 3MM run), on the
thread that calls it: the analysis. ``preload()`` reads them on the warm-up thread instead
(``warmup``), while the main thread waits for the C compiler. It only ever *reads*: a
signature is loaded only where the cache's index holds an entry for it under this numba,
this machine and this source (the same key numba's own lookup uses) and its data file is
there, so a kernel missing from the cache or stale is left to its first call, which
compiles it as before. What a call finds loaded is what it would have loaded itself:
predictions do not change.
"""

from __future__ import annotations

import importlib
import os

__all__ = ["RUN_KERNELS", "cached_signatures", "preload"]

#: (module, function) of the numba kernels that the analysis of every corpus kernel calls
#: (found by recording ``Dispatcher.compile`` over `run` of 3MM, SYR2K, GEMM and the tiled
#: files; the tiled files' shared-memory kernels are left to their first call).
RUN_KERNELS: tuple[tuple[str, str], ...] = (
    ("cgpredict.warps", "map_kernel"),
    ("cgpredict.warp_order", "_count_threads"),
    ("cgpredict.warps", "_shared_addresses"),
    ("cgpredict.warp_order", "_warp_gather"),
    ("cgpredict.warp_order", "_count_divergent"),
    ("cgpredict.hashing", "_dense_ids_kernel"),
    ("cgpredict.memory.issue", "_issue_perm"),
    ("cgpredict.memory.issue", "_distinct_lines"),
    ("cgpredict.memory.transactions", "_classify_kernel"),
    ("cgpredict.memory.transactions", "_tally"),
    ("cgpredict.memory.lru", "_lru_stack_kernel"),
    ("cgpredict.memory.reuse", "_scaled_hits"),
    ("cgpredict.port_pairs", "_store_counts"),
    ("cgpredict.port_pairs", "_reload_counts"),
)


def cached_signatures(dispatcher) -> list:
    """The signatures of ``dispatcher`` that numba's cache holds for this numba, machine and
    source (its index keys that equal the key numba's lookup computes, their data file
    present); [] when none, or when the cache cannot be inspected (numba's internals
    moved)."""
    try:
        cache = dispatcher._cache
        index = cache._cache_file._load_index()
        codegen = dispatcher.targetctx.codegen()
        return [
            key[0] for key, data in index.items()
            if key == cache._index_key(key[0], codegen)
            and os.path.exists(os.path.join(cache._cache_path, data))
        ]
    except Exception:
        return []


def _dispatcher(module: str, name: str):
    """The numba dispatcher ``module.name``, or None (not importable, or not numba's)."""
    try:
        fn = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return fn if hasattr(fn, "_cache") and hasattr(fn, "overloads") else None


def preload(kernels: tuple[tuple[str, str], ...] = RUN_KERNELS) -> int:
    """Read from numba's cache every cached signature of ``kernels`` not loaded yet (never
    compiling: see the module docstring); returns how many were read."""
    done = 0
    for module, name in kernels:
        disp = _dispatcher(module, name)
        if disp is None:
            continue
        for sig in cached_signatures(disp):
            if tuple(getattr(sig, "args", sig)) in disp.overloads:
                continue
            try:
                disp.compile(sig)  # in the index under this key: numba reads it from disk
            except Exception:  # pragma: no cover - left to the first call, as before
                continue
            done += 1
    return done
