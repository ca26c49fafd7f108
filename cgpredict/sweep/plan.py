"""The configurations of a sweep, checked before any work starts (issue #15).

A sweep is the cross product files x blocks x devices x ports x models x sizes. Every axis
value is checked first (a block shape that cannot exist or does not fit a device, a device
that cannot be loaded, a size that is not a positive integer, a size name no file
mentions), so a bad value costs one line, not a half-finished sweep. The configurations are
then grouped by what their trace depends on (file, port, trace size): each group is traced
once and re-analysed per configuration.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CGPredictError

MODELS = ("cgpredict", "hongkim", "gpuperf")
PORTS = ("plain", "restrict")
#: A -D name no file defines, applied to every size macro of each file (``-D N=512``).
ALL_SIZES = "N"


class SweepError(CGPredictError):
    """A sweep axis value that cannot be used (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Axes:
    """The values of each axis, as given (strings), before checking."""

    files: tuple[Path, ...]
    blocks: tuple[str, ...] = ("32x8",)
    devices: tuple[str, ...] = ("tk1",)
    ports: tuple[str, ...] = ("plain",)
    models: tuple[str, ...] = ("cgpredict",)
    sizes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (-D name, values)
    trace_sizes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    """One configuration: what ``cgpredict run`` would be given."""

    file: str
    block: str
    device: str
    port: str
    model: str
    size_label: tuple[tuple[str, int], ...]  # the swept -D values, as given
    given: tuple[tuple[str, int], ...]  # the -D options ``run`` would get for this file
    given_trace: tuple[tuple[str, int], ...]  # the --trace-size options
    work_sizes: tuple[tuple[str, int], ...]  # every size macro of the file, resolved
    trace_sizes: tuple[tuple[str, int], ...]  # the trace size it is analysed from
    auto: bool = False  # trace size chosen automatically (grown with the work and device)

    def group(self) -> tuple:
        """What the trace depends on: configurations with equal groups share one trace
        (with or without the probe runs that scale it; for an automatic trace size, also
        the work size and device that decide how far it grows)."""
        scaled = self.work_sizes != self.trace_sizes
        extra = (self.work_sizes, self.device) if self.auto else ()
        return (self.file, self.port, self.trace_sizes, scaled, *extra)


def split_list(text: str, what: str) -> tuple[str, ...]:
    """``"a,b , c"`` -> ``("a", "b", "c")``; an empty item is an error naming ``what``."""
    items = tuple(x.strip() for x in text.split(","))
    if not items or any(not x for x in items):
        raise SweepError(f"{what} {text!r}: an empty value in the list")
    return items


def parse_size_axis(text: str) -> tuple[str, tuple[int, ...]]:
    """``"N=512,1024"`` -> ``("N", (512, 1024))``."""
    name, eq, values = text.partition("=")
    if not name.isidentifier() or not eq:
        raise SweepError(f"-D {text!r}: want NAME=V1,V2,...")
    out = []
    for v in split_list(values, f"-D {name}"):
        if not v.isdigit() or int(v) <= 0:
            raise SweepError(f"-D {name}={v}: want a positive integer")
        out.append(int(v))
    return name, tuple(dict.fromkeys(out))


def check_axes(axes: Axes) -> None:
    """One SweepError naming the first bad value of any axis; nothing is traced."""
    from ..block import Block, MappingError
    from ..devices import load_device

    if not axes.files:
        raise SweepError("no source file given")
    for f in axes.files:
        if not Path(f).is_file():
            raise SweepError(f"{f}: no such file")
    blocks = []
    for b in axes.blocks:
        try:
            blocks.append(Block.parse(b))
        except MappingError as exc:
            raise SweepError(f"--block {b}: {exc}") from None
    for d in axes.devices:
        try:
            dev = load_device(d)
        except CGPredictError as exc:
            raise SweepError(f"--device {d}: {str(exc).splitlines()[0]}") from None
        for b in blocks:
            if b.threads > dev.max_threads_per_block:
                raise SweepError(
                    f"--block {b}: {b.threads} threads; {dev.name} allows at most "
                    f"{dev.max_threads_per_block} per block"
                )
    for p in axes.ports:
        if p not in PORTS:
            raise SweepError(f"--port {p}: unknown port (choose from {', '.join(PORTS)})")
    for m in axes.models:
        if m not in MODELS:
            raise SweepError(f"--model {m}: unknown model (choose from {', '.join(MODELS)})")


def _file_sizes(
    path: Path, text: str, label: dict[str, int], known: list[str]
) -> dict[str, int]:
    """The -D (or --trace-size) values of one file for one point of the size axes: the
    names the file mentions; ``N``, when the file has no macro of that name, sets every size
    macro of the file (so one axis spans files whose macros differ)."""
    out: dict[str, int] = {}
    for name, v in label.items():
        if name == ALL_SIZES and not re.search(rf"\b{ALL_SIZES}\b", text):
            out.update({m: v for m in known})
        elif re.search(rf"\b{re.escape(name)}\b", text):
            out[name] = v
    return out


def plan(axes: Axes, progress=None) -> list[Config]:
    """Every configuration of ``axes``, with its sizes resolved as ``run`` resolves them
    (the file's defaults, its trace size, clamped to the work size). Raises SweepError for a
    bad axis value or a size name that no file mentions."""
    from ..diskcache import default_cache
    from ..frontend.regions import read_source
    from ..scaling import overridable_sizes
    from ..trace_sizes import resolve_sizes

    check_axes(axes)
    names = [n for n, _ in axes.sizes]
    if len(set(names)) != len(names):
        raise SweepError(f"-D {names}: a size name given twice")
    points = [dict(zip(names, vals)) for vals in itertools.product(*(v for _, v in axes.sizes))]
    store = default_cache()
    texts = {f: read_source(Path(f)) for f in axes.files}
    for flag, given_names in (("-D", names), ("--trace-size", list(axes.trace_sizes))):
        for name in given_names:
            if name != ALL_SIZES and not any(
                re.search(rf"\b{name}\b", t) for t in texts.values()
            ):
                raise SweepError(f"{flag} {name}: no file of the sweep mentions {name}")
    configs = []
    for f in axes.files:
        text = texts[f]
        known = sorted(overridable_sizes(text))
        for label in points or [{}]:
            given = _file_sizes(Path(f), text, label, known)
            given_trace = _file_sizes(Path(f), text, dict(axes.trace_sizes), known)
            try:
                work, tsizes, auto = resolve_sizes(
                    text, given, given_trace, Path(f).resolve().parent, store,
                    source_name=str(f),
                )
            except CGPredictError as exc:
                raise SweepError(f"{f}: {str(exc).splitlines()[0]}") from None
            for block, device, port, model in itertools.product(
                axes.blocks, axes.devices, axes.ports, axes.models
            ):
                configs.append(
                    Config(
                        str(f), block, device, port, model,
                        tuple(label.items()),
                        tuple(sorted(given.items())),
                        tuple(sorted(given_trace.items())),
                        tuple(sorted(work.items())),
                        tuple(sorted(tsizes.items())),
                        auto,
                    )
                )
    return configs
