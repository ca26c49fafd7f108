"""Commands on traces alone: ``trace`` (compile, run instrumented, write the trace file) and
``trace-info`` (what a trace file holds), on the ``main`` group of ``cli_common``."""

from __future__ import annotations

from pathlib import Path

import click

from .cli_common import SECONDS, SIZE_HELP, main, no_sandbox_option, parse_macros, port_option
from .errors import CGPredictError


@main.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-D", "defines", multiple=True, metavar="NAME=V", help=SIZE_HELP)
@click.option(
    "--function",
    "functions",
    multiple=True,
    metavar="NAME",
    help="Trace the whole function NAME as one kernel (repeatable).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Trace file to write [default: SOURCE stem + .cgptrace in the current directory].",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=SECONDS,
    default=120.0,
    show_default=True,
    help="Stop the traced program after this many seconds.",
)
@click.option(
    "--max-events",
    type=click.IntRange(min=1),
    default=200_000_000,
    show_default=True,
    help="Stop if the trace grows beyond this many events (8 bytes each).",
)
@click.option(
    "--max-launches",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Record memory events of only the first N launches of each kernel (0: all); "
    "operation counts are kept for every launch.",
)
@click.option("--force", is_flag=True, help="Overwrite the output even if it is not a trace.")
@port_option
@no_sandbox_option
def trace(source, defines, functions, output, timeout_s, max_events, max_launches, force, port):
    """Compile SOURCE, run it instrumented and write a trace of its marked kernels (at the
    sizes of its `#pragma cgp trace` line, each replaced by a -D of the same name)."""
    from .frontend.tracer import TraceOptions, trace_program

    output = output or Path(source.stem + ".cgptrace")
    macros = {**declared_trace_sizes(source), **parse_macros(defines)}
    opts = TraceOptions(
        macros, tuple(functions), timeout_s, max_events, max_launches, port=port
    )
    tr = trace_program(source, output, opts, force=force)
    n_mem = int(((tr.events >> 48) < 0xF000).sum()) if len(tr.events) else 0
    sizes = " ".join(f"{k}={v}" for k, v in sorted(macros.items()))
    click.echo(
        f"wrote {output}: {len(tr.header.regions)} kernel(s), {len(tr.launches)} launch(es), "
        f"{n_mem} memory events, {output.stat().st_size} bytes"
        + (f" (traced at {sizes})" if sizes else "")
    )


def declared_trace_sizes(source: Path) -> dict[str, str]:
    """The sizes of the source's ``#pragma cgp trace`` line (none when it has none, or when
    the source is badly marked: tracing then says so, with the file and line)."""
    from .frontend.regions import mark_regions, read_source

    try:
        marked = mark_regions(read_source(source))
    except CGPredictError:
        return {}
    return {k: str(v) for k, v in marked.trace_sizes.items()}


@main.command("trace-info")
@click.argument("trace_file", type=click.Path(dir_okay=False, path_type=Path))
def trace_info(trace_file):
    """Show a trace's kernels, loops, memory instructions and operation mix."""
    from .frontend.summary import render_summary
    from .frontend.tracefile import read_trace

    click.echo(render_summary(read_trace(trace_file)))
