"""Device files: every bundled one loads; the loader rejects bad files with a one-line error."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cgpredict import devices
from cgpredict.devices import DeviceError, GPUDevice, list_devices, load_device

BUNDLED = devices.bundled_dir()
TK1_TEXT = (BUNDLED / "tk1.toml").read_text()


def _variant(tmp_path: Path, old: str, new: str, name: str = "variant") -> Path:
    assert old in TK1_TEXT, old
    path = tmp_path / f"{name}.toml"
    path.write_text(TK1_TEXT.replace(old, new, 1))
    return path


@pytest.mark.parametrize("name", sorted(p.stem for p in BUNDLED.glob("*.toml")))
def test_every_bundled_file_loads(name: str) -> None:
    d = load_device(name)
    assert isinstance(d, GPUDevice)
    assert d.name == name
    assert d.provenance is not None and d.provenance.source
    assert d.l2_sets * d.l2_line_bytes * d.l2_ways == d.l2_bytes
    assert d.threads_per_sm == d.max_warps_per_sm * d.warp_size


def test_required_bundled_devices_present() -> None:
    names = list_devices()
    for required in ("tk1", "gtx980", "h100"):
        assert required in names
    assert "jetson_xavier_nx" in names or "jetson_orin_nano" in names


def test_tk1_matches_spec_table() -> None:
    d = load_device("tk1")
    assert (d.sm_count, d.clock_mhz, d.freq_hz) == (1, 852.0, 852e6)
    assert (d.max_threads_per_sm, d.max_warps_per_sm, d.max_blocks_per_sm) == (2048, 64, 16)
    assert d.max_threads_per_block == 1024 and d.registers_per_sm == 65536
    assert (d.l2_bytes, d.l2_line_bytes, d.l2_ways, d.l2_sets) == (131072, 64, 16, 128)
    assert (d.l2_latency_cycles, d.dram_latency_cycles, d.shared_latency_cycles) == (164, 332, 67)
    assert (d.dd_l2_cycles, d.dd_dram_cycles) == (2, 10)
    assert d.inst_cycles_per_warp_inst == 0.5 and d.smem_load_cycles == 506
    assert d.dram_bandwidth_gbps == 17.0 and d.l1_line_bytes == 128
    assert (d.smem_banks, d.smem_bank_bytes) == (32, 8)
    assert d.l1_caches_global_loads is False
    assert "ASSUMPTION" in d.provenance.note("l2_ways")


def test_h100_calibrated_fields_name_their_measurements() -> None:
    d = load_device("h100")
    assert (d.sm_count, d.l2_bytes, d.l2_line_bytes, d.l2_sector_bytes) == (
        132,
        50 * 2**20,
        128,
        32,
    )
    # calibrated from the shared micro-benchmarks (validation/measured/raw/h100-ubench.jsonl)
    assert d.dram_bandwidth_gbps == 3097.0 and d.l2_latency_cycles == 369.2
    for key in ("l1_latency_cycles", "l2_latency_cycles", "dram_bandwidth_gbps"):
        assert "h100-ubench.jsonl" in d.provenance.note(key)
    assert d.provenance.note("dd_store_cycles").startswith("fitted")
    for key in ("launch_sync_us", "first_launch_us"):  # two timers of the same kernels
        assert d.provenance.note(key).startswith("measured")
        assert "launch_costs.py" in d.provenance.note(key)
    assert d.provenance.note("launch_gap_us").startswith("measured")  # 2026-11-27 ubench
    # derived from working ports, its measured floor (empty blocks) named beside it
    assert d.provenance.note("block_dispatch_cycles").startswith("derived, with a measured floor")
    assert "block_rate.json" in d.provenance.note("block_dispatch_cycles")
    assert "to be calibrated" in d.provenance.note("shared_latency_cycles")


def test_gtx980_energy_table() -> None:
    e = load_device("gtx980").energy
    assert e is not None and e.dram_transaction_nj == 62.9 and e.smem_transaction_nj == 4.6


def test_load_by_path(tmp_path: Path) -> None:
    path = _variant(tmp_path, "sm_count = 1", "sm_count = 2", name="two")
    d = load_device(str(path))
    assert d.name == "two" and d.sm_count == 2


def _assert_error(path: Path, key: str) -> str:
    with pytest.raises(DeviceError) as info:
        load_device(str(path))
    msg = str(info.value)
    assert "\n" not in msg
    assert str(path) in msg
    assert key in msg
    return msg


def test_unknown_key(tmp_path: Path) -> None:
    path = _variant(tmp_path, "sm_count = 1", "sm_count = 1\nsm_cuont = 3")
    _assert_error(path, "sm_cuont")


def test_key_in_wrong_table_is_unknown_with_hint(tmp_path: Path) -> None:
    path = _variant(tmp_path, "sm_count = 1", "sm_count = 1\nl2_bytes = 1024")
    msg = _assert_error(path, "l2_bytes")
    assert "[memory]" in msg


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = _variant(tmp_path, "schema_version = 1", "schema_version = 1\nfoo = 2")
    _assert_error(path, "foo")


def test_missing_key(tmp_path: Path) -> None:
    path = _variant(tmp_path, "l2_ways = 16", "")
    msg = _assert_error(path, "l2_ways")
    assert "missing" in msg


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("sm_count = 1", 'sm_count = "one"', "sm_count"),
        ("sm_count = 1", "sm_count = 1.5", "sm_count"),
        ("sm_count = 1", "sm_count = true", "sm_count"),
        ("l1_caches_global_loads = false", "l1_caches_global_loads = 0", "l1_caches_global_loads"),
        ("clock_mhz = 852.0", 'clock_mhz = "852"', "clock_mhz"),
    ],
)
def test_wrong_type(tmp_path: Path, old: str, new: str, key: str) -> None:
    _assert_error(_variant(tmp_path, old, new), key)


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("dram_latency_cycles = 332.0", "dram_latency_cycles = -332.0", "dram_latency_cycles"),
        ("sm_count = 1", "sm_count = 0", "sm_count"),
        ("l2_bytes = 131072", "l2_bytes = -1", "l2_bytes"),
        ("clock_mhz = 852.0", "clock_mhz = 0.0", "clock_mhz"),
    ],
)
def test_non_positive_value(tmp_path: Path, old: str, new: str, key: str) -> None:
    _assert_error(_variant(tmp_path, old, new), key)


def test_wrong_schema_version(tmp_path: Path) -> None:
    _assert_error(_variant(tmp_path, "schema_version = 1", "schema_version = 2"), "schema_version")


def test_inconsistent_fields(tmp_path: Path) -> None:
    _assert_error(
        _variant(tmp_path, "max_warps_per_sm = 64", "max_warps_per_sm = 48"), "max_warps_per_sm"
    )


def test_bad_provenance_note_key(tmp_path: Path) -> None:
    path = _variant(tmp_path, "[provenance.notes]", '[provenance.notes]\nl2_wayz = "x"')
    _assert_error(path, "l2_wayz")


def test_invalid_toml(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("schema_version = \n")
    with pytest.raises(DeviceError, match="broken.toml"):
        load_device(str(path))


def test_unknown_name() -> None:
    with pytest.raises(DeviceError, match="no_such_gpu"):
        load_device("no_such_gpu")


def test_env_path_override_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "tk1.toml").write_text(TK1_TEXT.replace("clock_mhz = 852.0", "clock_mhz = 900.0"))
    (second / "tk1.toml").write_text(TK1_TEXT.replace("clock_mhz = 852.0", "clock_mhz = 950.0"))
    (second / "mygpu.toml").write_text(TK1_TEXT)
    monkeypatch.setenv("CGPREDICT_DEVICE_PATH", f"{first}{__import__('os').pathsep}{second}")
    assert load_device("tk1").clock_mhz == 900.0
    assert load_device("mygpu").clock_mhz == 852.0
    names = list_devices()
    assert "mygpu" in names and "h100" in names and names == tuple(sorted(names))
    monkeypatch.delenv("CGPREDICT_DEVICE_PATH")
    assert load_device("tk1").clock_mhz == 852.0
    assert "mygpu" not in list_devices()


def test_list_devices_comes_from_data_folder() -> None:
    assert list_devices() == tuple(sorted(p.stem for p in BUNDLED.glob("*.toml")))


def test_schema_doc_covers_every_key() -> None:
    doc = (BUNDLED / "SCHEMA.md").read_text()
    keys = {k for table in devices.FIELD_SCHEMA.values() for k in table}
    missing = sorted(k for k in keys if not re.search(rf"`{k}`|\[provenance\.{k}\]", doc))
    assert missing == []


def test_schema_matches_dataclass() -> None:
    field_names = {f.name for f in dataclasses.fields(GPUDevice)}
    sectioned = {k for t in ("sm", "memory", "timing") for k in devices.FIELD_SCHEMA[t]}
    extra = {"name", "source_path", "description", "energy", "pipes", "provenance"}
    assert field_names == (sectioned - set(devices._LEGACY_KEYS)) | extra


@pytest.mark.parametrize(
    ("old", "new", "key", "why"),
    [
        ("sm_count = 1", "sm_count = 9223372036854775807", "[sm] sm_count", "implausibly large"),
        ("l2_bytes = 131072", "l2_bytes = 18446744073709551615", "l2_bytes", "implausibly large"),
        ("clock_mhz = 852.0", "clock_mhz = 1e300", "clock_mhz", "implausibly large"),
        ("l2_line_bytes = 64", "l2_line_bytes = 48", "[memory] l2_line_bytes", "power of two"),
        ("l2_sector_bytes = 64", "l2_sector_bytes = 24", "l2_sector_bytes", "power of two"),
        ("l1_line_bytes = 128", "l1_line_bytes = 96", "l1_line_bytes", "power of two"),
        (
            "shared_mem_per_sm_bytes = 49152",
            "shared_mem_per_sm_bytes = 49152\nshared_mem_reserved_per_block_bytes = 999999",
            "[sm] shared_mem_reserved_per_block_bytes",
            "exceeds shared_mem_per_sm_bytes",
        ),
        (
            "register_alloc_unit = 256",
            "register_alloc_unit = 1000000",
            "register_alloc_unit",
            "exceeds registers_per_sm",
        ),
    ],
)
def test_absurd_or_inconsistent_values(
    tmp_path: Path, old: str, new: str, key: str, why: str
) -> None:
    assert why in _assert_error(_variant(tmp_path, old, new), key)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "binary.toml"
    path.write_bytes(b"schema_version = 1\n\xff\xfe\x93 = 2\n")
    with pytest.raises(DeviceError, match=r"binary.toml: not valid TOML \(not UTF-8\)"):
        load_device(str(path))


def test_schema_doc_puts_l1_ways_in_memory() -> None:
    doc = (BUNDLED / "SCHEMA.md").read_text()
    memory = doc.split("## [memory]")[1].split("## ")[0]
    assert "`l1_ways`" in memory and "l1_ways" in devices.FIELD_SCHEMA["memory"]


def test_loop_launch_range_must_hold_the_period(tmp_path: Path) -> None:
    """eq. (E4s): loop_launch_lo_us <= loop_launch_us <= loop_launch_hi_us, all three given;
    a bound without the period, or a period outside the bounds, is a one-line error."""
    ok = _variant(tmp_path, "[timing]", "[timing]\nloop_launch_us = 4.7\n"
                  "loop_launch_lo_us = 4.3\nloop_launch_hi_us = 6.2", name="ok")
    d = load_device(str(ok))
    assert (d.loop_launch_lo_us, d.loop_launch_us, d.loop_launch_hi_us) == (4.3, 4.7, 6.2)
    outside = _variant(tmp_path, "[timing]", "[timing]\nloop_launch_us = 7.0\n"
                       "loop_launch_lo_us = 4.3\nloop_launch_hi_us = 6.2", name="outside")
    _assert_error(outside, "loop_launch_lo_us")
    alone = _variant(tmp_path, "[timing]", "[timing]\nloop_launch_hi_us = 6.2", name="alone")
    _assert_error(alone, "loop_launch_lo_us")
