"""Finding a C compiler whose LLVM IR llvmlite understands, and compiling C to IR (SPEC §2.1).

Discovery order: ``$CGP_CC`` (a command line, e.g. ``clang-18``), then ``clang`` on PATH when the
IR it emits parses with the installed llvmlite, then the clang inside the ``ziglang`` PyPI package
(``python -m ziglang cc``), which needs no root to install.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import CompileError, ToolchainError

#: Dead-store elimination within a block only, as NVVM's keeps the stores of the ports
#: (eq. (12w), docs/models.md): clang's MemorySSA DSE walks to other blocks at a cost of 5 in
#: a budget of 90 (``-dse-memoryssa-walklimit``); at 1000 a block it never leaves the store's
#: own. So a register-promoted sum keeps its store at the loop's exit and the store before the
#: loop (``mean[j] = 0; for (...) mean[j] += ...; mean[j] /= n``: 3 stores, as the sm_90 SASS
#: of the restrict CORR and COVAR means; clang's default deletes both: 1).
DSE_FLAGS = ("-mllvm", "-dse-memoryssa-otherbb-cost=1000")

#: Flags that keep one IR loop iteration equal to one source iteration (SPEC §2.1).
IR_FLAGS = (
    "-O1",
    "-g",
    "-fno-unroll-loops",
    "-fno-vectorize",
    "-fno-slp-vectorize",
    "-fno-discard-value-names",
    "-Wno-unknown-pragmas",
    "-std=gnu11",
    # a size given with -D that the file then #defines anyway would be silently ignored
    "-Werror=macro-redefined",
    # no load PRE: it would carry a loaded value from one pseudo-thread to the next
    "-mllvm",
    "-enable-load-pre=false",
    # dead stores deleted within their block only, as NVVM does (eq. (12w))
    *DSE_FLAGS,
)

_DEFINE = re.compile(r"^define\b[^@]*@(\"[^\"]+\"|[\w.$-]+)\(")

_PROBE_C = "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }\n"


@dataclass(frozen=True)
class Compiler:
    """A C compiler command and where it came from."""

    command: tuple[str, ...]
    origin: str  # "CGP_CC", "PATH" or "ziglang"
    version: str

    def describe(self) -> str:
        return f"{shlex.join(self.command)} ({self.origin}; {self.version})"


def _version(command: tuple[str, ...]) -> str:
    try:
        out = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    first = (out.stdout or out.stderr).strip().splitlines()
    return first[0] if first else "unknown"


def _emits_parsable_ir(command: tuple[str, ...]) -> bool:
    """True when ``command`` compiles a probe to IR that llvmlite parses."""
    import llvmlite.binding as llvm

    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "probe.c"), Path(tmp, "probe.ll")
        src.write_text(_PROBE_C)
        try:
            res = subprocess.run(
                [*command, "-S", "-emit-llvm", "-O1", "-o", str(out), str(src)],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=tmp,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        if res.returncode != 0 or not out.exists():
            return False
        try:
            # a context of its own: numba may be starting in another thread (warmup.py)
            mod = llvm.parse_assembly(out.read_text(), context=llvm.create_context())
            mod.verify()
            mod.get_function("f")  # the probe's function must really be there
        except (RuntimeError, NameError):
            return False
    return True


def _probed(command: tuple[str, ...], origin: str) -> Compiler | None:
    """``command`` as a Compiler when it emits IR llvmlite parses, else None. Its
    ``--version`` runs on a thread beside the probe compile (two child processes at once:
    the cold run waits for one of them, not both in turn)."""
    version: list[str] = []
    asked = threading.Thread(target=lambda: version.append(_version(command)), daemon=True)
    asked.start()
    usable = _emits_parsable_ir(command)
    asked.join()
    return Compiler(command, origin, version[0]) if usable else None


@functools.lru_cache(maxsize=1)
def find_compiler() -> Compiler:
    """The compiler to use, following the discovery order in the module docstring."""
    env = os.environ.get("CGP_CC")
    if env:
        found = _probed(tuple(shlex.split(env)), "CGP_CC")
        if found is None:
            raise ToolchainError(f"$CGP_CC={env!r} does not emit LLVM IR that llvmlite can parse")
        return found
    for name in ("clang",):
        path = shutil.which(name)
        found = _probed((path,), "PATH") if path else None
        if found is not None:
            return found
    cmd = _ziglang_cc()
    _usable_zig_cache()
    found = _probed(cmd, "ziglang")
    if found is not None:
        return found
    raise ToolchainError(
        "no usable C compiler: install clang matching llvmlite's LLVM, or `pip install ziglang`"
    )


def _usable_zig_cache() -> None:
    """Point zig's global cache (``$XDG_CACHE_HOME/zig`` or ``~/.cache/zig``) at a private
    folder under the temp dir when that location cannot be made (a file where the folder
    should be, read-only): zig cannot compile without one."""
    if os.environ.get("ZIG_GLOBAL_CACHE_DIR"):
        return
    xdg = os.environ.get("XDG_CACHE_HOME")
    default = (Path(xdg) if xdg else Path.home() / ".cache") / "zig"
    try:
        default.mkdir(parents=True, exist_ok=True)
        if os.access(default, os.W_OK | os.X_OK):
            return
    except OSError:
        pass
    import tempfile

    os.environ["ZIG_GLOBAL_CACHE_DIR"] = str(
        Path(tempfile.gettempdir()) / f"cgpredict-zig-{os.getuid()}"
    )


def _ziglang_cc() -> tuple[str, ...]:
    """The ziglang wheel's ``zig cc``: its binary called directly when it is where the wheel
    puts it (``python -m ziglang`` only execs it, after a Python start-up of its own, about
    30 ms per compiler call), else through ``python -m ziglang``."""
    import importlib.util

    spec = importlib.util.find_spec("ziglang")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        zig = Path(loc) / "zig"
        if os.name == "posix" and zig.is_file() and os.access(zig, os.X_OK):
            return (str(zig), "cc")
    return (sys.executable, "-m", "ziglang", "cc")


def compiler_identity() -> dict[str, str]:
    """What decides which compiler ``find_compiler`` picks and what it emits, found without
    running it (a cache key: ``diskcache``): ``$CGP_CC``, the ``clang`` on PATH with its
    size and time stamp, the ziglang and llvmlite versions, and the IR flags."""
    from importlib import metadata

    def version(pkg: str) -> str:
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return "none"

    clang = shutil.which("clang") or ""
    try:
        st = os.stat(clang) if clang else None
    except OSError:
        st = None
    return {
        "CGP_CC": os.environ.get("CGP_CC", ""),
        "clang": f"{clang}:{st.st_size}:{st.st_mtime_ns}" if st else "",
        "ziglang": version("ziglang"),
        "llvmlite": version("llvmlite"),
        "flags": " ".join(IR_FLAGS),
    }


def _clean_diagnostics(stderr: str, rename: dict[str, str]) -> str:
    """The compiler's diagnostics with temporary paths replaced and driver noise removed."""
    lines = [x for x in stderr.splitlines() if "argument unused during compilation" not in x]
    text = "\n".join(lines).strip()
    for old, new in rename.items():
        text = text.replace(old, new)
    return text


def _run_compiler(args: list[str], what: str, rename: dict[str, str] | None = None) -> None:
    try:
        res = subprocess.run(args, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as exc:
        raise CompileError(f"{what}: the compiler did not finish in 300 s") from exc
    if res.returncode != 0:
        raise CompileError(f"{what} failed:\n{_clean_diagnostics(res.stderr, rename or {})}")


def compile_to_ir(
    source: Path,
    out_ll: Path,
    macros: dict[str, str],
    include: Path | None = None,
    display_name: str | None = None,
    include_dirs: tuple[Path, ...] = (),
    noinline: tuple[str, ...] = (),
    front_edit: Callable[[str], str] | None = None,
) -> str | None:
    """Compile ``source`` to textual LLVM IR at ``out_ll`` with the flags of SPEC §2.1.

    ``noinline`` names functions to keep out of line (kernels given by ``--function``): the
    source is compiled in two steps, clang's front end without its optimisation passes, then
    the same -O1 pipeline on that IR with ``noinline`` added to those functions, so the code
    inside them is what -O1 makes of it, only not copied into its callers. ``front_edit``
    (the port's run-time loop bounds: ``loop_bounds.opaque_bounds``) rewrites that unoptimised IR
    too, in the same two steps. Returns the unoptimised IR when ``noinline`` is given (every
    function the source defines and uses), else None."""
    cc = find_compiler()
    args = [*cc.command, "-S", "-emit-llvm", *IR_FLAGS]
    args += [f"-D{k}={v}" for k, v in macros.items()]
    args += [f"-I{d}" for d in include_dirs]
    if include is not None:
        args += ["-include", str(include)]
    rename = {str(source): display_name} if display_name else {}
    what = f"compiling {display_name or source}"
    as_c = ["-x", "c", str(source)]  # any file name is compiled as C (a .h too)
    if not noinline and front_edit is None:
        _run_compiler([*args, "-o", str(out_ll), *as_c], what, rename)
        return None
    front = out_ll.with_name(out_ll.stem + ".front.ll")
    _run_compiler(
        [*args, "-Xclang", "-disable-llvm-passes", "-o", str(front), *as_c], what, rename
    )
    unoptimised = front.read_text()
    edited = mark_noinline(unoptimised, noinline)
    front.write_text(front_edit(edited) if front_edit is not None else edited)
    _run_compiler([*cc.command, "-S", "-emit-llvm", *IR_FLAGS, "-o", str(out_ll), str(front)],
                  f"optimising {display_name or source}", rename)
    return unoptimised if noinline else None


def mark_noinline(ir_text: str, names: tuple[str, ...]) -> str:
    """``ir_text`` with the function attribute ``noinline`` on the definitions of ``names``
    (written after the parameter list, where LLVM accepts attributes beside a ``#N`` group;
    an ``alwaysinline`` there would contradict it and is dropped)."""
    out = []
    for line in ir_text.split("\n"):
        name = _defined_name(line)
        if name in names:
            close = _params_end(line, line.index("@" + _quoted(name)) + len(_quoted(name)) + 1)
            head, tail = line[:close], line[close:].replace(" alwaysinline", "")
            line = f"{head} noinline{tail}"
        out.append(line)
    return "\n".join(out)


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[\w.$-]+", name) else f'"{name}"'


def _defined_name(line: str) -> str | None:
    m = _DEFINE.match(line)
    return m.group(1).strip('"') if m else None


def _params_end(line: str, open_paren: int) -> int:
    """Index just after the parenthesis closing the one at ``open_paren``."""
    depth = 0
    for i in range(open_paren, len(line)):
        depth += line[i] == "("
        depth -= line[i] == ")"
        if depth == 0:
            return i + 1
    return len(line)


def link_executable(ir_file: Path, runtime_c: Path, out_exe: Path) -> None:
    """Build the instrumented program from its IR and the runtime's C source."""
    cc = find_compiler()
    args = [
        *cc.command,
        "-O1",
        "-Wno-override-module",
        "-o",
        str(out_exe),
        str(ir_file),
        str(runtime_c),
        "-lm",
        "-Wl,--wrap=malloc",  # heap arrays aligned like cudaMalloc (runtime/cgp_runtime.c)
        "-Wl,--wrap=calloc",
    ]
    _run_compiler(args, "linking the instrumented program")
