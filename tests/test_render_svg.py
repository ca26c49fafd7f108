"""The report's inline SVG: the MWP-CWP schedule by hand, and charts that are well-formed XML
with no external reference."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cgpredict.render.svg import (
    Bar,
    RooflinePoint,
    TimelineInputs,
    _schedule,
    bars_svg,
    roofline_svg,
    timeline_svg,
)

SVG = "{http://www.w3.org/2000/svg}"


def test_schedule_by_hand():
    # 10 compute cycles per memory period, 100-cycle memory latency, departures 5 apart
    t = TimelineInputs(comp_cycles=20, mem_insts=2, mem_l=100, departure_delay=5, n_warps=2,
                       mwp=2, cwp=2)
    rows = _schedule(t, 2, 2)
    assert rows[0] == [("compute", 0, 10), ("memory", 10, 110),
                       ("compute", 110, 120), ("memory", 120, 220)]
    # warp 2 computes after warp 1 (one SM), departs 5 cycles after it at the earliest
    assert rows[1] == [("compute", 10, 20), ("memory", 20, 120),
                       ("compute", 120, 130), ("memory", 130, 230)]


def test_departure_delay_spaces_requests():
    t = TimelineInputs(comp_cycles=0, mem_insts=1, mem_l=50, departure_delay=20, n_warps=3,
                       mwp=2.5, cwp=3)
    starts = [row[1][1] for row in _schedule(t, 3, 1)]
    assert starts == [0, 20, 40]


def test_charts_are_wellformed_and_offline():
    t = TimelineInputs(100, 4, 400, 10, 48, 20.0, 5.0)
    svgs = [
        timeline_svg(t),
        roofline_svg([RooflinePoint("k<1>", 0.5, 1e9)], 2e9, 1e10, "k on dev"),
        bars_svg([Bar("a & b", 2.0), Bar("zero", 0.0), Bar("inf", float("inf"))], "x", log=True),
    ]
    for s in svgs:
        root = ET.fromstring(s)
        assert root.tag == f"{SVG}svg"
        assert "href" not in s and "http://www.w3.org/2000/svg" in s
    timeline = ET.fromstring(svgs[0])
    assert len(timeline.findall(f"{SVG}rect")) == 8 * 3 * 2 + 2  # 8 warps shown, legend
    assert "first 8 shown" in svgs[0]
    assert "k&lt;1&gt;" in svgs[1] and "a &amp; b" in svgs[2]
