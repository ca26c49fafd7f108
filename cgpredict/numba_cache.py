"""Where numba keeps cgpredict's compiled kernels, and whether they are there (``cold``).

The prediction asks this before its first analysis, to say on the progress line that numba
compiles its kernels now (``numba_warm`` compiles them ahead, at build time). Apart from
``numba_warm`` (which runs the command line) so that the pipeline imports nothing above it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["cache_dir", "cold"]


def _probe_cache():
    """numba's cache of one kernel every analysis calls (the pseudo-warps' index map)."""
    from .warps import map_kernel

    return getattr(map_kernel, "_cache", None)


def cache_dir() -> Path | None:
    """Where numba keeps cgpredict's compiled kernels in this process (None: unknown)."""
    cache = _probe_cache()
    path = getattr(cache, "_cache_path", None)
    return Path(path) if path else None


def cold() -> bool:
    """True when numba has no usable compiled kernels of cgpredict for this numba version
    and this source: the next analysis compiles them (about 15 s, once). False when they are
    there, or when numba's cache cannot be inspected."""
    cache = _probe_cache()
    try:
        return not cache._cache_file._load_index()  # {}: missing, other version, stale
    except Exception:  # numba's internals moved: say nothing rather than something wrong
        return False
