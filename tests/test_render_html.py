"""`cgpredict report` as a user sees it: the HTML page parsed with html.parser (every kernel,
every source line with an access annotated, no broken internal links, no network), its size,
the refusal to overwrite a file that is not a report, a kernel with no memory access and
non-ASCII source text."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict.cli import main

pytestmark = pytest.mark.usefixtures("compiler")

ROOT = Path(__file__).resolve().parents[1]
GEMM = str(ROOT / "polybench_c" / "gemm.c")
NOMEM = str(ROOT / "tests" / "data" / "nomem.c")
SMALL_GEMM = ["-D", "NI=64", "-D", "NJ=64", "-D", "NK=64",
              "--trace-size", "NI=32", "--trace-size", "NJ=32", "--trace-size", "NK=32"]


class Page(HTMLParser):
    """What a reader of the page meets: ids, links, kernel sections, annotated lines, SVGs,
    external references and the text."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.kernels: list[str] = []
        self.annotated: set[int] = set()
        self.svgs = 0
        self.external: list[str] = []
        self.scripts = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "section" and "data-kernel" in a:
            self.kernels.append(a["data-kernel"])
        if tag == "tr" and "acc" in (a.get("class") or "").split():
            self.annotated.add(int(a["data-line"]))
        if tag == "svg":
            self.svgs += 1
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            if (a.get(key) or "").startswith(("http:", "https:", "//")):
                self.external.append(a[key])

    def handle_data(self, data):
        self.text.append(data)


def invoke(args):
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    for text in (r.stdout, r.stderr):
        assert "Traceback" not in text
    return r


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="ascii"))  # pure ASCII: non-ASCII is escaped
    return p


@pytest.fixture(scope="module")
def gemm_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "gemm.html"
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(out), "--advice", "full"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"wrote {out}")
    run = invoke(["run", GEMM, *SMALL_GEMM, "--json"])
    return out, parse(out), json.loads(run.stdout)


def test_every_kernel_and_section(gemm_page):
    out, page, run = gemm_page
    assert page.kernels == [k["name"] for k in run["kernels"]] == ["gemm"]
    assert {"kernel-gemm", "source", "advice", "compare", "setup"} <= page.ids
    text = " ".join(page.text)
    shown = re.search(r"([0-9.e+-]+) ms predicted in total", text)
    # the page prints 4 significant digits of the time the JSON rounds to 6 decimals
    assert shown and float(shown.group(1)) == pytest.approx(run["total_ms"], rel=1e-3)
    binding = run["kernels"][0]["result"]["binding"]
    assert (f"physical {binding} bound" if binding != "model" else "model's own time") in text
    assert "tk1.toml" in text and "plain" in text and "NI=64" in text and "NI=32" in text


def test_every_access_line_annotated(gemm_page):
    _, page, run = gemm_page
    lines = {int(m["location"].rsplit(":", 1)[1]) for k in run["kernels"] for m in k["mem"]}
    assert lines and page.annotated == lines
    assert all(f"L{n}" in page.ids for n in lines)


def test_links_charts_offline_and_size(gemm_page):
    out, page, _ = gemm_page
    broken = [h for h in page.links if h.startswith("#") and h[1:] not in page.ids]
    assert page.links and not broken
    assert page.svgs >= 4  # timeline, roofline, advice bars, GPU vs FPGA bars
    assert not page.external and page.scripts == 0
    assert out.stat().st_size <= 2 * 2**20


def test_advice_and_compare_on_page(gemm_page):
    _, page, _ = gemm_page
    text = " ".join(page.text)
    assert "predicted speedup" in text and "keep C[i][j] in a register" in text
    assert "gemm: predicted" in text and "the nearest, the" in text  # the advice's roofline
    assert "recommendation" in text and "gemm FPGA" in text


def test_refuses_a_file_that_is_not_a_report(tmp_path):
    out = tmp_path / "notes.html"
    out.write_text("my notes\n")
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(out), "--no-advice", "--no-fpga"])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "not a cgpredict report" in r.stderr
    assert "--force" in r.stderr and out.read_text() == "my notes\n"
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(out), "--no-advice", "--no-fpga",
                "--force"])
    assert r.exit_code == 0, r.stderr
    # a report it wrote is replaced without --force
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(out), "--no-advice", "--no-fpga"])
    assert r.exit_code == 0, r.stderr
    page = parse(out)
    assert "advice skipped (--advice none)" in " ".join(page.text)
    assert "compare" in page.ids  # the section is there, saying it was left out


def test_unwritable_output_one_line(tmp_path):
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(tmp_path / "no" / "r.html")])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "does not exist" in r.stderr


def test_kernel_without_memory_access_and_non_ascii(tmp_path):
    out = tmp_path / "nomem.html"
    r = invoke(["report", NOMEM, "-o", str(out), "--no-fpga"])
    assert r.exit_code == 0, r.stderr
    html = out.read_text(encoding="ascii")
    page = parse(out)
    assert page.kernels == ["arith", "fill"]
    assert "Kernel arith has no memory access" in " ".join(page.text)
    assert "quick advice: the block-shape sweep" in " ".join(page.text)  # the default
    arith = html[html.index('data-kernel="arith"'):html.index('data-kernel="fill"')]
    assert "<svg" not in arith  # no empty chart
    fill = html[html.index('data-kernel="fill"'):html.index('id="source"')]
    assert "<svg" in fill and "no memory access" not in fill
    assert "na&#239;ve &#181;-benchmark" in html  # the comment, escaped
    src = (ROOT / "tests" / "data" / "nomem.c").read_text()
    store = next(n for n, t in enumerate(src.splitlines(), 1) if "out[i] =" in t)
    assert page.annotated == {store}


def test_pdf_without_a_browser_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium on it
    out, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(out), "--pdf", str(pdf)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "--pdf needs a headless Chromium" in r.stderr and not out.exists()


def test_pdf_with_chromium(tmp_path):
    from cgpredict.render.pdf import find_browser

    if find_browser() is None:
        pytest.skip("no headless Chromium installed")
    out, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    r = invoke(["report", GEMM, *SMALL_GEMM, "-o", str(out), "--pdf", str(pdf),
                "--advice", "none", "--no-fpga"])
    assert r.exit_code == 0, r.stderr
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 5000


def test_advice_code_and_roofline_in_html():
    """A fix's CUDA snippet is shown as written (escaped, in <pre>) and the roofline lines."""
    from types import SimpleNamespace

    from cgpredict.advisor import Fix
    from cgpredict.advisor.roofline import KernelRoofline, KindFloor
    from cgpredict.render.html import _advice_section

    fix = Fix(kind="shared-transpose", title="t", instruction="do it", evidence=("e",),
              predicted_ms=1.0, speedup=2.0, code="tile[a][b] = v; if (x < y) {}")
    line = KernelRoofline(kernel="k", predicted_ms=2.0, dram_ms=1.9, dram_mb=5.0, l2_ms=1.0,
                          issue_ms=0.5, issue_all_sms_ms=0.5, nearest="DRAM", ratio=2.0 / 1.9)
    a = SimpleNamespace(baseline_ms=2.0, fixes=(fix,), benefits=(), notes=(), roofline=(line,),
                        floors=(KindFloor(kind="block-shape", floor_ms=0.5, why="w"),))
    html = _advice_section(a)
    assert "<pre class='code'>tile[a][b] = v; if (x &lt; y) {}</pre>" in html
    assert "k: predicted 2 ms; bounds DRAM 1.9 ms (5 MB)" in html
    assert "no fix can beat the DRAM bound without reducing DRAM traffic" in html
    assert "best any block-shape fix can reach: 0.5 ms (w)" in html
