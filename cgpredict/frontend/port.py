"""Which CUDA port is predicted: arrays as plain pointers, or each array ``__restrict__``.

The C being traced has its arrays as globals (or locals), so the C compiler knows that ``C``
and ``A`` never overlap and keeps ``C[i][j] += A[i][k] * B[k][j]`` in a register across the
``k`` loop. The CUDA a user writes first (and PolyBench/GPU, whose times are measured) passes
every array as a plain ``float *`` kernel parameter: nvcc must assume that the pointers may
alias, so it stores the accumulator on every iteration (forwarding the stored value to the
next iteration's read) and cannot hoist a load across a store to another array.

``plain`` reproduces that aliasing in the C itself: inside each marked kernel every array the
loop nest indexes is reached through a pointer the optimiser cannot see through (an empty
``asm`` takes the array's address and hands back "some pointer"), exactly as a kernel
parameter is opaque to nvcc. Addresses, source lines and columns are unchanged, so the trace
and every report line up with the source. ``restrict`` keeps the arrays as they are: what the
compiler may assume of distinct arrays is what ``__restrict__`` lets nvcc assume.
"""

from __future__ import annotations

import re

import numpy as np

PORTS = ("plain", "restrict")
#: an opaque pointer in the IR: (its SSA name, the array it hides) -- ``%0 = asm ...(ptr @A)``
OPAQUE_POINTER = re.compile(
    r"%([\w.]+) = (?:tail )?call ptr asm [^\n]*?\(ptr (?:nonnull )?[%@]([\w.]+)\)"
)
DEFAULT_PORT = "plain"

_INDEXED = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*\[")
_DECLARED = re.compile(
    r"\b(?:char|short|int|long|float|double|unsigned|signed|_Bool|bool|size_t|"
    r"u?int(?:8|16|32|64)_t|struct\s+\w+|union\s+\w+)\b[\w\s*]*?\b([A-Za-z_]\w*)\s*\["
)
_C_WORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while _Bool __typeof__ typeof".split()
)


def opaque_aliases(ir_text: str) -> dict[tuple[str, str], str]:
    """(function, SSA name) -> the array an opaque pointer of the plain port stands for (SSA
    names such as ``%0`` are per function)."""
    out: dict[tuple[str, str], str] = {}
    function = ""
    for line in ir_text.split("\n"):
        if line.startswith("define "):
            m = re.search(r"@([\w.$]+)\(", line)
            function = m.group(1) if m else ""
        elif "asm" in line:
            for alias, base in OPAQUE_POINTER.findall(line):
                out[(function, alias)] = base
    return out


def check_port(port: str) -> str:
    """``port`` if it names a known port, else ValueError naming the choices."""
    if port not in PORTS:
        raise ValueError(f"unknown port {port!r} (want {' or '.join(PORTS)})")
    return port


def indexed_arrays(loop_text: str, source_text: str) -> tuple[str, ...]:
    """Names the loop nest indexes as arrays or pointers (``A[...]``), in order of first use,
    less C keywords, object-like macros and arrays declared inside the loop nest itself."""
    macros = set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", source_text, re.M))
    local = set(_DECLARED.findall(loop_text))
    seen: list[str] = []
    for name in _INDEXED.findall(_strip_comments_and_literals(loop_text)):
        if name not in seen and name not in _C_WORDS and name not in macros and name not in local:
            seen.append(name)
    return tuple(seen)


def plain_port_brackets(arrays: tuple[str, ...], tag: int) -> tuple[str, str]:
    """The text that opens (before the kernel's ``for``) and closes (after it) a scope in
    which each array is shadowed by an opaque pointer to its first element: what a kernel
    parameter ``float *A`` is to nvcc. Both are one line, so line numbers do not move."""
    if not arrays:
        return "", ""
    tmp = [f"__cgp_p{tag}_{a}" for a in arrays]
    hide = " ".join(
        f"__typeof__(&{a}[0]) {t} = {a}; __asm__(\"\" : \"+r\"({t}));"
        for a, t in zip(arrays, tmp)
    )
    shadow = " ".join(f"__typeof__(&{a}[0]) {a} = {t};" for a, t in zip(arrays, tmp))
    return "{ " + hide + " { " + shadow + " ", " } }"


def _strip_comments_and_literals(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', text)


def restoring_stores(
    addr: np.ndarray, lane: np.ndarray, inst_start: np.ndarray, inst_warp: np.ndarray,
    inst_sid: np.ndarray, is_store: np.ndarray,
) -> frozenset[int]:
    """Static stores that write back to the same address in the same pseudo-thread on most
    of their executions: the accumulator a plain port stores on every iteration of a loop
    (``C[i][j] += ...`` over k). A store that writes each address once (``out[i][j] = ...``
    over j) is not one, however often it runs per thread. Arguments: a WarpTrace's columns."""
    if not len(addr) or not len(inst_start) or not np.asarray(is_store).any():
        return frozenset()
    from ..port_pairs import store_counts  # numba: loaded with the analysis, not the tracer

    stores, distinct = store_counts(addr, lane, inst_start, inst_warp, inst_sid, is_store)
    return frozenset(int(s) for s in np.flatnonzero(stores) if distinct[s] < 0.5 * stores[s])


def reloading_loads(
    addr: np.ndarray, lane: np.ndarray, inst_start: np.ndarray, inst_warp: np.ndarray,
    inst_sid: np.ndarray, is_store: np.ndarray, restores: frozenset[int],
) -> frozenset[int]:
    """Static loads that read, on most of their executions, an address their own
    pseudo-thread writes with a restoring store (restoring_stores): the accumulator a plain
    port reloads every iteration because another store between may alias it (nvcc cannot
    forward the stored value). Arguments: a WarpTrace's columns, and the restoring stores."""
    if not restores or not len(addr) or not len(inst_start):
        return frozenset()
    from ..port_pairs import reload_counts

    restoring = np.zeros(len(is_store), np.bool_)
    restoring[np.fromiter(restores, np.int64)] = True
    events, near, hit = reload_counts(addr, lane, inst_start, inst_warp, inst_sid, is_store,
                                      restoring)
    # most of a load's events near a stored address, and most of them its own thread's pair
    return frozenset(int(s) for s in np.flatnonzero(near)
                     if near[s] / events[s] > 0.5 and hit[s] > 0.5 * events[s])
