"""Commands that meet measurements: ``validate`` (predictions against measured times),
``explain`` (the statistical model) and ``calibrate`` (micro-benchmarks on a GPU)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from .cli_common import (
    SECONDS,
    corpus_option,
    device_option,
    main,
    model_option,
    port_option,
    progress_printer,
)
from .errors import OutputPathError, check_writable


@main.command()
@device_option
@click.option(
    "--measured",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Measurements from validation/measure.py [default: "
    "validation/measured/DEVICE.json when it exists].",
)
@corpus_option
@model_option("Analytical model.")
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
    help="Also fit these physical device fields (launch_sync_us, first_launch_us, "
    "dd_store_cycles, dd_l2_cycles, l1_request_cycles, l1_store_line_cycles) to the "
    "measurements and print their leave-one-kernel-out errors.",
)
@click.option(
    "--registers",
    "registers_from",
    type=click.Choice(["measured", "estimated"]),
    default="measured",
    show_default=True,
    help="Registers a thread: a measured entry's ptxas count, or estimated from the C as "
    "`run` does without --registers.",
)
@port_option
def validate(device, measured, corpus, model, only, out_dir, port, fit_names, registers_from):
    """Predict every corpus kernel and compare with GPU measurements (mean abs. % error)."""
    from .validate import default_measured, to_markdown, write_results
    from .validate import validate as run_validation

    measured = measured or default_measured(device, Path.cwd())
    progress = progress_printer()
    v = run_validation(device, corpus, measured, model, tuple(only), progress, port,
                       measured_registers=registers_from == "measured")
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
@corpus_option
@model_option("Analytical model that supplies the features and the baseline.")
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
    e = run_explain(measured, device, corpus, model, counters, progress_printer(not as_json), jobs)
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
    type=SECONDS,
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
    from .calibration import run as cal

    if from_raw:
        raw = cal.load_raw(from_raw)
        result = cal.finish_from_raw(
            raw, output or cal.default_output(raw.get("gpu_name", "")), base, force
        )
    else:
        progress = progress_printer()
        names = [n.strip() for n in only.split(",") if n.strip()] if only else None
        result = cal.calibrate(
            output, base, names, timeout_s, force=force, energy=not no_energy, progress=progress
        )
    click.echo(cal.format_result(result))
    click.echo(
        f"use it with: --device {result.output}  (or put its folder in "
        f"$CGPREDICT_DEVICE_PATH and pass --device {result.output.stem})"
    )
