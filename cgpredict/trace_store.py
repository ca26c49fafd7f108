"""The traces ``prepared.prepare`` makes, kept in the on-disk cache (``diskcache``).

A prepared program is the trace at the trace size plus the count-only probe runs that fit its
trip counts (``scaling.SizeModel``). Both depend on the source (and every file the preprocessor
opens for it, as the compiler lists them: ``dependencies``), the trace size, the port, the
kernels given by function, the trace limits, the compiler and the tool: that is the key. They
do not depend on the work size (when the trace size is declared or given), so a sweep over -D
sizes reuses one entry; nor on the block, the device or the model, which are re-analysed from
it. The size macros' values, which cost a compiler run per ``run``, are kept the same way, and
so is each report ``run`` makes (keyed by the trace's key, the options and the device), so
asking the same question twice costs no analysis.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import datafile
from .diskcache import DiskCache, Entry, entry_key
from .frontend.compiler import compiler_identity
from .frontend.sandbox import enabled as sandbox_enabled
from .prediction import RunOptions

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
TRACE_FILE = "trace.cgptrace"


def local_headers(text: str, directory: Path, depth: int = 8) -> dict[str, str]:
    """The text of every ``#include "..."`` file found next to the source, recursively (a
    changed header must change the key); a missing one is keyed as missing."""
    out: dict[str, str] = {}
    todo = [(text, directory)]
    while todo and depth > 0:
        depth -= 1
        nxt = []
        for src, d in todo:
            for name in _INCLUDE.findall(src):
                p = (d / name).resolve()
                if str(p) in out:
                    continue
                try:
                    body = p.read_text(errors="replace")
                except OSError:
                    out[str(p)] = "<missing>"
                    continue
                out[str(p)] = body
                nxt.append((body, p.parent))
        todo = nxt
    return out


_INCLUDE_ENV = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH")


def include_env() -> dict[str, str]:
    """The environment variables that change which header an ``#include`` finds."""
    return {k: os.environ[k] for k in _INCLUDE_ENV if k in os.environ}


def _sha256_file(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "<missing>"


def _parse_make_deps(text: str) -> list[str]:
    """The prerequisites of a make rule as ``cc -M`` prints it (escaped spaces kept)."""
    body = text.replace("\\\n", " ").partition(": ")[2]
    tokens = re.findall(r"(?:\\.|[^\s\\])+", body)
    return [t.replace("\\ ", " ") for t in tokens]


def compiler_dependencies(source: Path, macros: dict[str, str]) -> list[str] | None:
    """Every file the preprocessor opens for ``source`` (``cc -M``, with the flags the trace
    compile uses), or None when the compiler cannot tell (the compile will say why)."""
    from .frontend.compiler import find_compiler

    source = Path(source).resolve()
    args = [*find_compiler().command, "-M", f"-I{source.parent}"]
    args += [f"-D{k}={v}" for k, v in sorted(macros.items())] + ["-x", "c", str(source)]
    try:
        res = subprocess.run(args, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    return sorted({str(Path(p).resolve()) for p in _parse_make_deps(res.stdout)})


def dependencies(cache, source: Path, text: str, macros: dict[str, str]) -> dict[str, str]:
    """{file: SHA-256} of every file the preprocessor opens for ``source`` (headers found
    through -I the source folder, ``#include MACRO``, headers of headers, CPATH). The list is
    asked of the compiler once and kept in the cache while every file in it is unchanged;
    when the compiler cannot tell, the ``#include "..."`` files found by reading the text."""
    key = entry_key("deps", {"name": str(Path(source).resolve()), "text": text,
                             "macros": dict(sorted(macros.items())), "env": include_env(),
                             "compiler": compiler_identity()})
    got = cache.get_json("deps", key) if cache is not None else None
    if isinstance(got, dict) and all(_sha256_file(p) == h for p, h in got.items()):
        return got
    files = compiler_dependencies(source, macros)
    if files is None:
        return {"<compiler could not list them>": json.dumps(
            local_headers(text, Path(source).resolve().parent), sort_keys=True)}
    value = {p: _sha256_file(p) for p in files}
    if cache is not None:
        cache.put_json("deps", key, value)
    return value


def source_parts(source: Path, text: str, deps: dict[str, str] | None = None) -> dict:
    """The parts of a key that come from the source file, the files it includes and the
    compiler."""
    return {
        "name": str(source),
        "text": text,
        "headers": deps if deps is not None else local_headers(
            text, Path(source).resolve().parent),
        "include_env": include_env(),
        "compiler": compiler_identity(),
    }


def prepared_key(
    source: Path,
    text: str,
    opts: RunOptions,
    trace_sizes: dict[str, int],
    probes: bool,
    auto: tuple | None = None,
    deps: dict[str, str] | None = None,
) -> str:
    """The key of a prepared program. ``auto``: (work sizes, wanted threads) when the trace
    size is grown automatically, which makes the traced size depend on them. ``deps``: the
    files the source includes (``dependencies``)."""
    return entry_key(
        "prepared",
        {
            **source_parts(source, text, deps),
            "trace_sizes": dict(sorted(trace_sizes.items())),
            "probes": probes,
            "auto": auto,
            "port": opts.port,
            "functions": list(opts.functions),
            "max_events": opts.max_events,
            "max_launches": opts.max_launches,
            "sandbox": sandbox_enabled(),  # unconfined, a program may see other inputs
        },
    )


@dataclass(frozen=True)
class StoredRuns:
    """A prepared program read back from the cache: the sizes traced and the trace files
    (the first at the trace size, the others count-only probes)."""

    trace_sizes: dict[str, int]
    runs: list[tuple[dict[str, int], Path]]


def load_prepared(entry: Entry) -> StoredRuns:
    meta = entry.meta
    runs = [(dict(s), entry.file(name)) for s, name in meta["runs"]]
    return StoredRuns(dict(meta["trace_sizes"]), runs)


def store_prepared(
    cache: DiskCache,
    key: str,
    trace_sizes: dict[str, int],
    runs: list[tuple[dict[str, int], Path]],
) -> Entry:
    """Link the trace files of ``runs`` into the cache as entry ``key``."""
    files, listed = {}, []
    for i, (sizes, path) in enumerate(runs):
        name = TRACE_FILE if i == 0 else f"probe{i - 1}.cgptrace"
        files[name] = path
        listed.append((dict(sizes), name))
    return cache.put("prepared", key, files, {"trace_sizes": trace_sizes, "runs": listed})


def cached_macros(
    cache: DiskCache | None,
    source_text: str,
    include_dir: Path | None,
    names: list[str],
    work: dict[str, int],
    guessed: set[str],
    compute: Callable[[], dict[str, int]],
    deps: dict[str, str] | None = None,
) -> dict[str, int]:
    """``compute()`` (the size macros' values as the compiler evaluates them), from the
    cache when the same source, headers (``deps``, else those read from the text), names,
    -D values and compiler asked before."""
    if cache is None:
        return compute()
    if deps is None:
        deps = local_headers(source_text, include_dir) if include_dir else {}
    key = entry_key(
        "macros",
        {
            "text": source_text,
            "headers": deps,
            "include_env": include_env(),
            "include_dir": str(include_dir),
            "names": sorted(names),
            "work": dict(sorted(work.items())),
            "guessed": sorted(guessed),
            "compiler": compiler_identity(),
        },
    )
    got = cache.get_json("macros", key)
    if isinstance(got, dict) and all(isinstance(v, int) for v in got.values()):
        return got
    value = compute()
    cache.put_json("macros", key, value)
    return value


def report_key(prepared: str, opts: RunOptions, device) -> str:
    """The key of a report: its trace's key, every option (block, grid, model, sizes,
    registers, batch mode, port, ...) and the device as loaded (a changed device file is
    another key)."""
    return entry_key(
        "report",
        {
            "prepared": prepared,
            "options": dataclasses.asdict(opts),
            "device": dataclasses.asdict(device),
        },
    )


def load_report(cache: DiskCache, key: str):
    """The Report stored under ``key`` (JSON and NPZ data, never pickle: ``datafile``; its
    files checked against their SHA-256 and written by this very tool version), or None."""
    from .prediction import Report

    e = cache.get("report", key)
    if e is None:
        return None
    try:
        rep = datafile.load(e.path, "report")
    except datafile.DataFileError:  # an entry this tool cannot read back: rebuilt by the caller
        return None
    return rep if isinstance(rep, Report) else None


def store_report(cache: DiskCache, key: str, report) -> None:
    stage = cache.staging()
    try:
        files = datafile.dump(report, stage, "report")
        cache.put("report", key, {p.name: p for p in files})
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _dependence_key(prepared: str, item: tuple) -> str:
    _, region, launch, grid = item
    return entry_key("dependence", {"prepared": prepared, "at": [region, launch, grid]})


def load_dependences(cache: DiskCache, prepared: str, items: list[tuple]) -> dict:
    """The inter-thread dependences (``warps.Dependence`` or None) of a trace's launches,
    as stored by ``store_dependences``: they depend on the trace alone, not on the block,
    device or sizes, and take a fraction of a second per launch to find. ``items``:
    ``("dependence", region, launch, grid_dims)`` keys (those of ``warps.form_warps``)."""
    from .warps import Dependence

    out = {}
    for item in items:
        got = cache.get_json("dependence", _dependence_key(prepared, item))
        if isinstance(got, dict) and "dependence" in got:
            d = got["dependence"]
            out[item] = None if d is None else Dependence(
                int(d["addresses"]), tuple(d["store_ids"]), tuple(d["other_ids"]),
                bool(d["forwarded"]),
            )
    return out


def store_dependences(cache: DiskCache, prepared: str, found: dict, known: set) -> None:
    """Store the dependences ``found`` (``AnalysisMemo.dependences``: ``("dependence",
    region, launch, grid_dims)`` -> ``warps.Dependence`` or None) that are not in ``known``
    (already stored)."""
    for item, dep in list(found.items()):
        if not (isinstance(item, tuple) and item and item[0] == "dependence") or item in known:
            continue
        value = None if dep is None else dataclasses.asdict(dep)
        cache.put_json("dependence", _dependence_key(prepared, item), {"dependence": value})
