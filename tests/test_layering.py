"""The import graph of cgpredict: no circles, no import from a lower layer to a higher one,
and the GPU prediction path free of the FPGA estimator.

Every import counts, at module level or inside a function (a lazy import still ties the two
modules together) or under ``TYPE_CHECKING``. Modules are read with ``ast``, not imported.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
# source folder -> the package it is installed as (pyproject's package-dir)
PACKAGES = {"cgpredict": "cgpredict", "instrument": "cgpredict.instrument",
            "runtime": "cgpredict.runtime"}

#: Low to high: a module may import from its own layer (no circle) and from the layers below.
#: A name ending in ".*" stands for a package and every module in it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # foundations: errors, files and processes, the IR text, value types of the analysis
    ("cgpredict.version", "cgpredict.errors", "cgpredict.tempdirs", "cgpredict.heap",
     "cgpredict.datafile", "cgpredict.frontend", "cgpredict.frontend.sandbox",
     "cgpredict.warmup", "cgpredict.numba_preload", "cgpredict.plots", "cgpredict.profile",
     "cgpredict.frontend.port",
     "cgpredict.compute", "cgpredict.pipes", "cgpredict.diskcache", "cgpredict.block",
     "cgpredict.hashing",
     "cgpredict.port_pairs",
     "cgpredict.jsondata", "cgpredict.instrument", "cgpredict.instrument.*",
     "cgpredict.runtime"),
    # device files, the front end and the trace
    ("cgpredict.devices", "cgpredict.device_schema", "cgpredict.l2_slices", "cgpredict.occupancy",
     "cgpredict.carveout",
     "cgpredict.frontend.compiler",
     "cgpredict.frontend.macros", "cgpredict.frontend.ctext", "cgpredict.frontend.regions",
     "cgpredict.frontend.loop_bounds",
     "cgpredict.frontend.tracefile", "cgpredict.frontend.tracefile_format",
     "cgpredict.frontend.tracefile_checks", "cgpredict.frontend.functions",
     "cgpredict.frontend.tracer",
     "cgpredict.frontend.summary", "cgpredict.scaling"),
    # pseudo-warps, memory and computation analysis, the analytical models
    ("cgpredict.warp_masked", "cgpredict.warp_order", "cgpredict.warp_regroup", "cgpredict.warps",
     "cgpredict.memory", "cgpredict.memory.*", "cgpredict.issue_blocks", "cgpredict.dram_rounds",
     "cgpredict.parallelism",
     "cgpredict.machine_code", "cgpredict.zero_trip_tests", "cgpredict.loop_blocks",
     "cgpredict.reconvergence", "cgpredict.loop_counter",
     "cgpredict.runtime_trips", "cgpredict.store_copies", "cgpredict.trip_accesses",
     "cgpredict.gep_text",
     "cgpredict.whole_loops", "cgpredict.shared_products", "cgpredict.merged_exits",
     "cgpredict.trip_constants", "cgpredict.constant_trips",
     "cgpredict.loop_exits", "cgpredict.lane_trips", "cgpredict.lane_scale",
     "cgpredict.loop_fold",
     "cgpredict.remainder_first",
     "cgpredict.sass_entry", "cgpredict.hoisted_loads", "cgpredict.guard_exits",
     "cgpredict.address_offsets",
     "cgpredict.row_work", "cgpredict.row_forms",
     "cgpredict.scalar_args",
     "cgpredict.energy",
     "cgpredict.models", "cgpredict.models.*", "cgpredict.numba_cache", "cgpredict.atomics",
     "cgpredict.soa", "cgpredict.tile_exchange", "cgpredict.halo", "cgpredict.sm_share",
     "cgpredict.block_schedule", "cgpredict.smsp_schedule", "cgpredict.warp_spread",
     "cgpredict.row_warps", "cgpredict.register_block", "cgpredict.registers",
     "cgpredict.convoy"),
    # what a prediction hands back, and its rendering as text and JSON
    ("cgpredict.prediction", "cgpredict.report"),
    # one kernel analysed, traces and reports kept on disk
    ("cgpredict.kernel", "cgpredict.kernel.*", "cgpredict.analysis_memo", "cgpredict.trace_store"),
    # the GPU prediction: sizes, the prepared trace, the analysis of every kernel, predict
    ("cgpredict.trace_sizes", "cgpredict.trace_analysis", "cgpredict.prepared",
     "cgpredict.pipeline"),
    # the FPGA estimator (on the GPU pipeline's prepared trace)
    ("cgpredict.fpga", "cgpredict.fpga.*"),
    # what is built on both: advice, comparison, validation, statistics, sweeps, pages
    ("cgpredict.advisor", "cgpredict.advisor.*", "cgpredict.gpu_vs_fpga", "cgpredict.validate",
     "cgpredict.fit", "cgpredict.stats", "cgpredict.stats.*", "cgpredict.render",
     "cgpredict.render.*", "cgpredict.calibration", "cgpredict.calibration.*"),
    # the library API and the JSON schemas of its results
    ("cgpredict.api", "cgpredict.schema", "cgpredict.sweep", "cgpredict.sweep.*"),
    # the command line, the numba warm-up (runs it) and the package's lazy API names
    ("cgpredict.cli_common", "cgpredict.cli_explore", "cgpredict.cli_measure",
     "cgpredict.cli_trace", "cgpredict.cli_info", "cgpredict.cli",
     "cgpredict.numba_warm", "cgpredict.__main__", "cgpredict"),
)


def _modules() -> dict[str, Path]:
    """Every module of the installed package, by dotted name."""
    out = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file (functions and
    ``TYPE_CHECKING`` blocks included): ``from . import x`` is module x, ``from .m import y``
    is module m (or m.y when that is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                out.add(sub if sub in modules else source)
        elif isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
    return {m for m in out if m in modules and m != name}


def _graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    for name, path in modules.items():
        g.add_node(name)
        g.add_edges_from((name, target) for target in _imported(name, path, modules))
    return g


def _layer(name: str) -> int | None:
    """Index of the layer that declares module ``name`` (None: undeclared)."""
    for i, layer in enumerate(LAYERS):
        for entry in layer:
            if name == entry or (entry.endswith(".*") and name.startswith(entry[:-1])):
                return i
    return None


def test_the_graph_sees_lazy_and_type_checking_imports():
    """The parser finds imports inside functions and under TYPE_CHECKING (the oracle: lines
    of this repository known to be lazy), so the checks below cannot pass by missing them."""
    g = _graph()
    assert g.has_edge("cgpredict", "cgpredict.api")  # inside __getattr__
    assert g.has_edge("cgpredict.cli", "cgpredict.gpu_vs_fpga")  # inside a command
    assert len(g) > 60 and g.number_of_edges() > 150


def test_no_import_circle():
    cycles = sorted(nx.simple_cycles(_graph()), key=len)
    assert not cycles, f"{len(cycles)} import circles, e.g.:\n" + "\n".join(
        " -> ".join(c + c[:1]) for c in cycles[:20])


def test_every_module_has_a_layer():
    modules = set(_graph())
    undeclared = sorted(m for m in modules if _layer(m) is None)
    assert not undeclared, f"modules in no layer of LAYERS: {undeclared}"
    stale = sorted(e for layer in LAYERS for e in layer
                   if not e.endswith(".*") and e not in modules)
    assert not stale, f"LAYERS names modules that do not exist: {stale}"


def test_no_import_from_a_lower_layer_to_a_higher_one():
    upward = sorted(
        f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
        for a, b in _graph().edges
        if _layer(a) is not None and _layer(b) is not None and _layer(a) < _layer(b)
    )
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


#: what `cgpredict run` loads to predict a GPU time (the FPGA estimator is not among them)
GPU_PATH = ("cgpredict.pipeline", "cgpredict.prepared", "cgpredict.trace_analysis",
            "cgpredict.report", "cgpredict.api", "cgpredict.cli")


@pytest.mark.parametrize("module", GPU_PATH)
def test_gpu_prediction_path_loads_no_fpga_module(module):
    """Imported in a fresh interpreter, the module loads no cgpredict.fpga module."""
    code = (f"import sys, {module}\n"
            "print(' '.join(m for m in sys.modules if m.startswith('cgpredict.fpga')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "", f"import {module} loads {out}"



# ---- sizes: no function over 80 lines, no module over 500 without a reason ------------------

MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500
#: how a module's docstring states why it is longer: "Over 500 lines: ..." (any case)
REASON = "over 500 lines"


def _long_functions(source: str, max_lines: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(qualified name, lines) of every function or method of ``source`` longer than
    ``max_lines``: from its ``def`` to its last line, docstring included, decorators not (a
    command's options stand above it)."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > max_lines:
                        out.append((name, lines))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _long_module(source: str, max_lines: int = MAX_MODULE_LINES) -> int | None:
    """The line count of ``source`` when over ``max_lines`` and its docstring gives no reason
    (no "over 500 lines" in it), else None."""
    lines = len(source.splitlines())
    doc = ast.get_docstring(ast.parse(source)) or ""
    return lines if lines > max_lines and REASON not in doc.lower() else None


def test_the_size_checks_see_long_functions_and_modules():
    """The checks find what they look for (the oracle: sources built to the limits), so the
    two tests below cannot pass by missing them."""
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    deeper = body.replace("    x", "        x")
    method = deeper + "        x = 0\n"
    assert _long_functions(f"def f():\n{body}") == []  # 80 lines
    assert _long_functions(f"def f():\n{body}    x = 0\n") == [("f", 81)]
    assert _long_functions(f"class C:\n    @staticmethod\n    def f():\n{method}") == [("C.f", 81)]
    assert _long_functions(f"def g():\n    def h():\n{deeper}    return 0\n") == [("g", 82)]
    assert _long_module('"""Short."""\n' + "x = 0\n" * 500) == 501
    assert _long_module('"""Long.\n\nOver 500 lines: why."""\n' + "x = 0\n" * 500) is None
    assert _long_module('"""Short."""\n' + "x = 0\n" * 499) is None


def test_no_function_over_80_lines():
    long = [f"{name}:{fn} ({lines} lines)" for name, path in sorted(_modules().items())
            for fn, lines in _long_functions(path.read_text())]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_no_module_over_500_lines_without_a_reason():
    long = [f"{name} ({n} lines)" for name, path in sorted(_modules().items())
            if (n := _long_module(path.read_text())) is not None]
    assert not long, (f"modules over {MAX_MODULE_LINES} lines whose docstring does not say "
                      f"why ('{REASON.capitalize()}: ...'):\n" + "\n".join(long))
