"""Whole functions as kernels (``--function NAME``, SPEC §2.1): which functions the IR defines,
and one-line errors for a name that cannot be a kernel: not defined, never called (or its calls
removed by the compiler), or recursive.
"""

from __future__ import annotations

import re

from ..errors import (
    RegionError,
)
from ..instrument.irtext import parse_module


def defined_functions(ir_text: str) -> list[str]:
    """The names of the functions ``ir_text`` defines, sorted."""
    return sorted(parse_module(ir_text).functions)


def check_kernel_functions(
    names: tuple[str, ...], unoptimised: str, optimised: list[str], source_text: str
) -> None:
    """One-line errors for ``--function`` names that cannot be kernels: not defined in the
    source, defined but never called (the compiler drops them), or recursive (no GPU kernel
    launches itself). ``unoptimised`` is the front end's IR, ``optimised`` the functions left
    after -O1."""
    graph = _call_graph(unoptimised)
    for name in names:
        if name not in graph:
            if re.search(rf"\b{re.escape(name)}\s*\([^;{{}}]*\)\s*\{{", source_text):
                raise RegionError(
                    f"--function {name}: it never runs: nothing in the program calls it"
                )
            defined = ", ".join(sorted(graph))
            raise RegionError(f"--function {name}: no such function (defined: {defined})")
        if name not in optimised:
            callers = sorted(f for f, callees in graph.items() if name in callees and f != name)
            why = (
                f"the compiler removed its calls from {', '.join(callers)}, as nothing the "
                f"program prints or stores depends on them"
                if callers
                else "nothing in the program calls it"
            )
            raise RegionError(f"--function {name}: it never runs: {why}")
        cycle = _cycle_through(graph, name)
        if cycle:
            raise RegionError(
                f"--function {name} is recursive ({' -> '.join(cycle)}): a GPU kernel cannot "
                f"launch itself; mark a loop inside it with '#pragma cgp kernel' instead"
            )


def _call_graph(ir_text: str) -> dict[str, set[str]]:
    """The direct callees of every function defined in ``ir_text``."""
    mod = parse_module(ir_text)
    return {
        name: {i.callee for b in fn.blocks for i in b.instrs if i.callee}
        for name, fn in mod.functions.items()
    }


def _cycle_through(graph: dict[str, set[str]], name: str) -> list[str]:
    """A call chain from ``name`` back to itself, or [] when it is not recursive."""
    stack, seen = [(name, [name])], set()
    while stack:
        fn, path = stack.pop()
        for callee in sorted(graph.get(fn) or ()):
            if callee == name:
                return [*path, name]
            if callee in graph and callee not in seen:
                seen.add(callee)
                stack.append((callee, [*path, callee]))
    return []
