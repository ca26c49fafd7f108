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


def _measure_module():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "validation" / "measure.py"
    spec = importlib.util.spec_from_file_location("measure", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_measure_asks_ncu_for_what_explain_reads():
    m = _measure_module()
    assert set(m.NCU_METRICS) == set(ctr.METRICS) | {ctr.GPU_METRIC}


def test_measure_profiles_one_run_after_the_warm_up(tmp_path):
    """A stand-in ncu (a script that records its arguments and copies the format fixture to
    --log-file) checks the command measure.py builds and the launch bookkeeping."""
    import json
    import sys

    fake = tmp_path / "ncu"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, shutil, sys\n"
        "a = sys.argv[1:]\n"
        f"shutil.copy({str(FIXTURE)!r}, a[a.index('--log-file') + 1])\n"
        f"open({str(tmp_path / 'args.json')!r}, 'w').write(json.dumps(a))\n"
    )
    fake.chmod(0o755)
    m = _measure_module()
    result = {"launches": [{"name": "k1", "count": 300, "timed": 12},
                           {"name": "k2", "count": 300, "timed": 12}]}
    out = tmp_path / "ncu-out" / "fdtd2d-32x8.csv"
    c = m.profile_counters(str(fake), tmp_path / "port", ["--block", "32x8", "--sample", "12"],
                           result, out, max_launches=10, timeout=60)
    assert c["launches_per_run"] == 600 and c["launches_profiled"] == 10
    args = json.loads((tmp_path / "args.json").read_text())
    assert args[args.index("--launch-skip") + 1] == "24"  # the warm-up run's launches
    assert args[args.index("--launch-count") + 1] == "10"
    assert args[-2:] == ["--reps", "1"] and "--sample" in args
    assert ctr.read_counters(out).gpu == "NVIDIA H100 80GB HBM3"
