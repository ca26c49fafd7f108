"""Trace extraction (SPEC §2.1): C source -> IR -> instrumented program -> run -> trace file.

The instrumented program is built by the same clang that produced the IR (linked with the C
runtime) and run as a subprocess, so a crash or an endless loop in the user's program cannot
take cgpredict down with it, and a timeout can stop it. Only the output path is written; all
intermediate files live in a temporary directory.
"""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import llvmlite.binding as llvm

from ..errors import (
    CompileError,
    OutputExistsError,
    OutputPathError,
    RegionError,
    TraceFormatError,
    TraceRunError,
    check_writable,
)
from ..instrument.memtrace import InstrumentError, MemInstr, instrument
from ..tempdirs import make_tempdir, sweep_once
from .compiler import IR_FLAGS, compile_to_ir, find_compiler, link_executable
from .functions import check_kernel_functions, defined_functions
from .loop_bounds import bound_sites, function_spans, opaque_bounds
from .macros import macro_text
from .port import opaque_aliases
from .regions import PRELUDE, check_pragmas, counter_problem, mark_regions, read_source
from .sandbox import run_confined
from .tracefile import (
    MAGIC,
    STATUS_EVENT_LIMIT,
    STATUS_NESTED,
    RegionInfo,
    Trace,
    TraceHeader,
    read_meta,
    read_trace,
    read_trips,
    sha256_text,
    write_trace,
)

DEFAULT_MAX_EVENTS = 200_000_000
DEFAULT_TIMEOUT_S = 120.0
# a subscript, with up to two levels of subscripts inside it (x[col[k]], a[idx[b[i]]])
_SUBSCRIPT = r"\[(?:[^\[\]]|\[(?:[^\[\]]|\[[^\[\]]*\])*\])*\]"
_ACCESS_TEXT = re.compile(rf"[A-Za-z_]\w*(?:\s*(?:{_SUBSCRIPT}|->\s*\w+|\.\s*\w+))*")
_LVALUE_BEFORE = re.compile(rf"([A-Za-z_]\w*(?:\s*(?:{_SUBSCRIPT}|->\s*\w+|\.\s*\w+))*)\s*$")
_LOOP_VAR = re.compile(r"\bfor\s*\(\s*(?:[A-Za-z_]\w*\s+)*\**([A-Za-z_]\w*)\s*=")
_ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--")


@dataclass(frozen=True)
class TraceOptions:
    """How to trace: macro values, regions given by function name, and limits."""

    macros: dict[str, str] = field(default_factory=dict)
    functions: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_events: int = DEFAULT_MAX_EVENTS
    max_launches: int = 0  # record memory events of the first N launches per region; 0 = all
    count_only: bool = False  # record no memory events: block and loop counts only (probes)
    port: str = "restrict"  # the CUDA port whose aliasing the trace reproduces (port.py)
    # how the calling command names the options a message suggests: `trace` has -D and
    # --max-events, `run` traces at --trace-size and has no event limit option
    size_flag: str = "-D"
    limit_flag: str | None = "--max-events"
    typed: dict[str, str] = field(default_factory=dict)  # size -> as the user typed it


def access_text(source_line: str, column: int) -> str:
    """The array access starting at ``column`` (1-based) of a source line, e.g. ``B[k][j]``.

    clang locates compound assignments at their operator and member loads at the member
    name; both are widened back to the whole access (``C[i][j]``, ``p[i].x``)."""
    if column <= 0:
        return ""
    before, rest = source_line[: column - 1], source_line[column - 1 :]
    if rest.startswith(_ASSIGN_OPS):
        m = _LVALUE_BEFORE.search(before)
        return re.sub(r"\s+", "", m.group(1)) if m else ""
    m = _ACCESS_TEXT.match(source_line, column - 1)
    text = re.sub(r"\s+", "", m.group(0)) if m else ""
    stem = before.rstrip()
    for sep in ("->", "."):
        if text and stem.endswith(sep):
            base = _LVALUE_BEFORE.search(stem[: -len(sep)])
            if base:
                return re.sub(r"\s+", "", base.group(1)) + sep + text
    return text


def _runtime_source() -> Path:
    return Path(str(resources.files("cgpredict.runtime").joinpath("cgp_runtime.c")))


def _check_output_path(output: Path, force: bool) -> None:
    check_writable(output, "trace")  # never opens it: a FIFO must not block
    if output.exists() and not force:
        with open(output, "rb") as f:
            if f.read(8) != MAGIC:
                raise OutputExistsError(
                    f"{output} exists and is not a cgpredict trace; choose another -o or --force"
                )


def trace_program(
    source: Path, output: Path, options: TraceOptions = TraceOptions(), force: bool = False
) -> Trace:
    """Trace the marked regions of ``source`` and write the trace to ``output``: compile,
    instrument, link, run, then the header and the trace file (each step timed)."""
    source = Path(source)
    _check_output_path(output, force)
    text = read_source(source)
    marked = marked_source(source, text, options.macros, options.port, tuple(options.functions))
    _check_counters(source, text, marked, options)
    clock = [time.perf_counter()]
    seconds: dict[str, float] = {}

    def lap(name: str) -> None:
        now = time.perf_counter()
        seconds[name] = now - clock[0]
        clock[0] = now

    sweep_once()  # the leftovers of cgpredict processes that were killed
    with make_tempdir("cgp-") as tmpdir:
        tmp = Path(tmpdir)
        macros = dict(options.macros)
        ir_text, unoptimised, marked, port = _compile(source, text, marked, options, tmp)
        lap("compile")
        inst, fn_regions = _instrumented(source, text, marked, options, ir_text, unoptimised)
        inst_file = tmp / (source.stem + ".cgp.ll")
        inst_file.write_text(inst.ir)
        _verify_ir(inst.ir)
        lap("instrument")
        exe = tmp / "traced"
        link_executable(inst_file, _runtime_source(), exe)
        lap("link")
        events, meta = tmp / "events.bin", tmp / "meta.bin"
        stdout = _run(exe, events, meta, options, tmp)
        trips = read_trips(tmp / "trips.bin")
        lap("run")
        status, n_events, launches, bb, iters, entries, addrs = read_meta(
            meta, len(inst.blocks), len(inst.loops), len(inst.globals)
        )
        _check_status(status, marked, macros, text, options)
        header = TraceHeader(
            source_name=source.name,
            source_sha256=sha256_text(text),
            source_text=text,
            compiler=find_compiler().describe(),
            flags=IR_FLAGS,
            macros=macros,
            regions=_region_infos(inst, marked, fn_regions),
            mem=_mem_with_text(inst, ir_text, text, source.name),
            loops=inst.loops,
            blocks=inst.blocks,
            calls=inst.calls,
            helpers=inst.helpers,
            max_launches=options.max_launches,
            stdout_tail=stdout[-2000:],
            ir_text=ir_text,
            seconds=seconds,
            globals=dict(zip(inst.globals, addrs)),
            port=port,
        )
        try:
            crc = write_trace(output, header, events, launches, bb, iters, entries, trips)
        except OSError as exc:
            raise OutputPathError(f"cannot write trace {output}: {exc.strerror or exc}") from None
        lap("write")
    return read_trace(output, events_crc=crc)  # just written: its events not checksummed again


def _check_counters(source: Path, text: str, marked, options: TraceOptions) -> None:
    """One line when a loop counter of a kernel cannot hold the sizes to trace."""
    sizes = {k: int(v) for k, v in options.macros.items() if str(v).isdigit()}
    problem = counter_problem(text, {**marked.trace_sizes, **sizes})
    if problem:
        line, _, what = problem.partition(": ")
        raise RegionError(f"{source}:{line.removeprefix('line ')}: {what}")


def _compile(source: Path, text: str, marked, options: TraceOptions, tmp: Path):
    """(IR text, the unoptimised IR or None, the marked source, the port) of the marked
    copy of ``source`` compiled in ``tmp``: the plain port falls back to the restrict port
    when its rewrite does not compile; the user's own diagnostics otherwise."""
    src = tmp / (source.stem + ".c")  # a private copy: never the user's name or suffix
    prelude = tmp / "cgp_prelude.h"
    prelude.write_text(PRELUDE)
    ir_file = tmp / (source.stem + ".ll")
    macros = dict(options.macros)
    port = options.port

    def compile_marked() -> str | None:
        src.write_text(marked.text)
        whole = [n for n in options.functions if n not in marked.split_functions]
        spans = [(r.line, r.end_line, r.grid) for r in marked.regions]
        sites = bound_sites(marked.text, spans + function_spans(marked.text, whole), macros)
        return compile_to_ir(
            src,
            ir_file,
            {**macros},
            prelude,
            display_name=str(source),
            include_dirs=(source.resolve().parent,),
            noinline=tuple(options.functions),
            front_edit=(lambda ir: opaque_bounds(ir, sites)) if sites else None,
        )

    try:
        unoptimised = compile_marked()
    except CompileError as exc:
        _check_redefined(str(exc), text, macros, options.typed or {
            n: f"{options.size_flag} {n}={v}" for n, v in macros.items()})
        # Show the diagnostics of the user's own text, not of the marked copy.
        compile_to_ir(source.resolve(), tmp / "plain.ll", {**macros}, display_name=str(source))
        if port == "restrict":
            raise
        # the source compiles but not with its arrays behind pointers (an array the
        # rewrite cannot shadow): trace the restrict port and say so in the header
        marked, port = marked_source(source, text, options.macros, "restrict"), "restrict"
        unoptimised = compile_marked()
    return ir_file.read_text(), unoptimised, marked, port


def _instrumented(source: Path, text: str, marked, options: TraceOptions, ir_text: str,
                  unoptimised: str | None):
    """The instrumented module and the region of every whole --function kernel; one line
    when nothing is marked or a kernel cannot be instrumented."""
    functions = defined_functions(ir_text)
    if not marked.regions and not options.functions:
        raise RegionError(
            f"{source}: no kernel marked: put '#pragma cgp kernel' before a loop nest or "
            f"name a function with --function ({', '.join(functions)})"
        )
    base = len(marked.regions)
    if options.functions:
        check_kernel_functions(
            tuple(options.functions), unoptimised or ir_text, functions, text
        )
    # a function split into its loop nests is traced through their marked regions
    whole = [n for n in options.functions if n not in marked.split_functions]
    fn_regions = {name: base + k for k, name in enumerate(whole)}
    try:
        inst = instrument(ir_text, fn_regions)
    except InstrumentError as exc:
        if exc.region is not None and 0 <= exc.region < len(marked.regions):
            spec = marked.regions[exc.region]
            raise RegionError(f"{source}:{spec.line}: kernel {spec.name} {exc}") from None
        raise RegionError(f"{source}: {exc}") from None
    return inst, fn_regions


def _check_status(status: int, marked, macros: dict, text: str, options: TraceOptions) -> None:
    """One line when the run stopped at the event limit or a kernel began inside another."""
    if status == STATUS_EVENT_LIMIT:
        hint = _size_hint(marked.trace_sizes, macros, text, options.size_flag)
        limit = (f"{options.limit_flag}={options.max_events}" if options.limit_flag
                 else f"the limit of {options.max_events}")
        raise TraceRunError(
            f"the trace exceeds {limit} events; "
            + (
                f"trace a smaller problem size (e.g. {options.size_flag} {hint})"
                if hint
                else "the program may loop endlessly (the file has no size macro to shrink)"
            )
        )
    if status == STATUS_NESTED:  # a bad pragma (exit 2), found only when it ran
        raise RegionError(
            "a marked kernel started inside another marked kernel (a function called from "
            "a kernel holds a kernel pragma, or a --function kernel calls another)"
        )


def _region_infos(inst, marked, fn_regions: dict[str, int]) -> tuple[RegionInfo, ...]:
    """The header's regions: the marked ones, then the whole --function kernels."""
    regions = [
        RegionInfo(
            r.index,
            r.name,
            _region_function(inst, r.index),
            r.line,
            r.end_line,
            tuple((s.array, s.tile_rows, s.tile_cols) for s in r.shared),
            r.grid,
            r.bounds,
        )
        for r in marked.regions
    ]
    regions += [
        RegionInfo(
            i, name, name, 0, 0,
            tuple((h.array, h.tile_rows, h.tile_cols)
                  for h in marked.function_shared.get(name, ())),
        )
        for name, i in fn_regions.items()
    ]  # fmt: skip
    return tuple(regions)


def _mem_with_text(inst, ir_text: str, text: str, source_name: str) -> tuple[MemInstr, ...]:
    """The static memory instructions with their source text, a plain port's opaque
    pointers named by the arrays they stand for."""
    lines = text.split("\n")
    opaque = opaque_aliases(ir_text)  # the plain port's pointers -> their arrays
    fn_of = {b.id: b.function for b in inst.blocks}
    return tuple(
        _with_text(
            replace(m, base=opaque.get((fn_of.get(m.block, ""), m.base), m.base)),
            lines,
            source_name,
        )
        for m in inst.mem
    )


def _check_redefined(
    diagnostics: str, text: str, macros: dict[str, str], typed: dict[str, str] | None = None
) -> None:
    """A size given with -D (or a trace size) that the file #defines unconditionally would be
    ignored by the compiler: one line saying how to make it a size macro, naming the size as
    the user typed it (``typed``) when they did."""
    m = re.search(r"'(\w+)' macro redefined", diagnostics)
    if m and m.group(1) in macros:
        name = m.group(1)
        what = (typed or {}).get(name) or f"size {name}={macros[name]}"
        raise RegionError(
            f"{what} cannot take effect: the file #defines {name} as "
            f"{macro_text(text, name)!r} unconditionally; write '#ifndef {name}' / "
            f"'#define {name} ...' / '#endif' so that a -D or trace size can replace it"
        )


def _region_function(inst, index: int) -> str:
    for b in inst.blocks:
        if b.region == index:
            return b.function
    return ""


def _with_text(m: MemInstr, lines: list[str], name: str) -> MemInstr:
    own = Path(m.file).name == name
    line = lines[m.line - 1] if own and 0 < m.line <= len(lines) else ""
    text = access_text(line, m.column)
    if not text and line and m.base.isidentifier():  # a borrowed line: find the array there
        hit = re.search(rf"\b{re.escape(m.base)}\s*[\[.-]", line)
        text = access_text(line, hit.start() + 1) if hit else ""
    if not text and line and m.base.isidentifier():
        text = hoisted_text(lines, m.line, m.base)
    return replace(m, file=name if own else m.file, base=text or m.base)


def hoisted_text(lines: list[str], line: int, base: str, reach: int = 40) -> str:
    """The access of array ``base`` that a load located at ``line`` (1-based) stands for when
    the line does not name it: the compiler hoisted it out of the loop that starts there and
    gave it the loop's location. The first access of ``base`` in the lines below whose text
    does not use that loop's variable (``px[i]``, not ``px[j]``, hoisted out of the j loop);
    else the first access; '' when there is none."""
    var = _LOOP_VAR.search(lines[line - 1])
    found = []
    for text_line in lines[line : line + reach]:
        for hit in re.finditer(rf"\b{re.escape(base)}\s*[\[.-]", text_line):
            text = access_text(text_line, hit.start() + 1)
            if text and text != base:
                found.append(text)
    if var:
        invariant = [t for t in found if not re.search(rf"\b{var.group(1)}\b", t)]
        found = invariant or found
    return found[0] if found else ""


def _size_hint(
    trace_sizes: dict[str, int], macros: dict[str, str], text: str = "", flag: str = "-D"
) -> str:
    """Half of each size actually traced (-D values first, else the declared trace size), only
    for macros the source names, joined by ``flag``; '' when it names none."""
    sizes = {k: int(v) for k, v in macros.items() if str(v).isdigit()} or trace_sizes
    sizes = {k: v for k, v in sizes.items() if re.search(rf"\b{re.escape(k)}\b", text)}
    return f" {flag} ".join(f"{k}={max(1, v // 2)}" for k, v in sizes.items())


def marked_source(
    source: Path,
    text: str,
    macros: dict[str, str] | None = None,
    port: str = "restrict",
    functions: tuple[str, ...] = (),
):
    """``mark_regions(text)``, but a RegionError names ``FILE:LINE``, and when the file does not
    compile (say, a syntax error inside the marked loop) the compiler's diagnostics come first.
    The pragmas are checked against the source (``regions.check_pragmas``)."""
    try:
        marked = mark_regions(text, port, functions)
        problem = check_pragmas(text, marked)
        if problem:
            raise RegionError(problem)
        return marked
    except RegionError as exc:
        msg = str(exc)
        m = re.match(r"line (\d+): (.*)", msg)
        where = f"{source}:{m.group(1)}: {m.group(2)}" if m else f"{source}: {msg}"
        if "unbalanced" in msg or "unterminated" in msg or "ends before" in msg:
            with make_tempdir("cgp-chk-") as tmp:
                compile_to_ir(  # raises CompileError with clang's diagnostics
                    Path(source).resolve(),
                    Path(tmp) / "plain.ll",
                    dict(macros or {}),
                    display_name=str(source),
                )
        raise RegionError(where) from None


def check_source(source: Path, macros: dict[str, str] | None = None) -> None:
    """Fail early, in one line, on a source that is unreadable, not UTF-8 or badly marked."""
    marked_source(source, read_source(source), macros)


def _verify_ir(ir: str) -> None:
    """Verify instrumented IR in an LLVM context of its own: the probe runs trace in a
    thread beside the analysis (prepared.PendingSizes), whose numba functions load into
    LLVM's global context, and one LLVM context must not be used by two threads at once."""
    try:
        mod = llvm.parse_assembly(ir, context=llvm.create_context())
        mod.verify()
    except RuntimeError as exc:  # a bug in the pass, not the user's fault: say so clearly
        raise InstrumentError(f"internal error: instrumented IR does not verify: {exc}") from None


def _run(exe: Path, events: Path, meta: Path, options: TraceOptions, cwd: Path) -> str:
    """Run the instrumented program confined (``sandbox``); its stdout's tail, or a one-line
    error for a crash, a timeout, a limit of the sandbox or a non-zero exit."""
    env = {
        "CGP_EVENTS": str(events),
        "CGP_META": str(meta),
        "CGP_TRIPS": str(meta.parent / "trips.bin"),
        "CGP_MAX_EVENTS": str(options.max_events),
        "CGP_MAX_LAUNCHES": str(options.max_launches),
        "CGP_COUNT_ONLY": "1" if options.count_only else "0",
    }
    res = run_confined([str(exe)], cwd, env, options.timeout_s, 8 * options.max_events)
    if res.timed_out:
        raise TraceRunError(
            f"the traced program ran longer than --timeout={options.timeout_s:g} s; trace a "
            f"smaller size or raise the limit"
        )
    last = (res.stderr.strip().splitlines() or [""])[-1]
    if res.returncode == 97 and "inside another" in last:  # the runtime's own check
        raise RegionError(
            "a marked kernel started inside another marked kernel (a function called from "
            "a kernel holds a kernel pragma, or a --function kernel calls another)"
        )
    if res.returncode < 0:
        raise TraceRunError(_crash_text(-res.returncode, last))
    if res.returncode != 0:
        raise TraceRunError(
            f"the traced program exited with status {res.returncode} {last}".strip()
        )
    if not meta.exists() or meta.stat().st_size == 0:
        raise TraceFormatError("the traced program wrote no trace")
    return res.stdout


_CRASH_WHY = {  # LLVM turns code it proves unreachable into a trap instruction
    "SIGTRAP": " (it reached code the compiler proved unreachable: undefined behaviour such as "
    "an endless loop without side effects)",
    "SIGXCPU": " (it used more CPU time than --timeout allows)",
    "SIGXFSZ": " (it wrote a file past the sandbox's size limit)",
    "SIGSYS": " (a system call the sandbox forbids)",
}
_CRASH_WHY["SIGILL"] = _CRASH_WHY["SIGTRAP"]


def _crash_text(signum: int, last: str) -> str:
    """One line for a program killed by signal ``signum``."""
    try:
        sig = signal.Signals(signum).name
    except ValueError:
        sig = f"signal {signum}"
    return f"the traced program crashed with {sig}{_CRASH_WHY.get(sig, '')}" + (
        f": {last}" if last else ""
    )
