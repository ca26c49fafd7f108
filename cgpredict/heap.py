"""Freed memory kept for reuse in a cgpredict process (glibc's malloc, Linux).

An analysis allocates arrays of the trace's size (tens to hundreds of MB) and frees them;
the next analysis (another kernel, another block shape, the advisor's next fix) allocates
the same again. glibc serves each such array with a fresh ``mmap`` and unmaps it on
``free``, so every analysis pays the kernel for zeroing its pages anew: on the README's
2-core machine that was 4 of `advise SYR2K`'s 8 s, as system time (`perf`: clear_page).
Kept in the heap instead, freed memory is reused without a page fault (6.5 s).

This is a setting of the whole process, made by the command line for its own short-lived
process (and inherited by the workers it forks); a notebook importing the library keeps its
own allocator's behaviour unless it calls ``keep_freed_memory`` itself.
"""

from __future__ import annotations

import ctypes
import os
import platform

# mallopt parameters (glibc malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8
_NEVER_TRIM = 2**31 - 1  # bytes of free heap top before memory is handed back (an int)

_done = False


def keep_freed_memory() -> bool:
    """Serve large arrays from the heap and never hand freed heap back to the system, in
    one arena shared by every thread, so that a freed array's pages are reused; True when
    the allocator took the settings (glibc only; elsewhere, or with CGPREDICT_MALLOC=system
    in the environment, nothing changes)."""
    global _done
    if _done:
        return True
    if os.environ.get("CGPREDICT_MALLOC") == "system" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - glibc has it
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = all(
        mallopt(param, value) == 1
        for param, value in (
            (_M_ARENA_MAX, 1),  # a thread's arena could not hold an array over 64 MB anyway
            (_M_MMAP_MAX, 0),  # large blocks from the heap (glibc still maps if it cannot grow)
            (_M_TRIM_THRESHOLD, _NEVER_TRIM),
        )
    )
    _done = ok
    return ok
