"""``cgpredict report``: one self-contained HTML page (inline CSS and SVG, no script, no
network) rendered from the typed results of ``api.report_page``; nothing is analysed here.

Sections: per kernel the predicted time, the bound that sets it and the model's case, the
MWP-CWP timeline and a roofline point; the C source annotated line by line with its memory
accesses (a heat colour by the line's share of its kernel's memory transactions); the
advisor's ranked fixes; GPU vs FPGA; and the device file, port and sizes used.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from ..errors import OutputExistsError, check_writable
from ..models import bound_text
from .svg import COLOURS, Bar, RooflinePoint, TimelineInputs, bars_svg, roofline_svg, timeline_svg

__all__ = ["GENERATOR", "is_report", "render_html", "write_report"]

#: The mark of a page cgpredict wrote: such a file may be overwritten without --force.
GENERATOR = "cgpredict report"

CSS = """
body{font-family:system-ui,sans-serif;margin:0 2em 3em;color:#222;max-width:1100px;
overflow-wrap:break-word}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-top:.6em}
table{border-collapse:collapse;margin:.4em 0;display:block;max-width:100%;overflow-x:auto}
td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right}
nav a{margin-right:1em}.note{color:#8a6d3b;background:#fcf8e3;padding:4px 8px}
pre.src{font-size:12px;line-height:1.35;margin:0}
table.src{display:table}table.src td{padding:0 6px;border:none;font-family:monospace;
font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
table.src td.ln{color:#999;text-align:right;user-select:none}
table.src tr.acc td.code{font-weight:600}
table.src td.ann{font-family:system-ui,sans-serif;white-space:normal;color:#444;font-size:11px}
.big{font-size:1.3em;font-weight:600}code{background:#f5f5f5;padding:0 3px}
svg{max-width:100%;height:auto}
"""


def esc(text: object) -> str:
    """HTML-escaped and ASCII only (non-ASCII as character references)."""
    return html.escape(str(text)).encode("ascii", "xmlcharrefreplace").decode("ascii")


def _anchor(name: str) -> str:
    return "kernel-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _line_of(location: str) -> tuple[str, int] | None:
    file, _, line = location.rpartition(":")
    return (file, int(line)) if line.isdigit() else None


def _weights(k) -> list[float]:
    """Each memory instruction's global transactions per thread: its share of the kernel's
    memory traffic (what the page calls its share of memory time)."""
    return [0.0 if m.pattern == "shared" else m.per_thread * m.l2_trans_per_warp for m in k.mem]


def _heat(share: float) -> str:
    alpha = 0.12 + 0.6 * min(max(share, 0.0), 1.0)
    return f"background:rgba(217,83,79,{alpha:.2f})"


def _fmt_sizes(sizes: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "(file defaults)"


def _bound_text(r) -> str:
    if r.binding == "model":
        return f"the model's own time ({bound_text(r)}, case {r.case})"
    return f"the physical {r.binding} bound ({r.bound}-bound; the model's case was {r.case})"


def _timeline(k, r) -> str:
    d = r.details
    comp = getattr(d, "comp_cycles", None)
    mem_l = getattr(d, "mem_l", None)
    dd = getattr(d, "departure_delay", None)
    if comp is None or mem_l is None or dd is None:
        return f"<p>The {esc(r.model)} model has no memory-period timeline.</p>"
    n_mem = getattr(d, "no_mem_insts", None) or k.profile.loads_only().mem_insts
    if not n_mem or mem_l <= 0:
        return "<p>No load a warp waits for: no memory periods to draw.</p>"
    t = TimelineInputs(comp, n_mem, mem_l, dd, r.n_warps, r.mwp, r.cwp)
    return (
        "<p>The model's timeline of one SM (a schematic built from its own figures: memory "
        f"latency {mem_l:.4g} cycles, departure delay {dd:.4g}, "
        f"{comp / max(n_mem, 1):.4g} compute cycles per memory period):</p>" + timeline_svg(t)
    )


def _roofline(k, r, dev) -> str:
    b = r.bounds
    launches = max(k.profile.launches, 1)
    cycles = r.cycles / launches
    if b is None or b.dram_bytes <= 0 or cycles <= 0 or b.warp_insts <= 0:
        return "<p>No DRAM traffic: no roofline point.</p>"
    peak = dev.sm_count * dev.freq_hz / dev.inst_cycles_per_warp_inst
    perf = b.warp_insts / (cycles / dev.freq_hz)
    point = RooflinePoint(k.name, b.warp_insts / b.dram_bytes, perf)
    return roofline_svg([point], peak, dev.dram_bandwidth_bytes_per_s, f"{k.name} on {dev.name}")


def _kernel_section(k, dev, source_name: str) -> str:
    r = k.result
    b = r.bounds
    out = [
        f'<section id="{_anchor(k.name)}" class="kernel" data-kernel="{esc(k.name)}">',
        f"<h2>Kernel {esc(k.name)} <small>({esc(k.location)})</small></h2>",
        f'<p class="big">{k.time_ms:.4g} ms predicted'
        + (f" for {k.launches} launches" if k.launches > 1 else "")
        + "</p>",
        f"<p class='parts'>GPU work {k.kernel_ms:.4g} ms + launch costs {k.launch_ms:.4g} ms "
        f"+ first launch (module load, once per program) {k.once_ms:.4g} ms.</p>",
        f"<p>Time set by {esc(_bound_text(r))}. MWP {r.mwp:.2f}, CWP {r.cwp:.2f}, "
        f"N {r.n_warps} warps and B {r.b_blocks} blocks per SM, occupancy {k.occupancy:.0%} "
        f"(limited by {esc(k.occupancy_limit)}), grid {k.grid_dims}-D "
        f"{k.grid_threads[0]}x{k.grid_threads[1]} threads, block {esc(k.block)}, "
        f"L2 hit rate {k.l2_hit_rate:.1%}.</p>",
    ]
    if k.size_check:
        out.append("<p class='size-check'>Trace size: "
                   + "; ".join(esc(x) for x in k.size_check) + ".</p>")
    if b is not None:
        rows = [
            ("model", r.model_cycles, "the model's own estimate"),
            ("dram", b.dram_cycles, f"{b.dram_bytes / 1e6:.4g} MB at the DRAM bandwidth"
             + (f", plus each wave's latency: a DRAM round trip, or eq. (LW) "
                f"({b.dram_wave_cycles:.4g} cycles)" if b.dram_wave_cycles else "")),
            ("issue", b.issue_cycles, f"{b.warp_insts:.4g} warp instructions"),
            ("l2", b.l2_cycles, f"{b.l2_load_trans:.4g} load and {b.l2_store_trans:.4g} "
                                "store transactions"),
            ("chain", b.chain_cycles, "the busiest thread's own critical path, every wave"),
        ]
        if b.pipe:
            rows.append(("pipe", b.pipe_cycles, f"the {b.pipe} pipe at its published rate"))
        if b.l1_cycles:
            rows.append(("l1", b.l1_cycles, "every global line through the SM's L1"))
        if b.dispatch_cycles:
            rows.append(("dispatch", b.dispatch_cycles,
                         f"{b.blocks:.4g} blocks started one after another, eq. (BD)"))
        if b.phase_cycles:
            rows.append(("phases", b.phase_cycles,
                         "each loop of the thread at its slowest L1 or L2 path, eq. (PH)"))
        if b.atomic_ops:
            slices = (f"; the busiest L2 slice's share of {b.atomic_requests:.4g} requests: "
                      f"{b.atomic_slice_cycles:.4g} cycles" if b.atomic_slice_cycles else "")
            rows.append(("atomic", b.atomic_cycles, f"{b.atomic_ops:.4g} atomic operations, "
                         f"the busiest address's applied one after another{slices}"))
        out.append("<table class='bounds'><tr><th>bound</th><th>cycles per launch</th>"
                   "<th>what it counts</th></tr>")
        for name, cyc, what in rows:
            mark = " <b>(sets the time)</b>" if name == r.binding else ""
            out.append(f"<tr><td>{name}{mark}</td><td class='num'>{cyc:.4g}</td>"
                       f"<td>{esc(what)}</td></tr>")
        out.append("</table>")
    if not k.mem:
        out.append(
            f'<p class="note no-mem">Kernel {esc(k.name)} has no memory access: nothing to '
            "annotate in the source, no memory timeline and no roofline point.</p>"
        )
    else:
        out.append("<h3>MWP-CWP picture</h3>" + _timeline(k, r))
        out.append("<h3>Roofline</h3>" + _roofline(k, r, dev))
        out.append(_mem_table(k, source_name))
    out += [f'<p class="note">warning: {esc(w)}</p>' for w in k.warnings]
    out.append("</section>")
    return "\n".join(out)


def _mem_table(k, source_name: str) -> str:
    w = _weights(k)
    total = sum(w) or 1.0
    out = [
        "<h3>Memory instructions</h3><table class='mem'><tr><th>access</th><th>line</th>"
        "<th>kind</th><th>pattern</th><th>trans/warp</th><th>L2 hit</th><th>per thread</th>"
        "<th>share of memory time</th></tr>"
    ]
    for m, wt in zip(k.mem, w):
        loc = _line_of(m.location)
        where = esc(m.location)
        if loc and os.path.basename(loc[0]) == os.path.basename(source_name):
            where = f'<a href="#L{loc[1]}">{where}</a>'
        shared = m.pattern == "shared"
        out.append(
            f"<tr><td><code>{esc(m.text)}</code></td><td>{where}</td><td>{esc(m.kind)}</td>"
            f"<td>{esc(m.pattern)}</td>"
            f"<td class='num'>{'-' if shared else f'{m.l2_trans_per_warp:.2f}'}</td>"
            f"<td class='num'>{esc(m.hit_text())}</td>"
            f"<td class='num'>{m.per_thread:.4g}</td>"
            f"<td class='num' style='{_heat(wt / total)}'>{wt / total:.1%}</td></tr>"
        )
    out.append("</table><p><small>Share of memory time: the instruction's global "
               "transactions per thread over the kernel's (a proxy; shared-memory reads "
               "count none).</small></p>")
    return "".join(out)


def _annotations(report, source_name: str) -> dict[int, list[tuple[str, str, float]]]:
    """Per source line: (kernel, annotation text, share of that kernel's memory time)."""
    out: dict[int, list[tuple[str, str, float]]] = {}
    for k in report.kernels:
        w = _weights(k)
        total = sum(w) or 1.0
        for m, wt in zip(k.mem, w):
            loc = _line_of(m.location)
            if not loc or os.path.basename(loc[0]) != os.path.basename(source_name):
                continue
            shared = m.pattern == "shared"
            text = (
                f"{k.name}: {m.text} {m.kind}, {m.pattern}"
                + ("" if shared else f", {m.l2_trans_per_warp:.2f} trans/warp"
                   + ("" if m.hit_text() == "-" else
                      " (the L1 serves it)" if m.hit_text() == "L1" else
                      f", L2 hit {m.hit_text(0)}"))
                + f", {wt / total:.0%} of memory time"
            )
            out.setdefault(loc[1], []).append((k.name, text, wt / total))
    return out


def _source_section(page) -> str:
    notes = _annotations(page.report, page.report.source)
    out = [
        '<section id="source"><h2>Source, annotated</h2>',
        "<p>Each line with a memory access shows its accesses; the colour is the line's "
        "share of its kernel's memory time.</p><table class='src'>",
    ]
    for n, line in enumerate(page.source_text.splitlines(), 1):
        ann = notes.get(n)
        if ann:
            share = max(s for _, _, s in ann)
            cells = "<br>".join(esc(t) for _, t, _ in ann)
            out.append(
                f'<tr id="L{n}" class="acc" data-line="{n}" style="{_heat(share)}">'
                f'<td class="ln">{n}</td><td class="code">{esc(line)}</td>'
                f'<td class="ann">{cells}</td></tr>'
            )
        else:
            out.append(
                f'<tr id="L{n}"><td class="ln">{n}</td><td class="code">{esc(line)}</td>'
                f"<td></td></tr>"
            )
    out.append("</table></section>")
    return "\n".join(out)


def _advice_roofline(a) -> list[str]:
    """The advice's roofline: each kernel's bounds, and the best each kind of fix can reach."""
    from ..advisor.roofline import floor_text, roofline_text

    items = [f"<li>{esc(roofline_text(x))}</li>" for x in getattr(a, "roofline", ())]
    items += [f"<li>{esc(floor_text(f))}</li>" for f in getattr(a, "floors", ())]
    return ["<h3>Roofline</h3><ul class='roofline'>" + "".join(items) + "</ul>"] if items else []


def _advice_section(a) -> str:
    out = ['<section id="advice"><h2>Advice: fixes ranked by predicted speedup</h2>']
    if a is None:
        out.append("<p>No advice in this report.</p></section>")
        return "\n".join(out)
    out.append(f"<p>Now: {a.baseline_ms:.4g} ms predicted.</p>")
    out += _advice_roofline(a)
    if not a.fixes:
        out.append("<p>No candidate fix was found.</p>")
    else:
        bars = [
            Bar(f"{i}. {f.title}", f.speedup,
                COLOURS["bar"] if f.speedup >= 1 else COLOURS["slower"], f"{f.speedup:.2f}x")
            for i, f in enumerate(a.fixes, 1)
        ]
        out.append(bars_svg(bars, "predicted speedup"))
        out.append("<table class='fixes'><tr><th>#</th><th>speedup</th><th>predicted ms</th>"
                   "<th>fix</th><th>the code it changes</th></tr>")
        for i, f in enumerate(a.fixes, 1):
            what = (
                "not worth doing: predicted slower than now"
                if f.speedup < 1 - 1e-3
                else f.instruction
            )
            code = (f"<pre class='code'>{esc(f.code)}</pre>"
                    if f.code and f.speedup >= 1 - 1e-3 else "")
            ev = "".join(f"<li>{esc(e)}</li>" for e in f.evidence)
            ev += "".join(f"<li>why: {esc(w)}</li>" for w in f.why)
            out.append(
                f"<tr><td>{i}</td><td class='num'>{f.speedup:.2f}x</td>"
                f"<td class='num'>{f.predicted_ms:.4g}</td><td>[{esc(f.kind)}] {esc(f.title)}"
                f"</td><td>{esc(what)}{code}<ul>{ev}</ul></td></tr>"
            )
        out.append("</table>")
    if a.benefits:
        out.append("<h3>GPUPerf benefits (cycles; larger = more to gain)</h3><table><tr>"
                   "<th>kernel</th><th>bound</th><th>T_comp</th><th>T'_mem</th><th>B_itilp</th>"
                   "<th>B_memlp</th><th>B_fp</th><th>B_serial</th></tr>")
        for b in a.benefits:
            nums = (b.t_comp, b.t_mem_exposed, b.b_itilp, b.b_memlp, b.b_fp, b.b_serial)
            out.append(f"<tr><td>{esc(b.kernel)}</td><td>{esc(b.bound)}</td>"
                       + "".join(f"<td class='num'>{x:.4g}</td>" for x in nums) + "</tr>")
        out.append("</table>")
    out += [f'<p class="note">{esc(n)}</p>' for n in a.notes]
    out.append("</section>")
    return "\n".join(out)


def _compare_section(c) -> str:
    out = ['<section id="compare"><h2>GPU vs FPGA</h2>']
    if c is None:
        out.append("<p>No GPU vs FPGA comparison in this report.</p></section>")
        return "\n".join(out)
    bars = []
    for r in c.kernels:
        bars.append(Bar(f"{r.name} GPU", r.gpu_ms, COLOURS["gpu"], f"{r.gpu_ms:.4g} ms"))
        bars.append(Bar(f"{r.name} FPGA", r.fpga_ms, COLOURS["fpga"], f"{r.fpga_ms:.4g} ms"))
    out.append(f"<p>{esc(c.gpu_device)} against {esc(c.fpga_device)}: recommendation "
               f"<b>{esc(c.recommendation)}</b> ({c.gpu_total_ms:.4g} ms GPU, "
               f"{c.fpga_total_ms:.4g} ms FPGA).</p>")
    if bars:
        out.append(bars_svg(bars, "ms", log=True))
    out.append("<ul>" + "".join(f"<li>{esc(r)}</li>" for r in c.reasons) + "</ul>")
    for r in c.kernels:
        out.append(f"<h3>{esc(r.name)}: {esc(r.winner)} faster</h3><ul>"
                   + "".join(f"<li>{esc(x)}</li>" for x in r.reasons) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def _setup_section(page) -> str:
    rep, o = page.report, page.options
    rows = [
        ("source", page.source_path),
        ("GPU device", f"{rep.device} ({page.device_file})"),
        ("FPGA device", page.fpga_device or "(not estimated)"),
        ("model", rep.model),
        ("CUDA port", rep.port),
        ("block", str(o.block) if o.block else "default (32x32 for 2-D grids, 256x1 for 1-D)"),
        ("work size", _fmt_sizes(rep.work_sizes)),
        ("traced at", _fmt_sizes(rep.trace_sizes)),
    ]
    if rep.seconds:  # wall-clock times, only when asked for (report --timings)
        rows.append(
            ("seconds", ", ".join(f"{k} {v:.2f}" for k, v in sorted(rep.seconds.items())))
        )
    out = ['<section id="setup"><h2>Device, port and sizes used</h2><table>']
    out += [f"<tr><th>{esc(a)}</th><td>{esc(b)}</td></tr>" for a, b in rows]
    out.append("</table>")
    out += [f'<p class="note">warning: {esc(w)}</p>' for w in rep.warnings]
    out += [f'<p class="note">{esc(n)}</p>' for n in page.notes]
    out.append("</section>")
    return "\n".join(out)


def render_html(page) -> str:
    """The whole page of an ``api.ReportPage`` as one self-contained HTML document."""
    from ..devices import load_device
    from ..version import __version__

    rep = page.report
    dev = load_device(page.options.device)
    nav = "".join(f'<a href="#{_anchor(k.name)}">{esc(k.name)}</a>' for k in rep.kernels)
    nav += '<a href="#source">source</a><a href="#advice">advice</a>'
    nav += '<a href="#compare">GPU vs FPGA</a><a href="#setup">setup</a>'
    summary = "".join(
        f'<tr><td><a href="#{_anchor(k.name)}">{esc(k.name)}</a></td>'
        f"<td class='num'>{k.time_ms:.4g}</td><td>{esc(k.result.binding)}</td>"
        f"<td>{esc(k.result.bound)}</td><td>{esc(k.result.case)}</td></tr>"
        for k in rep.kernels
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta name="generator" content="{GENERATOR} {esc(__version__)}">',
        f"<title>{esc(rep.source)} on {esc(rep.device)}: cgpredict report</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{esc(rep.source)} on {esc(rep.device)}</h1>",
        f"<nav>{nav}</nav>",
        f'<p class="big">{rep.total_ms:.4g} ms predicted in total ({esc(rep.model)} model, '
        f"{esc(rep.port)} port, work size {esc(_fmt_sizes(rep.work_sizes))})</p>",
        "<table><tr><th>kernel</th><th>ms</th><th>set by</th><th>bound</th><th>case</th></tr>"
        f"{summary}</table>",
        *(_kernel_section(k, dev, rep.source) for k in rep.kernels),
        _source_section(page),
        _advice_section(page.advice),
        _compare_section(page.comparison),
        _setup_section(page),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def is_report(path: Path) -> bool:
    """Whether ``path`` is a page this command wrote (its generator mark near the top)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}'.encode() in head


def check_output(path: Path, force: bool = False) -> None:
    """Refuse (one line, exit 2) an output that exists and is not a cgpredict report, unless
    ``force``; and one that cannot be written at all."""
    check_writable(path, "report")
    if path.exists() and not force and not is_report(path):
        raise OutputExistsError(
            f"{path} exists and is not a cgpredict report; use --force to overwrite it"
        )


def write_report(page, path: Path, force: bool = False) -> Path:
    """Render ``page`` and write it to ``path`` (see ``check_output``)."""
    check_output(path, force)
    text = render_html(page)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="ascii")
    os.replace(tmp, path)
    return path
