"""Commands that describe the tool rather than a kernel: ``schema`` (the JSON Schemas of the
outputs), ``devices`` (the device files found) and ``doctor`` (compiler, llvmlite, numba),
on the ``main`` group of ``cli_common``."""

from __future__ import annotations

import sys

import click

from .cli_common import main
from .errors import CGPredictError
from .version import __version__


@main.command()
@click.argument("command", type=click.Choice(["run", "advise", "compare", "validate"]))
def schema(command):
    """Print the JSON Schema of COMMAND's JSON output (validate: the table it writes)."""
    import json

    from .schema import schema as json_schema

    click.echo(json.dumps(json_schema(command), indent=2, sort_keys=True))




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

    from .frontend.compiler import find_compiler

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
