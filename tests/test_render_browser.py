"""`cgpredict report` in a real browser: Debian's headless ``chromium`` renders the page of each
corpus file family (one 2-D kernel, a multi-kernel file, a tiled file, a GPU vs FPGA
comparison with advice) at a desktop and a narrow width. Each page is screenshot (kept under
the test's tmp dir, CI's artefacts), measured (no element wider than the window unless inside
a scrolling box, the source annotation and the timeline visible), and loaded with a net log
(no request leaves the page). Without a browser these tests skip (``.ci/run`` installs one).

The report runs no script, so the measuring is done on a copy: the page, with a small probe
script appended, is the ``srcdoc`` of an iframe exactly as wide as the window under test; the
probe writes what it measured into the outer page, which ``--dump-dom`` prints."""

from __future__ import annotations

import html
import json
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict.cli import main
from cgpredict.render.pdf import find_browser

ROOT = Path(__file__).resolve().parents[1]
POLY = ROOT / "polybench_c"
BROWSER = find_browser()

pytestmark = [
    pytest.mark.usefixtures("compiler"),
    pytest.mark.slow,
    pytest.mark.skipif(BROWSER is None, reason="no headless Chromium installed "
                       "(Debian: apt-get install chromium)"),
]


def _sizes(**work: int) -> list[str]:
    """-D NAME=V for each work size and --trace-size NAME=V/2 (a small, quick trace)."""
    args: list[str] = []
    for name, v in work.items():
        args += ["-D", f"{name}={v}", "--trace-size", f"{name}={v // 2}"]
    return args


# name -> (source, report options): one page per corpus file family
PAGES: dict[str, tuple[Path, list[str]]] = {
    "gemm": (POLY / "gemm.c", [*_sizes(NI=64, NJ=64, NK=64), "--advice", "none", "--no-fpga"]),
    "2mm": (POLY / "2mm.c", [*_sizes(NI=64, NJ=64, NK=64, NL=64), "--advice", "none",
                             "--no-fpga"]),
    "gemm_tiled": (POLY / "gemm_tiled.c", [*_sizes(NI=64, NJ=64, NK=64), "--advice", "none",
                                           "--no-fpga"]),
    "fpga": (POLY / "syrk.c", [*_sizes(NI=64, NJ=64), "--fpga", "zcu102", "--advice", "quick"]),
}
WIDTHS = (1280, 400)  # desktop, narrow (a phone held upright)

# Appended to a COPY of the page: measures the layout, writes JSON into the outer page.
PROBE = """<script>
(function () {
  var W = document.documentElement.clientWidth;
  function scroller(e) {  /* the nearest ancestor that clips or scrolls horizontally */
    for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== 'visible') return p;
    }
    return null;
  }
  function name(e) {
    var c = e.getAttribute('class');
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (c ? '.' + c : '');
  }
  function shown(e) {  /* laid out, not hidden, starting inside the window and its box */
    if (!e) return false;
    var r = e.getBoundingClientRect(), s = getComputedStyle(e), box = scroller(e);
    var right = box ? Math.min(W, box.getBoundingClientRect().right) : W;
    return r.width > 0 && r.height > 0 && s.visibility === 'visible' && s.display !== 'none'
      && r.left >= 0 && r.left < right;
  }
  var over = [];
  document.querySelectorAll('body *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 0.5 && !scroller(e))
      over.push(name(e) + ' right=' + Math.round(r.right));
  });
  var ann = document.querySelectorAll('#source tr.acc td.ann');
  var tl = document.querySelectorAll('svg.timeline');
  parent.document.getElementById('probe').textContent = JSON.stringify({
    width: W, scroll_width: document.documentElement.scrollWidth, overflowing: over,
    annotations: ann.length, annotations_shown: Array.prototype.filter.call(ann, shown).length,
    timelines: tl.length, timelines_shown: Array.prototype.filter.call(tl, shown).length,
    timeline_fits: Array.prototype.every.call(tl, function (e) {
      return e.getBoundingClientRect().right <= W + 0.5; })
  });
})();
</script>"""


def chromium(args: list[str], profile: Path, timeout_s: float = 120.0) -> str:
    """Run the headless browser with a private profile, no background traffic, and every host
    name resolving to nothing (a request could not leave this machine); its stdout."""
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-default-apps", f"--user-data-dir={profile}",
           "--host-resolver-rules=MAP * ~NOTFOUND", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def screenshot(page: Path, width: int, png: Path, netlog: Path | None = None) -> Path:
    """``page`` as a ``width``-pixel-wide window shows it (3000 px tall), as a PNG."""
    extra = [f"--log-net-log={netlog}"] if netlog else []
    chromium([*extra, f"--window-size={width},3000", f"--screenshot={png}",
              page.resolve().as_uri()], png.parent / f"profile-{png.stem}")
    return png


def measure(page: Path, width: int, work: Path) -> dict:
    """What the probe measures of ``page`` laid out ``width`` pixels wide."""
    inner = page.read_text(encoding="ascii").replace("</body>", PROBE + "</body>")
    outer = work / f"measure-{page.stem}-{width}.html"
    outer.write_text(
        "<!DOCTYPE html><html><body style='margin:0'><pre id='probe'>not run</pre>"
        f"<iframe style='border:0;width:{width}px;height:1200px' "
        f"srcdoc=\"{html.escape(inner, quote=True)}\"></iframe></body></html>", encoding="utf-8")
    dom = chromium([f"--window-size={max(width, 500) + 40},1300", "--dump-dom",
                    outer.as_uri()], work / f"profile-measure-{page.stem}-{width}")
    start = dom.index("<pre id=\"probe\">") + len("<pre id=\"probe\">")
    return json.loads(html.unescape(dom[start:dom.index("</pre>", start)]))


def page_requests(netlog: Path) -> list[str]:
    """The URLs the page (a file:// document) asked for, from Chromium's net log: the
    requests whose network isolation key is the file:// site (the browser's own traffic has
    another key)."""
    log = json.loads(netlog.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [e["params"]["url"] for e in log["events"]
            if e["type"] == start_job and "file://" in e["params"].get("network_isolation_key", "")
            and not e["params"]["url"].startswith("file:")]


def png_size(png: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


class ActiveContent(HTMLParser):
    """Anything in a page that would run or fetch: scripts, event handlers, javascript: and
    remote URLs, frames, objects."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "link"):
            self.found.append(tag)
        for key, value in attrs:
            if key == "xmlns":  # a namespace name, never fetched
                continue
            v = (value or "").strip().lower()
            if key.startswith("on") or v.startswith(("javascript:", "http:", "https:", "//")):
                self.found.append(f"{tag} {key}={value}")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """The four report pages, written by ``cgpredict report``."""
    out = tmp_path_factory.mktemp("browser")
    written = {}
    for name, (source, options) in PAGES.items():
        page = out / f"{name}.html"
        r = CliRunner().invoke(main, ["report", str(source), *options, "-o", str(page)],
                               catch_exceptions=False)
        assert r.exit_code == 0, r.stderr
        written[name] = page
    return written


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(PAGES))
def test_page_fits_and_shows_source_and_timeline(pages, name, width):
    page = pages[name]
    png = screenshot(page, width, page.with_name(f"{name}-{width}.png"))
    assert png_size(png) == (width, 3000) and png.stat().st_size > 20_000  # not blank
    m = measure(page, width, page.parent)
    assert m["width"] == width
    assert m["overflowing"] == [] and m["scroll_width"] <= width, m
    assert m["annotations"] >= 1 and m["annotations_shown"] == m["annotations"], m
    kernels = page.read_text(encoding="ascii").count('class="kernel"')
    assert m["timelines"] == kernels and m["timelines_shown"] == kernels, m
    assert m["timeline_fits"], m


@pytest.mark.parametrize("name", list(PAGES))
def test_page_requests_nothing_and_runs_nothing(pages, name):
    page = pages[name]
    netlog = page.with_name(f"{name}-netlog.json")
    screenshot(page, WIDTHS[0], page.with_name(f"{name}-net.png"), netlog)
    assert page_requests(netlog) == []
    parser = ActiveContent()
    parser.feed(page.read_text(encoding="ascii"))
    assert parser.found == []


def test_the_checks_see_a_bad_page(tmp_path):
    """The oracles above can fail: a page with a remote image and stylesheet, a script and a
    2000-pixel-wide box is caught by each."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><img src='http://example.invalid/x.png'>"
                   "<link rel=stylesheet href='https://cdn.example.invalid/a.css'>"
                   "<script>var x = 1;</script><div style='width:2000px'>wide</div>"
                   "<section id='source'><table><tr class='acc'><td class='ann'>a</td></tr>"
                   "</table></section></body></html>", encoding="ascii")
    netlog = tmp_path / "netlog.json"
    screenshot(bad, 400, tmp_path / "bad.png", netlog)
    assert sorted(page_requests(netlog)) == ["http://example.invalid/x.png",
                                             "https://cdn.example.invalid/a.css"]
    m = measure(bad, 400, tmp_path)
    assert any(o.startswith("div right=") for o in m["overflowing"]) and m["scroll_width"] > 400
    assert m["annotations_shown"] == 1 and m["timelines"] == 0
    parser = ActiveContent()
    parser.feed(bad.read_text())
    assert {"script", "link"} <= set(parser.found)
