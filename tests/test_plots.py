"""The shared plotting module: validate's plot and advise's chart are drawn by it, with the
same labels and kernel colours."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from cgpredict import plots  # noqa: E402
from cgpredict.advisor import Advice, Benefits, benefit_chart  # noqa: E402
from cgpredict.validate import Validation, ValidationRow, plot_validation  # noqa: E402


def _is_png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 2000


def test_validation_plot(tmp_path):
    rows = (ValidationRow("gemm", "32x32", {"NI": 64}, 0.1, 0.12, 1.0),
            ValidationRow("atax", "256x1", {"NX": 64}, 0.02, 0.01, 1.0),
            ValidationRow("mvt", "256x1", {"N": 64}, None, 0.3, 1.0, "failed"))
    v = Validation("tk1", "cgpredict", None, "Fake K1", rows)
    out = plot_validation(v, tmp_path / "v.png")
    assert out == tmp_path / "v.png" and _is_png(out)
    empty = Validation("tk1", "cgpredict", None, None, rows[2:])
    assert plot_validation(empty, tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()


def test_benefit_chart(tmp_path):
    b = Benefits("gemm", "memory", 100.0, 400.0, 1.0, 2.0, 3.0, 4.0)
    a = Advice(source="gemm.c", device="tk1", baseline_ms=1.0, fixes=(), benefits=(b,),
               baseline=None)
    assert _is_png(benefit_chart(a, tmp_path / "b.png"))
    svg = benefit_chart(a, tmp_path / "b.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_shared_palette_matches_the_html_report():
    from cgpredict.render.svg import COLOURS

    for key in ("memory", "compute", "gpu", "fpga"):
        assert plots.PALETTE[key] == COLOURS[key]
    assert plots.kernel_colour(0) == plots.kernel_colour(10) != plots.kernel_colour(1)


def test_compare_chart(tmp_path):
    out = plots.compare_chart([("gemm", 0.1, 2.0), ("atax", 0.01, 0.003)], "t", tmp_path / "c.png")
    assert _is_png(out)


@pytest.mark.usefixtures("compiler")
def test_compare_cli_chart(tmp_path):
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from cgpredict.cli import main

    gemm = str(Path(__file__).resolve().parents[1] / "polybench_c" / "gemm.c")
    small = ["-D", "NI=64", "-D", "NJ=64", "-D", "NK=64", "--trace-size", "NI=32",
             "--trace-size", "NJ=32", "--trace-size", "NK=32"]
    chart = tmp_path / "c.svg"
    r = CliRunner().invoke(main, ["compare", gemm, *small, "--chart", str(chart), "--json"])
    assert r.exit_code == 0, r.stderr
    json.loads(r.stdout)  # the chart's line is not mixed into the JSON
    assert "<svg" in chart.read_text()
    r = CliRunner().invoke(main, ["compare", gemm, *small, "--chart", str(chart)])
    assert r.exit_code == 2 and "exists" in r.stderr  # never overwritten
