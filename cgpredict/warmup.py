"""The analysis imported and numba's CPU target started on a thread while the C compiler works.

A cold ``cgpredict run`` imports numba and the analysis' modules (about 0.6 s of CPU on the
README's 2-core machine) and initialises numba's CPU target (its registries, LLVM's target
machine: about 0.6 s there, once ``no_blas_probe`` keeps numba from importing scipy's
linear algebra only to ask whether BLAS is there) before its first numba call,
and reads each kernel it calls from numba's cache (``numba_preload``: ~0.2 s for 3MM).
Tracing spends about as long waiting for clang, the link and the traced program (child
processes), so ``start(imports)`` does both on one thread beside it: ``imports`` first (the
caller's: ``prepared`` imports the analysis), then the refresh, which takes numba's own
compiler lock, so a numba function called meanwhile simply waits for it. LLVM's global
context is numba's alone while it runs: cgpredict parses IR in contexts of its own
(tracer._verify_ir, compiler's probe).

Two threads importing one package at once can deadlock in Python's import locks (each
holding a module the other needs), so a thread about to import what the warm-up imports
(numba, the analysis) calls ``join()`` first. A fork waits for it too
(``os.register_at_fork``), so a forked worker (sweep, explain) never inherits numba's
compiler lock held by a thread it does not have; the fork hooks of the modules the warm-up
imports must run after ours, so ``logging`` (whose hook takes its lock) is imported first.
"""

from __future__ import annotations

# logging before our fork hook: a module's hooks run last-registered first, so logging's
# (which takes its lock) must be registered before ours (which waits for the warm-up): else a
# fork taken while the warm-up thread first imports logging (numba does) holds logging's lock
# and waits for a thread that waits for it (a deadlock seen in CI when numba's import moved
# onto the warm-up thread)
import contextlib
import logging  # noqa: F401
import os
import sys
import threading
from collections.abc import Callable, Iterator

__all__ = ["join", "no_blas_probe", "start"]

_thread: threading.Thread | None = None
_lock = threading.Lock()


@contextlib.contextmanager
def no_blas_probe() -> Iterator[None]:
    """numba's ``arraymath``, imported as its CPU target is set up, asks whether scipy's BLAS
    is there by importing ``scipy.linalg`` (its ``_HAVE_BLAS``, which only picks how jitted
    ``np.convolve``/``np.correlate`` take inner products: no cgpredict kernel calls either):
    0.2-0.35 s of CPU a process where scipy is installed (not a dependency of cgpredict).
    While this holds, that import fails at once, so the answer is "no BLAS"; nothing is
    hidden when ``scipy.linalg`` is already imported, and it imports as usual afterwards."""
    hide = "scipy.linalg" not in sys.modules
    if hide:
        sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        yield
    finally:
        if hide and sys.modules.get("scipy.linalg", 0) is None:
            del sys.modules["scipy.linalg"]


def _refresh() -> None:
    try:
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.registry import cpu_target

        with global_compiler_lock, no_blas_probe():
            cpu_target.target_context.refresh()
    except Exception:  # pragma: no cover - the first numba call initialises it anyway
        pass


def _preload() -> None:
    """The kernels every run calls read from numba's cache (``numba_preload``)."""
    try:
        from .numba_preload import preload

        preload()
    except Exception:  # pragma: no cover - each kernel's first call reads it anyway
        pass


def _run(imports: Callable[[], None] | None) -> None:
    """The warm-up thread: ``imports()``, numba's CPU target set up, then the kernels every
    run calls read from numba's cache."""
    if imports is not None:
        imports()
    _refresh()
    _preload()


def join() -> None:
    """Wait for the warm-up to end (a no-op on its own thread, or when none started)."""
    t = _thread
    if t is not None and t.is_alive() and t is not threading.current_thread():
        t.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=join)


def start(imports: Callable[[], None] | None = None) -> None:
    """Begin the warm-up, once per process (a no-op afterwards): ``imports()`` (modules
    that import numba), then numba's CPU target initialised."""
    global _thread
    with _lock:
        if _thread is None:
            # a daemon: a run answered from the cache need not wait for it to exit
            _thread = threading.Thread(target=_run, args=(imports,), name="cgp-numba-warmup",
                                       daemon=True)
            _thread.start()
