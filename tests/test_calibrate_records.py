"""Tests of cgpredict.calibration.records: device fields from JSON-lines micro-benchmark records,
each footprint assigned to a cache level by the device's own sizes (derived by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cgpredict.calibration.records import RecordsError, analyse_records, read_records
from cgpredict.calibration.run import finish_from_raw, load_raw
from cgpredict.devices import load_device

RAW = Path(__file__).resolve().parents[1] / "validation" / "measured" / "raw"


def _records(tmp_path, recs) -> Path:
    p = tmp_path / "ubench.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return p


def test_h100_records_give_the_levels_by_footprint():
    dev = load_device("h100")  # L1 256 KiB, L2 50 MB, 32-B sectors, 132 SMs at 1980 MHz
    a = analyse_records(read_records(RAW / "h100-ubench.jsonl"), dev)
    v = {k: m.value for k, m in a.values.items()}
    assert v["l1_latency_cycles"] == 38.9  # 64 KiB <= 128 KiB
    assert v["l2_latency_cycles"] == 369.2  # 24 MiB, the largest within 25 MB
    assert a.extra["l2_near_latency_cycles"].value == 176.8  # 512 KiB
    assert v["dram_latency_cycles"] == pytest.approx(460.1 - 369.2)  # 64 MiB >= 62.5 MB
    assert v["dram_bandwidth_gbps"] == 3097.0
    assert v["dd_dram_cycles"] == pytest.approx(32 * 132 * 1980e6 / 3097e9, abs=1e-3)
    assert len(a.notes) == 2  # the TLB-missing footprints, kept as notes


def test_from_raw_writes_a_device_file_with_provenance(tmp_path):
    out = tmp_path / "mine.toml"
    r = finish_from_raw(load_raw(RAW / "h100-ubench.jsonl"), out, "h100")
    assert r.device.l2_latency_cycles == 369.2 and r.device.dram_bandwidth_gbps == 3097.0
    assert "h100-ubench.jsonl" in out.read_text()


@pytest.mark.parametrize("lines, msg", [
    (["not json"], "not a JSON record"),
    ([json.dumps({"x": 1})], "needs a 'ubench' name"),
    ([], "no micro-benchmark records"),
])
def test_bad_records_are_one_line_errors(tmp_path, lines, msg):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines))
    with pytest.raises(RecordsError, match=msg):
        read_records(p)


def test_records_this_device_cannot_use(tmp_path):
    p = _records(tmp_path, [{"ubench": "latency", "footprint_bytes": 8192,
                             "cycles_per_load": -3}])
    with pytest.raises(RecordsError, match="cycles_per_load must be a positive number"):
        analyse_records(read_records(p), load_device("h100"))
    p = _records(tmp_path, [{"ubench": "other"}])
    with pytest.raises(RecordsError, match="no latency or bandwidth record"):
        analyse_records(read_records(p), load_device("h100"))
