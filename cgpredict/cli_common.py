"""What every command module of the command line shares: the ``main`` group (one-line
errors, exit codes), the size, block, model and device options, progress and the small
parsers. ``cli.py`` (predictions), ``cli_measure.py`` (validation, calibration, the
statistical model) and ``cli_explore.py`` (cache, sweep) add their commands to ``main``."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import click

from .errors import CGPredictError, check_writable
from .version import __version__

SIZE_HELP = "Set a size macro for compilation, e.g. -D NI=128 (repeatable)."


def parse_macros(defines: tuple[str, ...]) -> dict[str, str]:
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


SECONDS = _Seconds()


corpus_option = click.option(
    "--corpus",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("polybench_c"),
    show_default=True,
    help="Folder of corpus kernels (the measured benchmarks name its files).",
)

def once(default: str | None, several: str = ""):
    """A click callback for an option given ``multiple=True`` so that a repeat is seen: the
    one value (``default`` when absent), or a one-line refusal of a repeat, which click would
    otherwise silently replace by the last value (``several``: where several are predicted)."""

    def callback(ctx, param, values):
        if len(values) > 1:
            where = f"; {several}" if several else ""
            raise click.BadParameter(
                f"given {len(values)} times ({', '.join(values)}): one value per run{where}",
                param_hint=param.opts[0],
            )
        return values[0] if values else default

    return callback


_SWEEP_DEVICES = "`cgpredict sweep FILE --device tk1,h100` predicts several devices"

port_option = click.option(
    "--port",
    type=click.Choice(["plain", "restrict"]),
    multiple=True,
    callback=once("plain", "`cgpredict sweep --port plain,restrict` predicts both"),
    help="The CUDA port predicted: arrays as plain pointer parameters (a first port, "
    "PolyBench/GPU) or each array __restrict__.  [default: plain]",
)


sync_option = click.option(
    "--sync",
    type=click.Choice(["each", "end"]),
    default="each",
    show_default=True,
    help="How the port's host waits for its launches: after each launch (a round trip "
    "each, as PolyBench/GPU) or once after the last (launches queued back to back).",
)


class _Group(click.Group):
    """Turns cgpredict's own errors into one line on stderr and the error's exit code; click's
    usage errors too (`cgpredict: error: ...`, exit 2), without the multi-line usage banner."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        install_signal_handlers()
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


def _set_no_sandbox(ctx, param, value) -> None:
    """``--no-sandbox``: the traced program runs with the caller's environment, without
    resource limits or bubblewrap (``sandbox``), here and in the workers it starts."""
    if value:
        os.environ["CGPREDICT_NO_SANDBOX"] = "1"


no_sandbox_option = click.option(
    "--no-sandbox",
    is_flag=True,
    expose_value=False,
    callback=_set_no_sandbox,
    help="Run the traced program unconfined: the caller's environment, no resource limits, "
    "no bubblewrap (also: CGPREDICT_NO_SANDBOX=1).",
)


def _on_signal(signum, frame) -> None:
    """SIGTERM or SIGHUP: kill the traced programs' process groups, remove the temp folders,
    say so in one line and leave with 128 + the signal."""
    import multiprocessing

    from . import tempdirs
    from .frontend import sandbox

    sandbox.kill_all()
    for child in multiprocessing.active_children():  # sweep workers: their own handler
        child.terminate()  # (inherited through fork) cleans up after them
    tempdirs.remove_all()
    try:
        sys.stderr.write(f"cgpredict: stopped by {signal.Signals(signum).name}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


def install_signal_handlers() -> None:
    """Clean up on SIGTERM and SIGHUP as on Ctrl-C (only the main thread can install them)."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _on_signal)


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
@no_sandbox_option
def main() -> None:
    """Predict how fast a single-threaded C kernel would run on an NVIDIA GPU (and an FPGA)."""


#: a piped run prints its stages once it has run this long (a quick one, or a quick
#: failure, keeps stderr to its one error line)
PIPED_AFTER_S = 1.0


def progress_printer(enabled: bool = True, stream=None, after_s: float | None = None):
    """A stage reporter, a line per stage with the time so far on ``stream`` (stderr): on a
    terminal from the start; piped, from ``after_s`` seconds on (PIPED_AFTER_S), so a long
    run is not silent; None when disabled."""
    if not enabled:
        return None
    import time

    out = stream if stream is not None else sys.stderr
    after = 0.0 if out.isatty() else (PIPED_AFTER_S if after_s is None else after_s)
    start = time.perf_counter()

    def report(what: str) -> None:
        elapsed = time.perf_counter() - start
        if elapsed >= after:
            click.echo(f"[{elapsed:6.1f} s] {what} ...", file=out)

    return report


MODELS = ["cgpredict", "hongkim", "gpuperf"]

device_option = click.option(
    "--device",
    multiple=True,
    callback=once("tk1", _SWEEP_DEVICES),
    help="GPU: a bundled name (see `cgpredict devices`) or a .toml device file, once "
    "(several: `cgpredict sweep --device a,b`).  [default: tk1]",
)


def model_option(help_text: str):
    return click.option(
        "--model",
        type=click.Choice(MODELS),
        multiple=True,
        callback=once("cgpredict", "`cgpredict sweep --model a,b` predicts several"),
        help=f"{help_text}  [default: cgpredict]",
    )


def block_option(what: str):
    return click.option(
        "--block",
        metavar="XxY",
        multiple=True,
        callback=once(None, "`cgpredict sweep --block 32x8,16x16` predicts several"),
        help=f"{what} [default: 32x32 for 2-D grids, 256x1 for 1-D].",
    )


timings_option = click.option(
    "--timings",
    is_flag=True,
    help="Include the wall-clock seconds of each stage (JSON 'seconds', the page's setup "
    "table); without it two identical runs write identical bytes.",
)


def sizing_options(command):
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
                type=SECONDS,
                default=120.0,
                show_default=True,
                help="Stop the traced program after this many seconds.",
            ),
        )
    ):
        command = option(command)
    return command


def parse_sizes(items: tuple[str, ...], flag: str) -> dict[str, int]:
    out = {}
    for d in items:
        name, eq, value = d.partition("=")
        if not name.isidentifier() or not eq or not value.isdigit() or int(value) <= 0:
            raise click.BadParameter(
                f"{d!r}: want NAME=N with N a positive integer", param_hint=flag
            )
        out[name] = int(value)
    return out


CHART_FORMATS = (".png", ".svg", ".pdf")


def check_chart(chart: Path) -> None:
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


def api_kwargs(opts) -> dict:
    """RunOptions as the keywords of the library API (api.py): the CLI calls the library."""
    import dataclasses

    d = {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}
    d["sizes"] = d.pop("work_sizes")
    return d


def parse_block(text):
    from .block import Block, MappingError

    try:
        return Block.parse(text) if text else None
    except MappingError as exc:
        raise click.BadParameter(str(exc), param_hint="--block") from None
