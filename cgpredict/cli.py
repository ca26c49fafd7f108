"""The command line: a thin layer over the library. The prediction commands (run, fpga,
compare, advise, report) live here; ``cli_trace`` adds trace and trace-info, ``cli_info``
schema, devices and doctor, ``cli_measure`` validate, explain and calibrate, ``cli_explore``
cache and sweep, all on the ``main`` group of ``cli_common`` (the only modules that import
click). ``entry`` is the installed program.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import sys
import threading
from pathlib import Path

import click
from click.core import ParameterSource

from .cli_common import (
    api_kwargs,
    block_option,
    check_chart,
    device_option,
    main,
    model_option,
    no_cache_option,
    no_sandbox_option,
    once,
    parse_block,
    parse_sizes,
    port_option,
    progress_printer,
    sizing_options,
    sync_option,
    timings_option,
)
from .errors import OutputPathError
from .heap import keep_freed_memory


@main.command()
@no_cache_option
@no_sandbox_option
@sizing_options
@click.argument(
    "source", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--from-trace",
    "from_trace",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Predict from a saved trace (cgpredict trace) instead of SOURCE; the work "
    "size is then the traced size.",
)
@block_option("CUDA block shape")
@click.option(
    "--grid",
    type=click.IntRange(1, 2),
    help="Map 1 or 2 outer loops to threads "
    "[default: 2 when the two outer loops are perfectly nested and independent].",
)
@device_option
@model_option("Analytical model.")
@click.option(
    "--batch-mode",
    type=click.Choice(["whole", "paper"]),
    default="whole",
    show_default=True,
    help="CGPredict eq. (16): repeat the whole time per batch of "
    "blocks, or only its second term as printed in the paper.",
)
@click.option(
    "--registers",
    type=int,
    default=None,
    help="Registers per thread assumed for occupancy [default: estimated per kernel from "
    "its C: the values a thread holds at once, docs/models.md eq. (RG1)].",
)
@port_option
@sync_option
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@timings_option
def run(
    source,
    port,
    sync,
    timings,
    from_trace,
    block,
    grid,
    device,
    model,
    batch_mode,
    defines,
    trace_defs,
    functions,
    registers,
    timeout_s,
    as_json,
):
    """Predict the GPU time of the marked kernels of SOURCE."""
    from .prediction import RunOptions

    opts = RunOptions(
        block=parse_block(block),
        grid=grid,
        device=device,
        model=model,
        work_sizes=parse_sizes(defines, "-D"),
        trace_sizes=parse_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
        registers_per_thread=registers,
        batch_mode=batch_mode,
        port=port,
        sync=sync,
    )
    if from_trace:
        ctx = click.get_current_context()
        timeout_given = ctx.get_parameter_source("timeout_s") != ParameterSource.DEFAULT
        if source or defines or trace_defs or functions or timeout_given:
            raise click.UsageError(
                "--from-trace takes no SOURCE, -D, --trace-size, --function or --timeout: "
                "a saved trace is not traced again and its work size is its traced size"
            )

        from .devices import load_device
        from .frontend.tracefile import read_trace
        from .trace_analysis import analyze_trace

        tr = read_trace(from_trace)
        opts = dataclasses.replace(opts, port=tr.header.port)
        report = analyze_trace(tr, load_device(device), opts)
        traced = {k: int(v) if str(v).isdigit() else v for k, v in tr.header.macros.items()}
        report = dataclasses.replace(report, trace_sizes=traced)
    elif source is None:
        raise click.UsageError("give a C SOURCE file or --from-trace TRACE")
    else:
        from .api import predict

        progress = progress_printer(not as_json)
        report = predict(source, progress=progress, **api_kwargs(opts))
    if not timings:  # wall-clock times: the one thing two identical runs would not share
        report = dataclasses.replace(report, seconds={})
    # imported only now: the report imports the models, which the warm-up thread imports
    # beside the C compiler (warmup.py), so that the trace's first compile starts sooner;
    # joined first, as every thread importing what the warm-up imports does
    from . import warmup

    warmup.join()
    from .report import to_json, to_text

    click.echo(to_json(report) if as_json else to_text(report))


@main.command()
@sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--fpga",
    "fpga_device",
    default="zc702",
    show_default=True,
    help="FPGA: a bundled name (zc702, zcu102) or a .toml device file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full estimate as JSON.")
def fpga(source, fpga_device, as_json, defines, trace_defs, functions, timeout_s):
    """Estimate the marked kernels of SOURCE on an FPGA (HLS design-space exploration)."""
    from .fpga import estimate_source
    from .fpga.report import fpga_to_json, fpga_to_text

    rep = estimate_source(
        source,
        fpga_device,
        parse_sizes(defines, "-D"),
        parse_sizes(trace_defs, "--trace-size"),
        tuple(functions),
        timeout_s,
    )
    click.echo(fpga_to_json(rep) if as_json else fpga_to_text(rep))


@main.command()
@sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--gpu",
    "gpu_device",
    multiple=True,
    callback=once("tk1", "`cgpredict sweep --device a,b` predicts several GPUs"),
    help="GPU: a bundled name (see `cgpredict devices`) or a .toml device file.  "
    "[default: tk1]",
)
@click.option(
    "--fpga",
    "fpga_device",
    default="zc702",
    show_default=True,
    help="FPGA: a bundled name (zc702, zcu102) or a .toml device file.",
)
@block_option("CUDA block shape for the GPU estimate")
@click.option(
    "--chart",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write GPU vs FPGA bars per kernel (.png/.svg/.pdf, a new file; needs matplotlib).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(
    source, gpu_device, fpga_device, block, chart, as_json, defines, trace_defs, functions,
    timeout_s,
):
    """GPU vs FPGA estimate of SOURCE per kernel, with a recommendation and its reasons."""
    from .api import compare as run_compare
    from .gpu_vs_fpga import compare_to_json, compare_to_text

    if chart:
        check_chart(chart)
    c = run_compare(
        source,
        parse_block(block),
        gpu_device,
        parse_sizes(defines, "-D"),
        fpga=fpga_device,
        trace_sizes=parse_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
    )
    click.echo(compare_to_json(c) if as_json else compare_to_text(c))
    if chart:
        from .plots import compare_chart

        rows = [(k.name, k.gpu_ms, k.fpga_ms) for k in c.kernels]
        title = f"{c.source}: {c.gpu_device} vs {c.fpga_device}"
        try:
            written = compare_chart(rows, title, chart)
        except OSError as exc:
            raise OutputPathError(f"cannot write chart {chart}: {exc.strerror or exc}") from None
        if not as_json:
            click.echo(f"wrote {written}")


@main.command()
@sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@block_option("Current CUDA block shape")
@device_option
@model_option("Analytical model the fixes are predicted with.")
@click.option(
    "--tiled",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Your tiled variant of SOURCE (with '#pragma cgp shared' lines) to predict "
    "instead of a modelled tiling.",
)
@click.option(
    "--chart",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the GPUPerf benefit chart (.png/.svg/.pdf, a new file; needs matplotlib).",
)
@port_option
@sync_option
@click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON.")
def advise(
    source,
    block,
    device,
    model,
    tiled,
    chart,
    port,
    sync,
    as_json,
    defines,
    trace_defs,
    functions,
    timeout_s,
):
    """Rank fixes (coalescing, shared memory, block shape) by predicted speedup."""
    from .advisor import benefit_chart, render_text
    from .api import advise as run_advise
    from .prediction import RunOptions

    opts = RunOptions(
        block=parse_block(block),
        device=device,
        model=model,
        work_sizes=parse_sizes(defines, "-D"),
        trace_sizes=parse_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
        port=port,
        sync=sync,
    )
    if chart:
        check_chart(chart)
    progress = progress_printer(not as_json)
    a = run_advise(source, tiled=tiled, progress=progress, **api_kwargs(opts))
    if as_json:
        click.echo(a.to_json())
    else:
        click.echo(render_text(a))
    if chart:
        try:
            click.echo(f"wrote {benefit_chart(a, chart)}")
        except ImportError:
            raise click.UsageError("--chart needs matplotlib: pip install 'cgpredict[plot]'")
        except OSError as exc:
            raise OutputPathError(f"cannot write chart {chart}: {exc.strerror or exc}") from None


@main.command()
@sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="HTML page to write [default: SOURCE stem + .html in the current directory].",
)
@block_option("CUDA block shape")
@device_option
@model_option("Analytical model.")
@port_option
@sync_option
@click.option(
    "--fpga",
    "fpga_device",
    default="zc702",
    show_default=True,
    help="FPGA for the GPU vs FPGA section: a bundled name or a .toml device file.",
)
@click.option(
    "--advice",
    type=click.Choice(["quick", "full", "none"]),
    default="quick",
    show_default=True,
    help="The advisor's fixes: quick (no block-shape sweep, no restrict-port trace), full "
    "(as cgpredict advise; several times slower) or none.",
)
@click.option("--no-advice", is_flag=True, help="Same as --advice none.")
@click.option("--no-fpga", is_flag=True, help="Leave out the GPU vs FPGA comparison.")
@click.option(
    "--pdf",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also print the page to this PDF (needs a headless Chromium on PATH).",
)
@click.option("--force", is_flag=True, help="Overwrite OUTPUT even if it is not a report.")
@timings_option
def report(
    source,
    timings,
    output,
    block,
    device,
    model,
    port,
    sync,
    fpga_device,
    advice,
    no_advice,
    no_fpga,
    pdf,
    force,
    defines,
    trace_defs,
    functions,
    timeout_s,
):
    """Write one self-contained HTML page about SOURCE: times, bounds, annotated source,
    the MWP-CWP timeline, roofline, advice and GPU vs FPGA."""
    from .api import report_page
    from .render import check_output, write_report

    output = output or Path(source.stem + ".html")
    check_output(output, force)  # before the (long) analysis
    if pdf is not None:
        from .render.pdf import check_pdf

        browser = check_pdf(pdf)
    page = report_page(
        source,
        parse_block(block),
        device,
        parse_sizes(defines, "-D"),
        port,
        advice="none" if no_advice else advice,
        fpga=None if no_fpga else fpga_device,
        progress=progress_printer(),
        model=model,
        sync=sync,
        trace_sizes=parse_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
    )
    if not timings:  # two identical runs write identical pages
        page = dataclasses.replace(page, report=dataclasses.replace(page.report, seconds={}))
    try:
        write_report(page, output, force)
    except OSError as exc:
        raise OutputPathError(f"cannot write report {output}: {exc.strerror or exc}") from None
    click.echo(f"wrote {output} ({output.stat().st_size} bytes, {len(page.report.kernels)} "
               f"kernel(s), {page.report.total_ms:.4g} ms predicted)")
    if pdf is not None:
        from .render.pdf import print_pdf

        click.echo(f"wrote {print_pdf(output, pdf, browser)}")


from . import cli_explore, cli_info, cli_measure, cli_trace  # noqa: E402,F401  (their commands join main)

cli_explore.register(main)


def entry() -> None:
    """The `cgpredict` program: the command line in a process of its own, whose freed arrays
    are kept for reuse (``heap``), whose BLAS runs in the calling thread and which ends
    without Python's teardown (``_leave``).

    cgpredict's linear algebra is a few small least-squares fits; OpenBLAS's worker threads
    (numpy's and, through numba, scipy's: one per core each) spin for a while after start-up
    and after every call, 0.2-0.3 s of CPU a run on the README's 2-core machine (`perf`:
    blas_thread_server). numpy is not imported yet here, so the settings take; a value the
    user set is kept.

    numpy asks for transparent huge pages (madvise) on every array of 4 MB or more; the first
    touch of a 2 MiB page then cost far more system time than the same bytes in 4 KiB pages
    on the README's machine (a VM: the warp gather's output columns, 3MM `run`, 0.24-0.68 s
    of system time against 0.14-0.17 s; `validation/results/speed.md`), so the process asks
    for none."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    keep_freed_memory()
    try:
        main()
    except SystemExit as exc:
        _leave(exc.code)
    _leave(0)


def _leave(code) -> None:
    """End the process as ``sys.exit(code)`` would, less the teardown of every module and
    object (0.3-0.4 s after a run that held a large trace, measured on the README's
    machine): the exit handlers run (temporary directories) and the standard streams are
    flushed as in a normal exit, then os._exit. While another thread still works (a cache
    write, a warm-up), the normal exit, which waits for it."""
    me = threading.current_thread()
    if any(t is not me and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    elif code is None:
        code = 0
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            code = code or 1
    os._exit(int(code) if isinstance(code, int) else 1)


if __name__ == "__main__":  # pragma: no cover
    entry()
