"""Text and JSON renderings of the FPGA report (``cgpredict fpga``)."""

from __future__ import annotations

import dataclasses
import json
import math

from .results import FPGAReport

SCHEMA_VERSION = 1

__all__ = ["fpga_to_json", "fpga_to_text"]


def _mb(n: float) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.1f} KB"


def _plain(x):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in sorted(x.items())}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float):
        return None if math.isinf(x) or math.isnan(x) else round(x, 6)
    if hasattr(x, "item"):
        return _plain(x.item())
    return x


def _fpga_dict(rep: FPGAReport) -> dict:
    d = _plain(rep)
    d.pop("seconds", None)
    d["total_ms"] = round(rep.total_ms, 6)
    return d


def fpga_to_json(rep: FPGAReport) -> str:
    d = _fpga_dict(rep)
    d["schema_version"] = SCHEMA_VERSION
    return json.dumps(d, indent=2, sort_keys=True)


def _res(r) -> str:
    return f"DSP {r.dsp:.0f}, BRAM36 {r.bram36:.0f}, LUT {r.lut:.0f}, FF {r.ff:.0f}"


def _tiled_text(t, note: str) -> list[str]:
    tiles = " x ".join(f"{x}" for x in t.tiles)
    out = [
        f"  design: tiled (tiles {tiles} of trips "
        f"{' x '.join(f'{x:.0f}' for x in t.trips)}), inner loop pipelined II {t.ii} "
        f"(recurrence {t.rec_mii}, ports {t.port_mii}, DSP {t.dsp_mii}) and unrolled x{t.unroll}, "
        f"depth {t.depth}, {'double' if t.double_buffer else 'single'} buffering",
        f"  compute {t.compute_cycles:.0f} cycles = {t.compute_ms:.4f} ms; transfers "
        f"{_mb(t.transfer_bytes)} at {t.bytes_per_cycle:.3g} B/cycle ({t.transfer_limit}) = "
        f"{t.transfer_ms:.4f} ms "
        f"({'overlapped' if t.double_buffer else 'not overlapped'}); bound: {t.bound}",
        f"  explored {t.points_evaluated} points ({t.points_skipped} skipped: buffers do not "
        f"fit; {t.points_pareto} on the time/resource/transfer Pareto front)",
    ]
    for b in t.buffers:
        rw = ("r" if b.read else "") + ("w" if b.written else "")
        out.append(
            f"  buffer {b.array + '_buf':<12} {'x'.join(str(d) for d in b.dims):>10} "
            f"{_mb(b.bytes):>9} {rw:<2} partition {b.partition}, {b.bram36} BRAM36, filled "
            f"{b.fills:.0f}x, {_mb(b.traffic_bytes)} moved in {b.row_bytes}-byte bursts "
            f"({b.ddr_efficiency:.0%} of the DDR peak)"
        )
    out.append("  HLS:")
    out += [f"    {p}" for p in t.pragmas]
    out.append("  tiled loop structure:")
    out += [f"    {s}" for s in t.structure]
    if note:
        out.append(f"  ({note})")
    return out


def fpga_to_text(rep: FPGAReport) -> str:
    b = rep.budget
    work = " ".join(f"{k}={v}" for k, v in sorted(rep.work_sizes.items()))
    tsz = " ".join(f"{k}={v}" for k, v in sorted(rep.trace_sizes.items()))
    out = [
        (
            f"FPGA estimate for {rep.source} on {rep.device} ({rep.clock_mhz:g} MHz; budget "
            f"{_res(b)})"
        ),
        f"work size: {work}   trace size: {tsz}",
    ]
    for k in rep.kernels:
        out.append("")
        out.append(
            f"kernel {k.name} ({k.location}): {k.time_ms:.4f} ms, bound: {k.bound}"
            f"{'' if k.fits else ' (DOES NOT FIT)'}"
        )
        out.append(f"  resources: {_res(k.resources)}")
        if k.tiled is not None and k.design == "tiled":
            out += _tiled_text(k.tiled, k.tiling_note)
            continue
        if k.tiling_note:
            out.append(f"  {k.tiling_note}")
        for a in k.arrays:
            where = f"BRAM, partition {a.partition}" if a.on_chip else "DRAM (streamed)"
            rw = ("r" if a.read else "") + ("w" if a.written else "")
            out.append(f"  array {a.name:<10} {_mb(a.bytes):>10}  {rw:<2} {where}")
        for lp in k.loops:
            out.append(
                f"  loop at line {lp.line}: trip {lp.trip_count:.0f} x {lp.entries:.0f} "
                f"entries; II {lp.ii} (recurrence {lp.rec_mii}, ports {lp.port_mii}, "
                f"DSP {lp.dsp_mii}), depth {lp.depth}, {lp.compute_cycles:.0f} cycles = "
                f"{lp.compute_ms:.4f} ms; streamed {_mb(lp.stream_bytes)} = "
                f"{lp.stream_ms:.4f} ms; bound: {lp.bound} "
                f"({lp.points_explored} points explored)"
            )
            for p in lp.pragmas or ("(no pragma: plain sequential loop)",):
                out.append(f"    {p}")
        if k.transfer_bytes:
            out.append(
                f"  copy in/out of on-chip arrays: {_mb(k.transfer_bytes)} = {k.transfer_ms:.4f} ms"
            )
        for w in k.warnings:
            out.append(f"  warning: {w}")
    out.append("")
    out.append(f"total estimated time: {rep.total_ms:.4f} ms")
    return "\n".join(out)


