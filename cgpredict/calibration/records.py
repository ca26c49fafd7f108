"""Device fields from micro-benchmark *records* (JSON lines), as the shared measurements store
them: ``{"ubench": "latency", "footprint_bytes", "stride_bytes", "cycles_per_load"}`` from a
one-thread pointer chase over a footprint, and ``{"ubench": "dram_read_bw", "bytes", "GBps"}``
from a many-block stream (``validation/measured/raw/h100-ubench.jsonl``).

Which footprint measures which level follows from the device's own cache sizes, so any GPU's
records give the same fields the same way (SPEC §6):

* ``l1_latency_cycles``: the largest footprint within half the L1;
* ``l2_latency_cycles``: the largest footprint within half the L2 (on a split L2 such as
  Hopper's this includes the far partition, as a kernel's data spread over the L2 does);
  the smallest footprint past the L1 is kept as the near-partition latency (informational);
* ``dram_latency_cycles``: the smallest footprint past 1.25x the L2, less the L2 latency
  (SPEC eq. (2) adds it to the L2 latency); larger footprints, which add TLB misses a
  streaming kernel does not pay, are kept as notes;
* ``dram_bandwidth_gbps``: the best stream; ``dd_dram_cycles`` derived from it as the cycles
  one SM's sector occupies the DRAM when every SM streams: sector * SMs * clock / bandwidth.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..devices import GPUDevice
from ..errors import CGPredictError
from .analysis import Analysis, Measured

__all__ = ["RecordsError", "analyse_records", "read_records"]


class RecordsError(CGPredictError):
    exit_code = 2


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines micro-benchmark file; one-line error when it is not one."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordsError(f"{path}: cannot read micro-benchmark records: {exc}") from None
    out = []
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise RecordsError(f"{path}:{k}: not a JSON record") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("ubench"), str):
            raise RecordsError(f"{path}:{k}: a record needs a 'ubench' name")
        out.append(rec)
    if not out:
        raise RecordsError(f"{path}: no micro-benchmark records")
    return out


def _positive(rec: Mapping[str, Any], key: str, where: str) -> float:
    v = rec.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise RecordsError(f"{where}: {key} must be a positive number, got {v!r}")
    return float(v)


def analyse_records(
    records: Sequence[Mapping[str, Any]], device: GPUDevice, source: str = "records"
) -> Analysis:
    """Device fields measured by ``records`` on a GPU shaped like ``device`` (cache sizes,
    SM count, sector size, clock)."""
    chase = sorted(
        (
            _positive(r, "footprint_bytes", source),
            _positive(r, "cycles_per_load", source),
        )
        for r in records
        if r["ubench"] == "latency"
    )
    values: dict[str, Measured] = {}
    extra: dict[str, Measured] = {}
    notes: list[str] = []

    def chase_at(fp: float, lat: float, level: str) -> Measured:
        return Measured(
            round(lat, 1),
            f"pointer chase, one thread, {fp / 1024:.0f} KiB footprint ({level}) [{source}]",
        )

    l1 = [(fp, lat) for fp, lat in chase if fp <= device.l1_bytes / 2]
    l2 = [(fp, lat) for fp, lat in chase if device.l1_bytes < fp <= device.l2_bytes / 2]
    dram = [(fp, lat) for fp, lat in chase if fp >= 1.25 * device.l2_bytes]
    if l1:
        values["l1_latency_cycles"] = chase_at(*l1[-1], "L1")
    if l2:
        values["l2_latency_cycles"] = chase_at(*l2[-1], "whole L2")
        extra["l2_near_latency_cycles"] = chase_at(*l2[0], "L2, nearest footprint")
    if dram:
        fp, lat = dram[0]
        l2_lat = l2[-1][1] if l2 else device.l2_latency_cycles
        values["dram_latency_cycles"] = Measured(
            round(lat - l2_lat, 1),
            f"pointer chase {fp / 2**20:.0f} MiB ({lat:.1f} cycles, past the L2) less the L2 "
            f"latency {l2_lat:.1f} [{source}]",
            kind="derived",
        )
        for fp2, lat2 in dram[1:]:
            notes.append(
                f"pointer chase {fp2 / 2**20:.0f} MiB: {lat2:.1f} cycles (TLB misses that "
                f"a streaming kernel does not pay; not used)"
            )
    bws = [_positive(r, "GBps", source) for r in records if r["ubench"] == "dram_read_bw"]
    if bws:
        bw = max(bws)
        values["dram_bandwidth_gbps"] = Measured(bw, f"stream read, best of runs [{source}]")
        dd = device.l2_sector_bytes * device.sm_count * device.freq_hz / (bw * 1e9)
        values["dd_dram_cycles"] = Measured(
            round(dd, 3),
            f"{device.l2_sector_bytes} B sector x {device.sm_count} SMs x "
            f"{device.clock_mhz:g} MHz / {bw:g} GB/s",
            kind="derived",
        )
    if not values:
        raise RecordsError(f"{source}: no latency or bandwidth record this device can use")
    return Analysis(values, {}, extra, tuple(notes))
