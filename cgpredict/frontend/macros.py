"""Size macros evaluated as C evaluates them (SPEC §2.1 "trace size" vs "work size").

A size macro's default is whatever the compiler makes of its ``#define``: ``1024``,
``(1 << 24)``, ``4096 * 4``, another macro, ``sizeof(struct cell)``. Rather than reading the
text, the source is compiled once more (front end only, no optimisation) with one line per
macro appended::

    #ifdef N
    static const long long __cgp_value_N = ((N) | 0);
    #endif

and the values are read from the IR's initialisers. ``| 0`` makes a non-integer value (a
floating constant, a string) an error, as a file-scope initialiser makes a value that is not a
constant expression one; either error names the macro and its text, never a silent fallback.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..errors import CompileError, RegionError
from ..tempdirs import make_tempdir
from .compiler import find_compiler

_PREFIX = "__cgp_value_"
_VALUE = re.compile(rf"^@{_PREFIX}(\w+) = internal (?:unnamed_addr )?constant i64 (-?\d+)", re.M)
_DIAG = re.compile(r"^[^\n:]*:(\d+):\d+: error: (.*)$", re.M)


def probe_text(source_text: str, names: list[str]) -> tuple[str, int]:
    """The source with one value probe per macro appended, and the line of the first probe."""
    body = source_text if source_text.endswith("\n") else source_text + "\n"
    first = body.count("\n") + 1
    lines = []
    for name in names:
        lines += [
            f"#ifdef {name}",
            f"__attribute__((used)) static const long long {_PREFIX}{name} = (({name}) | 0);",
            "#endif",
        ]
    return body + "\n".join(lines) + "\n", first


def macro_text(source_text: str, name: str) -> str:
    """The replacement text of the last ``#define name`` of the source (for messages only)."""
    found = re.findall(rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(name)}\b[ \t]*(.*)$", source_text,
                       re.M)
    return found[-1].strip() if found else "?"


def evaluate_macros(
    source_text: str,
    names: list[str],
    defines: dict[str, int] | None = None,
    include_dir: Path | None = None,
    optional: set[str] | None = None,
    required: set[str] | None = None,
    display_name: str | None = None,
) -> dict[str, int]:
    """Values of the macros ``names`` that the source defines, as the compiler evaluates them
    with ``defines`` given on the command line (as -D). Macros it does not define are left
    out. A macro whose value is not an integer constant expression raises RegionError, unless
    it is ``optional`` (a guessed size, e.g. any ``#ifndef`` macro) and not ``required``.
    ``display_name``: the source file's name, for the compiler's own diagnostics."""
    names = sorted(set(names))
    if not names:
        return {}
    optional = set(optional or ()) - set(required or ())
    while names:
        text, first = probe_text(source_text, names)
        ok, out = _compile_probe(text, defines or {}, include_dir)
        if ok:
            return {m.group(1): int(m.group(2)) for m in _VALUE.finditer(out)}
        bad = _failed_macros(out, names, first)
        if not bad:  # the source's own error: shown against the user's file, not the probe
            out = re.sub(r"[^\s:]*cgp-macros-[^/\s]+/probe\.c", display_name or "the source", out)
            raise CompileError(f"evaluating the size macros failed:\n{out.strip()}")
        for name, why in bad.items():
            if name not in optional:
                raise RegionError(
                    f"size macro {name} = {macro_text(source_text, name)!r} is not an integer "
                    f"constant expression the compiler can evaluate ({why})"
                )
        names = [n for n in names if n not in bad]  # not a size after all (e.g. 1.5)
    return {}


def _compile_probe(text: str, defines: dict[str, int], include_dir: Path | None):
    """(compiled?, IR text or the compiler's diagnostics) of the probe source ``text``."""
    cc = find_compiler()
    with make_tempdir("cgp-macros-") as tmp:
        src, out = Path(tmp, "probe.c"), Path(tmp, "probe.ll")
        src.write_text(text)
        args = [*cc.command, "-S", "-emit-llvm", "-O0", "-w", "-std=gnu11", "-o", str(out)]
        args += [f"-D{k}={v}" for k, v in defines.items()]
        args += [f"-I{include_dir}"] if include_dir else []
        try:
            res = subprocess.run([*args, str(src)], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            raise CompileError("evaluating the size macros: the compiler did not finish") from None
        if res.returncode != 0 or not out.exists():
            return False, res.stderr
        return True, out.read_text()


def _failed_macros(stderr: str, names: list[str], first: int) -> dict[str, str]:
    """Macro -> first error, for the probe lines (3 per macro from line ``first``) that
    failed; empty when only the source's own lines failed."""
    bad: dict[str, str] = {}
    for m in _DIAG.finditer(stderr):
        k = (int(m.group(1)) - first) // 3
        if int(m.group(1)) >= first and k < len(names):
            bad.setdefault(names[k], m.group(2))
    return bad
