"""Numba's CPU target started in a background thread while the C compiler works.

The first call of any numba function in a process initialises numba's CPU target (its
registries, LLVM's target machine, and numpy's BLAS through scipy): about 0.8 s on the
2-core machine of the README's figures, paid once per ``cgpredict run``. Tracing spends
about as long waiting for clang, the link and the traced program (child processes), so
``start()`` overlaps the two. The refresh takes numba's own compiler lock, so a numba
function called meanwhile simply waits for it. LLVM's global context is numba's alone while
it runs: cgpredict parses IR in contexts of its own (tracer._verify_ir, compiler's probe).
A fork waits for the warm-up to end (``os.register_at_fork``), so a forked worker (sweep,
explain) never inherits numba's compiler lock held by a thread it does not have.
"""

from __future__ import annotations

import os
import threading

_thread: threading.Thread | None = None
_lock = threading.Lock()


def _refresh() -> None:
    try:
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.registry import cpu_target

        with global_compiler_lock:
            cpu_target.target_context.refresh()
    except Exception:  # pragma: no cover - the first numba call initialises it anyway
        pass


def _join() -> None:
    t = _thread
    if t is not None and t.is_alive() and t is not threading.current_thread():
        t.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_join)


def start() -> None:
    """Begin initialising numba's CPU target, once per process (a no-op afterwards)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_refresh, name="cgp-numba-warmup")
            _thread.start()
