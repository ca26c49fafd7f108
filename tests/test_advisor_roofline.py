"""Tests of cgpredict.advisor.roofline's text: what a kernel at its DRAM bound can still gain."""

from __future__ import annotations

from cgpredict.advisor.roofline import KernelRoofline, roofline_text


def _line(dram_ms: float, stream_ms: float | None) -> KernelRoofline:
    """A kernel predicted at its DRAM bound of ``dram_ms``, ``stream_ms`` of it bytes."""
    return KernelRoofline(kernel="k", predicted_ms=dram_ms, dram_ms=dram_ms, dram_mb=1074.0,
                          l2_ms=0.2, issue_ms=0.07, issue_all_sms_ms=0.07, nearest="DRAM",
                          ratio=1.0, dram_stream_ms=stream_ms)


def test_a_bound_of_bytes_alone_cannot_be_beaten():
    """By hand: 1074 MB at 3097 GB/s is 0.347 ms; a bound that is those bytes alone leaves
    no gain without less traffic."""
    text = roofline_text(_line(0.347, 0.347))
    assert "no fix can beat the DRAM bound without reducing DRAM traffic" in text


def test_a_bound_with_round_trips_names_the_bytes_floor():
    """By hand: a copy of one float a thread over 2 x 2^27 floats, 0.347 ms of bytes in a
    0.550 ms bound: the 0.203 ms of round trips can shrink, the 0.347 ms cannot; the text
    must not say that the whole 0.550 ms is out of reach."""
    text = roofline_text(_line(0.550, 0.347))
    assert "0.347 ms is the bytes at the DRAM bandwidth" in text
    assert "no fix can beat the DRAM bound" not in text
