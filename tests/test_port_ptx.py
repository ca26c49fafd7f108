"""cgpredict's per-thread counts against the PTX nvcc emits for the CUDA ports (the ground
truth of the port model, ``--port plain|restrict``).

For every kernel of every port in validation/cuda and both pointer models:

* per loop (the loops a thread runs, matched to the PTX loops by order and nesting depth,
  plus the per-thread code outside them), the global loads and stores of one iteration must
  equal nvcc's, exactly (``validation/ptx_check.py`` says how each side is counted);
* the compute instructions per thread must be within 15% of nvcc's.

The oracle is nvcc (``nvcc -ptx -O3 -arch=sm_90``, unrolling off: ``validation/ptx_counts.py``);
the tests skip without it. Mismatches that are real (the model counts something nvcc does
differently) are strict xfails with the reason, so fixing the model turns them into XPASS
failures until the marker goes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import run_once

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import ptx_check  # noqa: E402
import ptx_counts  # noqa: E402


def needs_nvcc(test):
    """Skipped without nvcc; slow with it (nvcc compiles every port twice)."""
    skip = pytest.mark.skipif(shutil.which("nvcc") is None,
                              reason="nvcc not found: the ports' PTX cannot be generated")
    return pytest.mark.slow(skip(test))

CASES = [
    (name, launch, port)
    for name in ptx_counts.port_names()
    for launch in dict.fromkeys(launch for launch, _ in ptx_counts.launches(name))
    for port in ptx_counts.PORTS
]

# The real differences, found by reading the PTX: validation/ptx_check.py keeps them (with
# the reasons) so that its table and these markers say the same.
LDST_XFAIL = ptx_check.LDST_KNOWN


def _compute_xfail(launch: str, port: str) -> str | None:
    return ptx_check.compute_known(launch, port)


def _params(xfails) -> list:
    out = []
    for name, launch, port in CASES:
        reason = xfails(launch, port)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(name, launch, port, marks=marks, id=f"{launch}-{port}"))
    return out


@pytest.fixture(scope="session")
def ptx_dir(tmp_path_factory) -> Path:
    """The one folder the session's PTX is compiled into (compile_ptx reuses what is there,
    so each port is compiled once whichever test asks first)."""
    return tmp_path_factory.mktemp("ptx")


@pytest.fixture(scope="session")
def checks(ptx_dir, tmp_path_factory):
    """check_file results per (port file, pointer model), computed once per test run (the PTX
    of every port compiled once into the computing worker's ``ptx_dir``; the other xdist
    worker reads the result back: ``conftest.run_once``)."""
    cache: dict[tuple[str, str], dict[str, ptx_check.KernelCheck]] = {}

    def get(name: str, port: str) -> dict[str, ptx_check.KernelCheck]:
        if (name, port) not in cache:
            got = run_once(tmp_path_factory, f"ptx-check-{name}-{port}",
                           lambda: ptx_check.check_file(name, port, ptx_dir))
            cache[(name, port)] = {k.launch: k for k in got}
        return cache[(name, port)]

    return get


def _assert_loads_and_stores(kc: ptx_check.KernelCheck, launch: str, port: str) -> None:
    assert not kc.structure, kc.structure
    assert len(kc.rows) >= 1
    for row in kc.rows:
        assert (row.model_ld, row.model_st) == (row.ptx_ld, row.ptx_st), (
            f"{launch} ({port}) {row.label}: PTX ld/st {row.ptx_ld}/{row.ptx_st}, cgpredict "
            f"{row.model_ld}/{row.model_st}"
        )


def _assert_compute(kc: ptx_check.KernelCheck, launch: str, port: str) -> None:
    ratio = kc.compute_ratio
    assert ratio is not None, kc.structure or "no PTX count"
    assert abs(ratio - 1.0) <= ptx_check.COMPUTE_TOL, (
        f"{launch} ({port}): cgpredict {kc.model_compute_per_thread:.1f} compute instructions "
        f"per thread, PTX {kc.ptx_compute_per_thread:.1f} ({ratio:.2f}x)"
    )


def _gemm_k_loop_accesses(ptx_dir: Path) -> dict[str, tuple[int, int]]:
    """Global loads and stores of one trip of GEMM's k loop, per port, from the PTX in (or
    compiled into) ``ptx_dir``."""
    got = {}
    for port in ptx_counts.PORTS:
        ptx = ptx_counts.compile_ptx("gemm", port, ptx_dir)
        k = ptx_counts.kernels_by_launch("gemm", ptx.read_text())["gemm"]
        assert len(k.loops) == 1
        got[port] = (k.loops[0].own.ld_global, k.loops[0].own.st_global)
    return got


@needs_nvcc
@pytest.mark.parametrize(
    "name,launch,port", _params(lambda launch, port: LDST_XFAIL.get((launch, port)))
)
def test_global_loads_and_stores_per_loop_iteration_match_ptx(
    checks, name: str, launch: str, port: str
) -> None:
    _assert_loads_and_stores(checks(name, port)[launch], launch, port)


@needs_nvcc
@pytest.mark.parametrize("name,launch,port", _params(_compute_xfail))
def test_compute_instructions_per_thread_within_15_percent_of_ptx(
    checks, name: str, launch: str, port: str
) -> None:
    _assert_compute(checks(name, port)[launch], launch, port)


@needs_nvcc
def test_the_plain_port_stores_the_accumulator_every_iteration_and_restrict_once(
    ptx_dir: Path,
) -> None:
    """The two builds of a port differ as the port model says (GEMM's k loop): the PTX of the
    plain build stores C[i][j] in the loop, the restrict build after it."""
    assert _gemm_k_loop_accesses(ptx_dir) == {"plain": (2, 1), "restrict": (2, 0)}


# ---- the CPU twins: the same checks on PTX nvcc wrote before (tests/data/nvcc) --------------
RECORDED = ROOT / "tests" / "data" / "nvcc"
MANIFEST = json.loads((RECORDED / "manifest.json").read_text())
RECORDED_PORTS = sorted({f.split(".")[0] for f in MANIFEST["ptx"]})


def _recorded(xfails) -> list:
    return [p for p in _params(xfails) if p.values[0] in RECORDED_PORTS]


@pytest.fixture(scope="session")
def recorded_ptx(tmp_path_factory) -> Path:
    """A folder holding the recorded PTX, where compile_ptx finds (and reuses) it."""
    out = tmp_path_factory.mktemp("recorded-ptx")
    for f in (RECORDED / "ptx").glob("*.ptx"):
        shutil.copy(f, out / f.name)
    return out


@pytest.fixture(scope="session")
def recorded_checks(recorded_ptx):
    """check_file on the recorded PTX: no nvcc is run (compile_ptx reuses what it finds)."""
    cache: dict[tuple[str, str], dict[str, ptx_check.KernelCheck]] = {}

    def get(name: str, port: str) -> dict[str, ptx_check.KernelCheck]:
        if (name, port) not in cache:
            cache[(name, port)] = {
                k.launch: k for k in ptx_check.check_file(name, port, recorded_ptx)
            }
        return cache[(name, port)]

    return get


def test_recorded_ptx_is_of_the_current_ports() -> None:
    """Each recorded PTX came from the port sources as they are now (else: run
    tests/data/nvcc/record.py where nvcc is)."""
    sys.path.insert(0, str(RECORDED))
    import record

    assert set(RECORDED_PORTS) == set(record.PORTS) and len(MANIFEST["ptx"]) == 8
    for ptx, sources in MANIFEST["ptx"].items():
        assert (RECORDED / "ptx" / ptx).is_file(), ptx
        assert sources == record.port_sources(ptx.split(".")[0]), f"{ptx} is stale"


@pytest.mark.parametrize(
    "name,launch,port", _recorded(lambda launch, port: LDST_XFAIL.get((launch, port)))
)
def test_recorded_ptx_loads_and_stores_per_loop_iteration(
    recorded_checks, name: str, launch: str, port: str
) -> None:
    _assert_loads_and_stores(recorded_checks(name, port)[launch], launch, port)


@pytest.mark.parametrize("name,launch,port", _recorded(_compute_xfail))
def test_recorded_ptx_compute_instructions_within_15_percent(
    recorded_checks, name: str, launch: str, port: str
) -> None:
    _assert_compute(recorded_checks(name, port)[launch], launch, port)


def test_recorded_ptx_plain_port_stores_the_accumulator_every_iteration(
    recorded_ptx, monkeypatch
) -> None:
    monkeypatch.setenv("PATH", "")  # no nvcc: the recorded PTX or nothing
    assert _gemm_k_loop_accesses(recorded_ptx) == {"plain": (2, 1), "restrict": (2, 0)}


_PTX = """
.visible .entry _Z3fooPfS_(
\t.param .u64 _Z3fooPfS__param_0
)
{
\t.reg .pred \t%p<3>;
\tld.param.u64 \t%rd1, [_Z3fooPfS__param_0];
\tmov.u32 \t%r1, %tid.x;
\t@%p1 bra \t$L__BB0_5;
$L__BB0_1:
\tld.global.nc.f32 \t%f1, [%rd1];
$L__BB0_2:
\t.pragma "nounroll";
\tld.global.f32 \t%f2, [%rd2];
\tld.shared.f32 \t%f3, [%rd3];
\tfma.rn.f32 \t%f4, %f2, %f3, %f4;
\tst.global.f32 \t[%rd2], %f4;
\tsetp.ne.s32 \t%p2, %r2, 16;
\t@%p2 bra \t$L__BB0_2;
\tbar.sync \t0;
\t@%p1 bra.uni \t$L__BB0_1;
$L__BB0_5:
\tst.global.f32 \t[%rd1], %f4;
\tret;
}
"""


def test_ptx_parser_finds_nested_loops_and_counts_their_own_instructions() -> None:
    (k,) = ptx_counts.parse_ptx(_PTX)
    assert (k.mangled, k.name) == ("_Z3fooPfS_", "foo")
    outer, inner = k.loops
    assert (outer.label, outer.depth, outer.parent) == ("$L__BB0_1", 1, -1)
    assert (inner.label, inner.depth, inner.parent) == ("$L__BB0_2", 2, 0)
    assert (inner.own.ld_global, inner.own.ld_shared, inner.own.st_global) == (1, 1, 1)
    assert inner.own.compute == 3  # fma, setp, bra
    assert (outer.own.ld_global, outer.own.barrier, outer.own.compute) == (1, 1, 1)
    assert (k.outside.ld_param, k.outside.st_global, k.outside.compute) == (1, 1, 3)
    assert k.instructions == 14


def test_no_unroll_rewrite_marks_every_for_statement() -> None:
    text = "for (int i = 0; i < n; i++)\n  if (x) for(j = 0;;) {}\nint fore(int a);"
    out = ptx_counts.no_unroll_source(text)
    assert out.count('_Pragma("unroll 1") for (') == 2 and "fore(int a)" in out


def test_measure_builds_the_restrict_port_only_when_asked() -> None:
    """measure.py's plan names the port: plain by default, restrict with --port restrict."""
    import subprocess

    measure = ROOT / "validation" / "measure.py"
    for args, port in (([], "plain"), (["--port", "restrict"], "restrict")):
        out = subprocess.run(
            [sys.executable, str(measure), "--dry-run", "--only", "gemm", *args],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout
        flags = " -DCGP_PORT_RESTRICT=1" if port == "restrict" else ""
        assert out.split()[0] == "gemm" and out.rstrip().endswith(f"port {port}{flags}"), out


def test_template_kernels_are_matched_by_their_size_arguments() -> None:
    """3mm_tiled launches one template three times; with distinct sizes each launch gets the
    instantiation whose mangled arguments are its sizes, whatever the order in the PTX."""
    sizes = {"NI": 64, "NJ": 96, "NK": 128, "NL": 160, "NM": 192}
    body = "(\n)\n{\n\tret;\n}\n"
    entries = ["ILi96ELi160ELi192EE", "ILi64ELi160ELi96EE", "ILi64ELi96ELi128EE"]
    ptx = "".join(f".visible .entry _Z8mm_tiled{e}vPfS0_S0_{body}" for e in entries)
    got = {
        launch: k.mangled[len("_Z8mm_tiled"):].split("v")[0]
        for launch, k in ptx_counts.kernels_by_launch("3mm_tiled", ptx, sizes).items()
    }
    assert got == {
        "mm3_k1_tiled": "ILi64ELi96ELi128EE",  # mm_tiled<NI, NJ, NK>
        "mm3_k2_tiled": "ILi96ELi160ELi192EE",  # mm_tiled<NJ, NL, NM>
        "mm3_k3_tiled": "ILi64ELi160ELi96EE",  # mm_tiled<NI, NL, NJ>
    }
