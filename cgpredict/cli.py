"""The command line: a thin layer over the library (only this module imports click)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__
from .errors import CGPredictError

_SIZE_HELP = "Set a size macro for compilation, e.g. -D NI=128 (repeatable)."


def _macros(defines: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for d in defines:
        name, eq, value = d.partition("=")
        if not name.isidentifier():
            raise click.BadParameter(f"{d!r}: want NAME=VALUE", param_hint="-D")
        out[name] = value if eq else "1"
    return out


class _Group(click.Group):
    """Turns cgpredict's own errors into one line on stderr and the error's exit code."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except CGPredictError as exc:
            click.echo(f"cgpredict: error: {exc}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cgpredict")
def main() -> None:
    """Predict how fast a single-threaded C kernel would run on an NVIDIA GPU (and an FPGA)."""


@main.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-D", "defines", multiple=True, metavar="NAME=V", help=_SIZE_HELP)
@click.option("--function", "functions", multiple=True, metavar="NAME",
              help="Trace the whole function NAME as one kernel (repeatable).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Trace file to write [default: SOURCE stem + .cgptrace in the current directory].")
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Stop the traced program after this many seconds.")
@click.option("--max-events", type=int, default=200_000_000, show_default=True,
              help="Stop if the trace grows beyond this many events (8 bytes each).")
@click.option("--max-launches", type=int, default=0, show_default=True,
              help="Record memory events of only the first N launches of each kernel (0: all); "
                   "operation counts are kept for every launch.")
@click.option("--force", is_flag=True, help="Overwrite the output even if it is not a trace.")
def trace(source, defines, functions, output, timeout_s, max_events, max_launches, force):
    """Compile SOURCE, run it instrumented and write a trace of its marked kernels."""
    from .tracer import TraceOptions, trace_program

    output = output or Path(source.stem + ".cgptrace")
    opts = TraceOptions(_macros(defines), tuple(functions), timeout_s, max_events, max_launches)
    tr = trace_program(source, output, opts, force=force)
    n_mem = int(((tr.events >> 48) < 0xF000).sum()) if len(tr.events) else 0
    click.echo(f"wrote {output}: {len(tr.header.regions)} kernel(s), {len(tr.launches)} launch(es), "
               f"{n_mem} memory events, {output.stat().st_size} bytes")


@main.command("trace-info")
@click.argument("trace_file", type=click.Path(dir_okay=False, path_type=Path))
def trace_info(trace_file):
    """Show a trace's kernels, loops, memory instructions and operation mix."""
    from .summary import render_summary
    from .tracefile import read_trace

    click.echo(render_summary(read_trace(trace_file)))


@main.command()
def doctor():
    """Show the compiler, llvmlite/LLVM, numba and the devices cgpredict will use."""
    import llvmlite
    import llvmlite.binding as llvm
    import numba

    from .compiler import find_compiler

    click.echo(f"cgpredict {__version__}  (Python {sys.version.split()[0]})")
    click.echo(f"llvmlite {llvmlite.__version__}, LLVM {'.'.join(map(str, llvm.llvm_version_info))}")
    click.echo(f"numba {numba.__version__}")
    try:
        click.echo(f"C compiler: {find_compiler().describe()}")
    except CGPredictError as exc:
        click.echo(f"C compiler: NOT FOUND ({exc})")
    try:
        from .devices import list_devices

        click.echo(f"GPU devices: {', '.join(list_devices())}")
    except ImportError:
        pass
    import numba.core.config as ncfg

    click.echo(f"numba cache dir: {ncfg.CACHE_DIR or '(next to the package, __pycache__)'}")


if __name__ == "__main__":  # pragma: no cover
    main()
