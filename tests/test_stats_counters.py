"""Nsight Compute CSV reader of cgpredict.stats, on a FORMAT FIXTURE (tests/data/README.md):
the layout ncu writes, with invented values -- not a measurement."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.stats import counters as ctr

FIXTURE = Path(__file__).resolve().parent / "data" / "ncu_raw_format_fixture.csv"


def test_raw_page_reader():
    cf = ctr.read_counters(FIXTURE)
    assert cf.gpu == "NVIDIA H100 80GB HBM3"
    assert len(cf.launches) == 6
    first = cf.launches[0]
    assert first.kernel == "gemm_kernel"
    assert (first.block, first.grid) == ((32, 8, 1), (32, 128, 1))
    assert first.metrics["dram__bytes_read.sum"] == pytest.approx(10e6)  # Mbyte -> bytes
    assert first.metrics["dram__bytes_write.sum"] == 4e6  # thousands separators
    assert first.metrics["gpu__time_duration.sum"] == 1e6  # ns


def test_details_layout(tmp_path):
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
            '"Metric Value"\n')
    pre = '"0","1","app","h","void k(float *)","1","7","(256, 1, 1)","(4, 1, 1)","0","9.0","Raw",'
    f = tmp_path / "details.csv"
    f.write_text(head + pre + '"device__attribute_display_name","","NVIDIA H100 PCIe"\n'
                 + pre + '"lts__t_sector_hit_rate.pct","%","75"\n'
                 + pre + '"dram__bytes_read.sum","Kbyte","2"\n')
    cf = ctr.read_counters(f)
    (ln,) = cf.launches
    assert (ln.kernel, ln.gpu, ln.block) == ("k", "NVIDIA H100 PCIe", (256, 1, 1))
    assert ln.metrics == {"lts__t_sector_hit_rate.pct": 75.0, "dram__bytes_read.sum": 2000.0}


def test_totals_hand_computed():
    cf = ctr.read_counters(FIXTURE)
    t = ctr.totals(list(cf.launches[:2]), scale=3.0)
    assert t["dram_bytes"] == pytest.approx(3 * (10e6 + 4e6 + 11e6 + 4e6))
    assert t["l2_sectors"] == pytest.approx(3 * 100e6)
    # equal L2 sectors: the hit rate is the plain mean of 90% and 88%
    assert t["l2_hit_rate"] == pytest.approx(0.89)
    assert t["achieved_occupancy"] == pytest.approx(0.85)  # equal durations


@pytest.mark.parametrize(
    "gpu, device, ok",
    [
        ("NVIDIA H100 80GB HBM3", "h100", True),
        ("NVIDIA H100 PCIe", "h100", True),
        ("NVIDIA A100-SXM4-80GB", "h100", False),
        ("NVIDIA H200", "h100", False),
        ("GK20A", "tk1", True),
        ("NVIDIA GeForce GTX 980", "tk1", False),
    ],
)
def test_gpu_matching(gpu, device, ok):
    from cgpredict.devices import load_device

    d = load_device(device)
    assert ctr.gpu_matches(gpu, device, d.provenance.gpu_name) is ok


def test_counters_from_another_gpu_refused(tmp_path):
    f = tmp_path / "a100.csv"
    f.write_text(FIXTURE.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"))
    cf = ctr.read_counters(f)
    with pytest.raises(ctr.CounterError, match="counters from NVIDIA A100-SXM4-80GB, but the "
                       "device is h100 \\(NVIDIA H100 SXM5"):
        ctr.check_gpu(cf, "h100", "NVIDIA H100 SXM5 80GB (GH100)")


@pytest.mark.parametrize(
    "text, what",
    [
        ("hello\n", "not an ncu CSV export"),
        ('"ID","Process ID"\n"0","1"\n', "without a 'Kernel Name' column"),
        ('"ID","Kernel Name","Block Size"\n"0","k","(1, 1, 1)"\n', "names no GPU"),
    ],
)
def test_bad_counter_files(tmp_path, text, what):
    f = tmp_path / "c.csv"
    f.write_text(text)
    with pytest.raises(ctr.CounterError, match=what):
        ctr.read_counters(f)


def test_short_names():
    assert ctr.short_name("void gemm_kernel(float, float *)") == "gemm_kernel"
    assert ctr.short_name("void ns::k<256, 1>(int)") == "k"
    assert ctr.short_name("plain") == "plain"
