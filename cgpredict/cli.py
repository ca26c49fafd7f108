"""The command line: a thin layer over the library (only this module and ``cli_explore``,
which adds ``cache`` and ``sweep``, import click)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from . import __version__
from .errors import CGPredictError, OutputPathError, check_writable

_SIZE_HELP = "Set a size macro for compilation, e.g. -D NI=128 (repeatable)."


def _macros(defines: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for d in defines:
        name, eq, value = d.partition("=")
        if not name.isidentifier():
            raise click.BadParameter(f"{d!r}: want NAME=VALUE", param_hint="-D")
        out[name] = value if eq else "1"
    return out


class _Seconds(click.ParamType):
    """A finite positive number of seconds."""

    name = "seconds"

    def convert(self, value, param, ctx):
        import math

        try:
            x = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r}: want a positive number of seconds", param, ctx)
        if not (math.isfinite(x) and x > 0):
            self.fail(f"{value!r}: want a finite positive number of seconds", param, ctx)
        return x


_SECONDS = _Seconds()


_corpus_option = click.option(
    "--corpus",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("polybench_c"),
    show_default=True,
    help="Folder of corpus kernels (the measured benchmarks name its files).",
)

_port_option = click.option(
    "--port",
    type=click.Choice(["plain", "restrict"]),
    default="plain",
    show_default=True,
    help="The CUDA port predicted: arrays as plain pointer parameters (a first port, "
    "PolyBench/GPU) or each array __restrict__.",
)


class _Group(click.Group):
    """Turns cgpredict's own errors into one line on stderr and the error's exit code; click's
    usage errors too (`cgpredict: error: ...`, exit 2), without the multi-line usage banner."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            msg = " ".join(exc.format_message().split("\n"))
            if isinstance(exc, click.UsageError) and exc.ctx is not None:
                msg += f" (see '{exc.ctx.command_path} --help')"
            click.echo(f"cgpredict: error: {msg}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except CGPredictError as exc:
            click.echo(f"cgpredict: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:  # a bug: say so in one line unless debugging
            if os.environ.get("CGP_DEBUG"):
                raise
            click.echo(
                f"cgpredict: internal error: {type(exc).__name__}: {exc} "
                f"(set CGP_DEBUG=1 for the traceback)",
                err=True,
            )
            sys.exit(70)


def _set_no_cache(ctx, param, value) -> None:
    """``--no-cache``: the on-disk cache (diskcache.py) is neither read nor written, in this
    process and in the workers it starts (through the environment)."""
    if value:
        os.environ["CGPREDICT_NO_CACHE"] = "1"


no_cache_option = click.option(
    "--no-cache",
    is_flag=True,
    expose_value=False,
    callback=_set_no_cache,
    help="Do not read or write the trace cache (also: CGPREDICT_NO_CACHE=1).",
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cgpredict")
@no_cache_option
def main() -> None:
    """Predict how fast a single-threaded C kernel would run on an NVIDIA GPU (and an FPGA)."""


@main.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-D", "defines", multiple=True, metavar="NAME=V", help=_SIZE_HELP)
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
    type=_SECONDS,
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
@_port_option
def trace(source, defines, functions, output, timeout_s, max_events, max_launches, force, port):
    """Compile SOURCE, run it instrumented and write a trace of its marked kernels."""
    from .tracer import TraceOptions, trace_program

    output = output or Path(source.stem + ".cgptrace")
    opts = TraceOptions(
        _macros(defines), tuple(functions), timeout_s, max_events, max_launches, port=port
    )
    tr = trace_program(source, output, opts, force=force)
    n_mem = int(((tr.events >> 48) < 0xF000).sum()) if len(tr.events) else 0
    click.echo(
        f"wrote {output}: {len(tr.header.regions)} kernel(s), {len(tr.launches)} launch(es), "
        f"{n_mem} memory events, {output.stat().st_size} bytes"
    )


@main.command("trace-info")
@click.argument("trace_file", type=click.Path(dir_okay=False, path_type=Path))
def trace_info(trace_file):
    """Show a trace's kernels, loops, memory instructions and operation mix."""
    from .summary import render_summary
    from .tracefile import read_trace

    click.echo(render_summary(read_trace(trace_file)))


def _progress(enabled: bool = True):
    """A stage reporter for stderr (only on a terminal): each stage with the time so far."""
    if not enabled or not sys.stderr.isatty():
        return None
    import time

    start = time.perf_counter()

    def report(what: str) -> None:
        click.echo(f"[{time.perf_counter() - start:6.1f} s] {what} ...", err=True)

    return report


MODELS = ["cgpredict", "hongkim", "gpuperf"]

_device_option = click.option(
    "--device",
    default="tk1",
    show_default=True,
    help="GPU: a bundled name (see `cgpredict devices`) or a .toml device file.",
)


def _model_option(help_text: str):
    return click.option(
        "--model",
        type=click.Choice(MODELS),
        default="cgpredict",
        show_default=True,
        help=help_text,
    )


def _block_option(what: str):
    return click.option(
        "--block", metavar="XxY", help=f"{what} [default: 32x32 for 2-D grids, 256x1 for 1-D]."
    )


def _sizing_options(command):
    """The options every predicting command shares: sizes, kernels given by function, timeout."""
    for option in reversed(
        (
            click.option(
                "-D",
                "defines",
                multiple=True,
                metavar="NAME=V",
                help="Work size to predict, e.g. -D NI=1024 [default: the file's macros].",
            ),
            click.option(
                "--trace-size",
                "trace_defs",
                multiple=True,
                metavar="NAME=V",
                help="Smaller size actually traced [default: the file's "
                "'#pragma cgp trace', else chosen automatically].",
            ),
            click.option(
                "--function",
                "functions",
                multiple=True,
                metavar="NAME",
                help="Treat the whole function NAME as a kernel (repeatable).",
            ),
            click.option(
                "--timeout",
                "timeout_s",
                type=_SECONDS,
                default=120.0,
                show_default=True,
                help="Stop the traced program after this many seconds.",
            ),
        )
    ):
        command = option(command)
    return command


def _sizes(items: tuple[str, ...], flag: str) -> dict[str, int]:
    out = {}
    for d in items:
        name, eq, value = d.partition("=")
        if not name.isidentifier() or not eq or not value.isdigit() or int(value) <= 0:
            raise click.BadParameter(
                f"{d!r}: want NAME=N with N a positive integer", param_hint=flag
            )
        out[name] = int(value)
    return out


@main.command()
@no_cache_option
@_sizing_options
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
@_block_option("CUDA block shape")
@click.option(
    "--grid",
    type=click.IntRange(1, 2),
    help="Map 1 or 2 outer loops to threads "
    "[default: 2 when the two outer loops are perfectly nested and independent].",
)
@_device_option
@_model_option("Analytical model.")
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
    default=32,
    show_default=True,
    help="Registers per thread assumed for occupancy.",
)
@_port_option
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
def run(
    source,
    port,
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
    from .pipeline import RunOptions, analyze_trace
    from .report import to_json, to_text

    opts = RunOptions(
        block=_block(block),
        grid=grid,
        device=device,
        model=model,
        work_sizes=_sizes(defines, "-D"),
        trace_sizes=_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
        registers_per_thread=registers,
        batch_mode=batch_mode,
        port=port,
    )
    if from_trace:
        ctx = click.get_current_context()
        timeout_given = ctx.get_parameter_source("timeout_s") != ParameterSource.DEFAULT
        if source or defines or trace_defs or functions or timeout_given:
            raise click.UsageError(
                "--from-trace takes no SOURCE, -D, --trace-size, --function or --timeout: "
                "a saved trace is not traced again and its work size is its traced size"
            )
        import dataclasses

        from .devices import load_device
        from .tracefile import read_trace

        tr = read_trace(from_trace)
        opts = dataclasses.replace(opts, port=tr.header.port)
        report = analyze_trace(tr, load_device(device), opts)
        traced = {k: int(v) if str(v).isdigit() else v for k, v in tr.header.macros.items()}
        report = dataclasses.replace(report, trace_sizes=traced)
    elif source is None:
        raise click.UsageError("give a C SOURCE file or --from-trace TRACE")
    else:
        from .api import predict

        progress = _progress(not as_json)
        report = predict(source, progress=progress, **_api_kwargs(opts))
    click.echo(to_json(report) if as_json else to_text(report))


@main.command()
@_device_option
@click.option(
    "--measured",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Measurements from validation/measure.py [default: "
    "validation/measured/DEVICE.json when it exists].",
)
@_corpus_option
@_model_option("Analytical model.")
@click.option("--only", multiple=True, metavar="NAME", help="Only these corpus files (stems).")
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("validation/results"),
    show_default=True,
    help="Where the JSON and Markdown tables are written.",
)
@click.option(
    "--fit",
    "fit_names",
    metavar="FIELD,...",
    help="Also fit these physical device fields (launch_overhead_us, first_launch_us, "
    "dd_store_cycles, dd_l2_cycles) to the measurements and print their "
    "leave-one-kernel-out errors.",
)
@_port_option
def validate(device, measured, corpus, model, only, out_dir, port, fit_names):
    """Predict every corpus kernel and compare with GPU measurements (mean abs. % error)."""
    from .validate import default_measured, to_markdown, write_results
    from .validate import validate as run_validation

    measured = measured or default_measured(device, Path.cwd())
    progress = _progress()
    v = run_validation(device, corpus, measured, model, tuple(only), progress, port)
    click.echo(to_markdown(v))
    written = write_results(v, out_dir)
    click.echo(f"wrote {', '.join(str(p) for p in written)}")
    if fit_names:
        from .devices import load_device
        from .fit import FIT_RANGES, leave_one_kernel_out

        names = [n.strip() for n in fit_names.split(",") if n.strip()]
        bad = [n for n in names if n not in FIT_RANGES]
        if bad:
            raise click.BadParameter(
                f"{', '.join(bad)}: not fittable (choose from {', '.join(FIT_RANGES)})",
                param_hint="--fit",
            )
        r = leave_one_kernel_out(v, load_device(device), names, model)
        click.echo(
            "fitted: " + ", ".join(f"{k} = {x:g}" for k, x in r.values.items())
            + f"; in-sample MAPE {r.in_sample_mape:.1f} %"
        )
        click.echo(
            f"leave-one-kernel-out MAPE {r.loko_mape:.1f} % (worst {r.loko_worst[0]} "
            f"{r.loko_worst[1]:+.1f} %):"
        )
        for k, errs in r.loko_errors_pct.items():
            click.echo(f"  {k:<12} " + " ".join(f"{e:+.1f}%" for e in errs))


@main.command()
@_sizing_options
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
        _sizes(defines, "-D"),
        _sizes(trace_defs, "--trace-size"),
        tuple(functions),
        timeout_s,
    )
    click.echo(fpga_to_json(rep) if as_json else fpga_to_text(rep))


@main.command()
@_sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--gpu",
    "gpu_device",
    default="tk1",
    show_default=True,
    help="GPU: a bundled name (see `cgpredict devices`) or a .toml device file.",
)
@click.option(
    "--fpga",
    "fpga_device",
    default="zc702",
    show_default=True,
    help="FPGA: a bundled name (zc702, zcu102) or a .toml device file.",
)
@_block_option("CUDA block shape for the GPU estimate")
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
    from .compare import compare_to_json, compare_to_text

    if chart:
        _check_chart(chart)
    c = run_compare(
        source,
        _block(block),
        gpu_device,
        _sizes(defines, "-D"),
        fpga=fpga_device,
        trace_sizes=_sizes(trace_defs, "--trace-size"),
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
@_sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_block_option("Current CUDA block shape")
@_device_option
@_model_option("Analytical model the fixes are predicted with.")
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
@_port_option
@click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON.")
def advise(
    source,
    block,
    device,
    model,
    tiled,
    chart,
    port,
    as_json,
    defines,
    trace_defs,
    functions,
    timeout_s,
):
    """Rank fixes (coalescing, shared memory, block shape) by predicted speedup."""
    from .advisor import benefit_chart, render_text
    from .api import advise as run_advise
    from .pipeline import RunOptions

    opts = RunOptions(
        block=_block(block),
        device=device,
        model=model,
        work_sizes=_sizes(defines, "-D"),
        trace_sizes=_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
        port=port,
    )
    if chart:
        _check_chart(chart)
    progress = _progress(not as_json)
    a = run_advise(source, tiled=tiled, progress=progress, **_api_kwargs(opts))
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
@_sizing_options
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="HTML page to write [default: SOURCE stem + .html in the current directory].",
)
@_block_option("CUDA block shape")
@_device_option
@_model_option("Analytical model.")
@_port_option
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
def report(
    source,
    output,
    block,
    device,
    model,
    port,
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
        _block(block),
        device,
        _sizes(defines, "-D"),
        port,
        advice="none" if no_advice else advice,
        fpga=None if no_fpga else fpga_device,
        progress=_progress(),
        model=model,
        trace_sizes=_sizes(trace_defs, "--trace-size"),
        functions=tuple(functions),
        timeout_s=timeout_s,
    )
    try:
        write_report(page, output, force)
    except OSError as exc:
        raise OutputPathError(f"cannot write report {output}: {exc.strerror or exc}") from None
    click.echo(f"wrote {output} ({output.stat().st_size} bytes, {len(page.report.kernels)} "
               f"kernel(s), {page.report.total_ms:.4g} ms predicted)")
    if pdf is not None:
        from .render.pdf import print_pdf

        click.echo(f"wrote {print_pdf(output, pdf, browser)}")


@main.command()
@click.argument("command", type=click.Choice(["run", "advise", "compare", "validate"]))
def schema(command):
    """Print the JSON Schema of COMMAND's JSON output (validate: the table it writes)."""
    import json

    from .schema import schema as json_schema

    click.echo(json.dumps(json_schema(command), indent=2, sort_keys=True))


CHART_FORMATS = (".png", ".svg", ".pdf")


def _check_chart(chart: Path) -> None:
    """Everything about --chart that can fail, checked before the (long) analysis."""
    import importlib.util

    if chart.suffix.lower() not in CHART_FORMATS:
        raise click.BadParameter(
            f"{chart}: want a {'/'.join(CHART_FORMATS)} file", param_hint="--chart"
        )
    if chart.exists() or chart.is_symlink():
        raise click.BadParameter(f"{chart} exists; choose another path", param_hint="--chart")
    check_writable(chart, "chart")
    if importlib.util.find_spec("matplotlib") is None:
        raise click.UsageError("--chart needs matplotlib: pip install 'cgpredict[plot]'")


def _api_kwargs(opts) -> dict:
    """RunOptions as the keywords of the library API (api.py): the CLI calls the library."""
    import dataclasses

    d = {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}
    d["sizes"] = d.pop("work_sizes")
    return d


def _block(text):
    from .warps import Block, MappingError

    try:
        return Block.parse(text) if text else None
    except MappingError as exc:
        raise click.BadParameter(str(exc), param_hint="--block") from None


@main.command()
@click.option(
    "--measured",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Measured times: the shared jsonl (bench, size, block_x, block_y, kernel_ms_median), "
    "a validation/measure.py JSON or a {BENCH: {work, grid, measured_ms}} table.",
)
@click.option(
    "--device",
    help="GPU the times were measured on [default: named by the file or its GPU].",
)
@click.option(
    "--counters",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Nsight Compute counters (ncu --csv --page raw) of one run of each measured "
    "configuration, matched to it by kernel, block and grid.",
)
@_corpus_option
@_model_option("Analytical model that supplies the features and the baseline.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Existing folder for features.csv, importance.png, pca_biplot.png and "
    "partial_dependence.png.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=min(2, os.cpu_count() or 1),
    show_default="2, or 1 on one core",
    help="Corpus files predicted at once (worker processes).",
)
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
def explain(measured, device, counters, corpus, model, out_dir, jobs, as_json):
    """What drives the measured time: a random forest beside the analytical model."""
    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        raise click.UsageError("explain needs scikit-learn: pip install 'cgpredict[stats]'")
    if out_dir is not None and importlib.util.find_spec("matplotlib") is None:
        raise click.UsageError("--out needs matplotlib: pip install 'cgpredict[stats]'")
    from .stats.explain import explain as run_explain
    from .stats.explain import to_json, to_text, write_outputs

    if out_dir is not None:
        check_writable(out_dir / "features.csv", "features")
    e = run_explain(measured, device, corpus, model, counters, _progress(not as_json), jobs)
    click.echo(to_json(e) if as_json else to_text(e), nl=not as_json)
    if out_dir is not None:
        try:
            written = write_outputs(e, out_dir)
        except OSError as exc:
            raise OutputPathError(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
        if not as_json:
            click.echo("wrote " + ", ".join(str(p) for p in written))


@main.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Device file to write [default: <gpu-name>.toml in the current directory]; "
    "the raw results go beside it as <name>.raw.json.",
)
@click.option(
    "--base",
    default="h100",
    show_default=True,
    help="Device (name or .toml path) supplying every field that is not measured.",
)
@click.option(
    "--only",
    metavar="NAMES",
    help="Comma-separated micro-benchmarks to run (props always runs): latency_l1, "
    "latency_l2, line_l1, line_l2, smem, stream_l2, stream_dram, bandwidth, "
    "inst, barrier, energy.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=_SECONDS,
    default=300.0,
    show_default=True,
    help="Stop a micro-benchmark after this many seconds.",
)
@click.option("--no-energy", is_flag=True, help="Skip the NVML power/energy runs.")
@click.option(
    "--from-raw",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Analyse a saved <name>.raw.json again instead of measuring (no GPU needed).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing device file and raw results.")
def calibrate(output, base, only, timeout_s, no_energy, from_raw, force):
    """Measure the local NVIDIA GPU with micro-benchmarks and write a device file."""
    from . import calibrate as cal

    if from_raw:
        raw = cal.load_raw(from_raw)
        result = cal.finish_from_raw(
            raw, output or cal.default_output(raw.get("gpu_name", "")), base, force
        )
    else:
        progress = _progress()
        names = [n.strip() for n in only.split(",") if n.strip()] if only else None
        result = cal.calibrate(
            output, base, names, timeout_s, force=force, energy=not no_energy, progress=progress
        )
    click.echo(cal.format_result(result))
    click.echo(
        f"use it with: --device {result.output}  (or put its folder in "
        f"$CGPREDICT_DEVICE_PATH and pass --device {result.output.stem})"
    )


@main.command()
def devices():
    """List the GPU device files cgpredict knows (bundled and $CGPREDICT_DEVICE_PATH)."""
    from .devices import DeviceError, device_path, list_devices, load_device

    bad = 0
    for name in list_devices():
        try:
            d = load_device(name)
        except DeviceError as exc:
            bad += 1
            where = str(device_path(name))
            reason = str(exc).removeprefix(where + ": ")
            click.echo(f"{name:<20} UNUSABLE: {where}: {reason}")
            continue
        click.echo(f"{name:<20} {d.description or d.name}")
    if bad:
        click.echo(f"cgpredict: warning: {bad} device file(s) cannot be used", err=True)


@main.command()
def doctor():
    """Show the compiler, llvmlite/LLVM, numba and the devices cgpredict will use."""
    import llvmlite
    import llvmlite.binding as llvm
    import numba

    from .compiler import find_compiler

    click.echo(f"cgpredict {__version__}  (Python {sys.version.split()[0]})")
    click.echo(
        f"llvmlite {llvmlite.__version__}, LLVM {'.'.join(map(str, llvm.llvm_version_info))}"
    )
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


from . import cli_explore  # noqa: E402  (registers cache and sweep on main)

cli_explore.register(main)

if __name__ == "__main__":  # pragma: no cover
    main()
