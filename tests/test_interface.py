"""Interface traps of issue 25 item 6, each through the command line (click's CliRunner): a
repeated --device refused, `trace` at the file's `#pragma cgp trace` sizes, progress lines
when piped, byte-identical output of identical runs, distinct array bytes in `compare`
after pointer swaps, no cyclic partition of a data-dependent array in the FPGA design."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict.cli import main

pytestmark = pytest.mark.usefixtures("compiler")

USER = Path(__file__).resolve().parents[1] / "examples" / "user"
SAXPY = ["-D", "N=4096", "--trace-size", "N=1024"]


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def test_a_repeated_device_is_refused_in_one_line():
    r = invoke("run", USER / "saxpy.c", *SAXPY, "--device", "tk1", "--device", "h100")
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--device" in lines[0] and "given 2 times (tk1, h100)" in lines[0]
    assert "cgpredict sweep" in lines[0] and r.stdout == ""


def test_trace_without_sizes_uses_the_trace_pragma(tmp_path):
    src = tmp_path / "t.c"
    src.write_text("#ifndef N\n#define N 4096\n#endif\n#pragma cgp trace N=64\n"
                   "static float a[N][N], b[N][N];\nint main(void) {\n#pragma cgp kernel t\n"
                   "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n"
                   "      b[j][i] = a[i][j];\n  return b[1][2] != 0;\n}\n")
    r = invoke("trace", src, "-o", tmp_path / "t.cgptrace")
    assert r.exit_code == 0, r.output
    assert r.stdout.endswith("(traced at N=64)\n") and "8192 memory events" in r.stdout
    r = invoke("trace", src, "-D", "N=32", "-o", tmp_path / "t.cgptrace", "--force")
    assert r.exit_code == 0 and "2048 memory events" in r.stdout


def test_a_piped_run_prints_its_stages():
    """Not a terminal: a line per stage once the run has lasted PIPED_AFTER_S (a quick
    failure keeps its one error line); on a terminal from the start."""
    import io

    from cgpredict.cli_common import PIPED_AFTER_S, progress_printer

    assert PIPED_AFTER_S <= 2.0  # tens of seconds of silence no more
    piped = io.StringIO()
    report = progress_printer(stream=piped, after_s=0.0)
    report("tracing")
    assert piped.getvalue().endswith("s] tracing ...\n")
    quick = io.StringIO()
    progress_printer(stream=quick)("tracing")  # at once: under PIPED_AFTER_S
    assert quick.getvalue() == ""
    assert progress_printer(False, stream=piped) is None


@pytest.mark.slow
def test_identical_runs_print_identical_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")  # every run analysed afresh
    runs = [invoke("run", USER / "saxpy.c", *SAXPY, "--json").stdout for _ in range(2)]
    assert runs[0] == runs[1] and json.loads(runs[0])["seconds"] == {}
    timed = json.loads(invoke("run", USER / "saxpy.c", *SAXPY, "--json", "--timings").stdout)
    assert {"trace", "analysis"} <= set(timed["seconds"])
    pages = []
    for k in range(2):
        out = tmp_path / f"r{k}.html"
        r = invoke("report", USER / "saxpy.c", *SAXPY, "--advice", "none", "--no-fpga", "-o", out)
        assert r.exit_code == 0, r.output
        pages.append(out.read_bytes())
    assert pages[0] == pages[1] and b"<th>seconds</th>" not in pages[0]


def test_compare_sizes_a_swapped_array_once(monkeypatch):
    """Jacobi with its grids swapped through pointers after every sweep: dst is the grid's
    interior, (N - 2)^2 floats, not that times the work-size over the traced launches."""
    r = invoke("compare", USER / "jacobi2d.c", "-D", "N=256", "-D", "TSTEPS=10",
               "--trace-size", "N=64", "--trace-size", "TSTEPS=4", "--json")
    assert r.exit_code == 0, r.output
    arrays = {a["name"]: a["bytes"] for a in json.loads(r.stdout)["fpga"]["kernels"][0]["arrays"]}
    assert arrays["dst"] == 254 * 254 * 4
    # the halo grows as the accesses do (the interior's growth): within 6% at N = 64 -> 256
    assert arrays["src"] == pytest.approx(256 * 256 * 4, rel=0.06)


def test_fpga_never_partitions_a_data_dependent_array():
    r = invoke("fpga", USER / "histogram.c", "-D", "N=65536", "--trace-size", "N=4096",
               "--fpga", "zcu102", "--json")
    assert r.exit_code == 0, r.output
    k = json.loads(r.stdout)["kernels"][0]
    assert {a["name"]: a["partition"] for a in k["arrays"]}["hist"] == 1
    assert not any("array_partition" in p for lp in k["loops"] for p in lp["pragmas"])
