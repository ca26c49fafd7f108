"""Tests of cgpredict.validate: predictions of a corpus compared with measurements in the
format validation/measure.py writes ({"gpu": {"name": ...}, "results": [{"kernel", "config",
"work_sizes", "result": {"total_ms"}}]}).

The corpus is a copy of gemm.c and atax.c with a small '#pragma cgp trace' so the test traces
little; the harness predicts at the measured work sizes (unmeasured kernels at the file's
defaults)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cgpredict.block import Block
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.validate import (
    ValidationError,
    ValidationRow,
    _sizes,
    default_measured,
    device_stem,
    load_measured,
    to_json,
    to_markdown,
    validate,
    write_results,
)

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GEMM_WORK = {"NI": 64, "NJ": 64, "NK": 64}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    for name, trace in (("gemm.c", "NI=32 NJ=32 NK=32"), ("atax.c", "NX=32 NY=32")):
        text = POLYBENCH.joinpath(name).read_text()
        text, n = re.subn(r"#pragma cgp trace .*", f"#pragma cgp trace {trace}", text)
        assert n == 1
        d.joinpath(name).write_text(text)
    return d


def measurement(tmp_path, results, gpu={"name": "Test GPU"}) -> Path:
    p = tmp_path / "measured.json"
    p.write_text(json.dumps({"gpu": gpu, "results": results}))
    return p


GEMM_RESULTS = [
    {"kernel": "gemm", "config": "32x32", "grid_dims": 2, "work_sizes": GEMM_WORK,
     "result": {"total_ms": 0.05}},
    {"kernel": "gemm", "config": "16x16", "grid_dims": 2, "work_sizes": GEMM_WORK,
     "result": {"total_ms": 0.2}},
    {"kernel": "gemm", "config": "32x8", "grid_dims": 2, "work_sizes": GEMM_WORK,
     "error": "launch failed"},
]


@pytest.fixture(scope="module")
def validation(corpus, tmp_path_factory):
    m = measurement(tmp_path_factory.mktemp("meas"), GEMM_RESULTS)
    return validate("tk1", corpus, m), m


def test_rows(validation, corpus):
    v, m = validation
    assert v.device == "tk1" and v.model == "cgpredict" and v.gpu_name == "Test GPU"
    assert v.measured_file == str(m)
    # only the measured configurations, each traced once per work size
    assert [(r.kernel, r.block) for r in v.rows] == [("gemm", "32x32"), ("gemm", "16x16")]
    g32, g16 = v.rows
    for r, meas, block in ((g16, 0.2, Block(16, 16)), (g32, 0.05, Block(32, 32))):
        assert r.work_sizes == GEMM_WORK and r.measured_ms == meas and r.note == ""
        direct = predict_source(corpus / "gemm.c", RunOptions(block=block,
                                                             work_sizes=GEMM_WORK))
        assert r.predicted_ms == pytest.approx(direct.total_ms, rel=1e-9)
        assert r.error_pct == pytest.approx(100 * (r.predicted_ms - meas) / meas)
    assert v.mape == pytest.approx((abs(g16.error_pct) + abs(g32.error_pct)) / 2)


def test_two_sizes_of_one_block_are_two_rows(corpus, tmp_path):
    small = {"NI": 32, "NJ": 32, "NK": 32}
    m = measurement(tmp_path, [
        {"kernel": "gemm", "config": "32x32", "work_sizes": GEMM_WORK,
         "result": {"total_ms": 0.05}},
        {"kernel": "gemm", "config": "32x32", "work_sizes": small,
         "result": {"total_ms": 0.01}}])
    v = validate("tk1", corpus, m)
    assert sorted((r.work_sizes["NI"], r.measured_ms) for r in v.rows) == [(32, 0.01),
                                                                        (64, 0.05)]
    big, little = sorted(v.rows, key=lambda r: -r.work_sizes["NI"])
    assert big.predicted_ms > little.predicted_ms


def test_unknown_kernel_or_size_is_named(corpus, tmp_path):
    m = measurement(tmp_path, [{"kernel": "mvt", "config": "256x1", "work_sizes": {"N": 64},
                                "result": {"total_ms": 1.0}}])
    with pytest.raises(ValidationError, match="measured kernel 'mvt' has no corpus file"):
        validate("tk1", corpus, m)
    m = measurement(tmp_path, [{"kernel": "gemm", "config": "32x32", "work_sizes": {"NZ": 64},
                                "result": {"total_ms": 1.0}}])
    with pytest.raises(ValidationError, match="gemm.c has no size macro NZ"):
        validate("tk1", corpus, m)


def test_fit_recovers_a_known_launch_cost(validation):
    """Measurements made of the predictions plus 10 us per launch (one launch each): fitting
    launch_sync_us alone must find 10 us."""
    import dataclasses

    from cgpredict.devices import load_device
    from cgpredict.fit import leave_one_kernel_out

    v, _ = validation
    rows = tuple(dataclasses.replace(r, measured_ms=r.predicted_ms + 0.010) for r in v.rows)
    fake = dataclasses.replace(v, rows=rows)
    r = leave_one_kernel_out(fake, load_device("tk1"), ["launch_sync_us"])
    assert r.values["launch_sync_us"] == pytest.approx(10.0, rel=0.05)
    assert r.in_sample_mape < 1.0
    assert r.loko_errors_pct == {}  # one kernel: nothing is left to fit without it


def test_fit_separates_a_round_trip_from_the_module_load(validation):
    """Rows of one launch and of 100 launches of the same kernel, measured as their work
    plus 20 us a launch and one 60 us module load: fitting both costs from far-off starting
    values (5 and 5 us) must find 20 and 60 (a one-launch row tells only their sum; the
    100-launch row splits it; the two are searched jointly, fit.LAUNCH_FIELDS)."""
    import dataclasses

    from cgpredict.devices import load_device
    from cgpredict.fit import fit_parameters, row_ms

    v, _ = validation
    start = dataclasses.replace(load_device("tk1"), launch_sync_us=5.0, first_launch_us=5.0)
    truth = dataclasses.replace(start, launch_sync_us=20.0, first_launch_us=60.0)
    rows = []
    for r, n in zip(v.rows, (1, 100)):
        kernels = tuple(
            dataclasses.replace(k, launches=n, launch_profiles=((k.profile, float(n)),))
            for k in r.report.kernels
        )
        row = dataclasses.replace(r, report=dataclasses.replace(r.report, kernels=kernels))
        rows.append(dataclasses.replace(row, measured_ms=row_ms(row, truth)))
    values = fit_parameters(rows, start, ["launch_sync_us", "first_launch_us"])
    assert values["launch_sync_us"] == pytest.approx(20.0, rel=0.02)
    assert values["first_launch_us"] == pytest.approx(60.0, rel=0.02)


def test_fit_keeps_the_device_value_where_the_rows_are_silent(validation, monkeypatch):
    """A field no row depends on (the TK1's L1 serves no global load, so the L1 wavefront
    cost never enters GEMM) keeps the device file's value instead of a range end; an unset
    store cost starts from the L2's."""
    import dataclasses

    from cgpredict import fit
    from cgpredict.devices import load_device

    v, _ = validation
    tk1 = load_device("tk1")
    monkeypatch.setitem(fit.FIT_RANGES, "smem_issue_cycles", (0.25, 8.0))
    values = fit.fit_parameters(v.rows, tk1, ["smem_issue_cycles"])
    assert values["smem_issue_cycles"] == pytest.approx(tk1.smem_issue_cycles)
    unset = dataclasses.replace(tk1, dd_store_cycles=None)
    assert fit._effective(unset, "dd_store_cycles") == tk1.dd_l2_cycles


def test_failed_validation_never_overwrites_tables(validation, tmp_path):
    import dataclasses

    v, _ = validation
    out = tmp_path / "out"
    write_results(v, out)
    before = (out / "tk1-cgpredict.md").read_text()
    broken = dataclasses.replace(
        v, rows=(dataclasses.replace(v.rows[0], predicted_ms=None, note="failed"),))
    with pytest.raises(ValidationError, match="left as they were"):
        write_results(broken, out)
    assert (out / "tk1-cgpredict.md").read_text() == before


def test_markdown_and_files(validation, tmp_path):
    v, m = validation
    md = to_markdown(v)
    assert md.startswith("# Accuracy on Test GPU (cgpredict model, device file `tk1`)")
    assert f"Measurements: `{m}`" in md
    g32 = v.rows[0]
    sizes = _sizes(g32.work_sizes)
    assert (f"| gemm | {sizes} | 32x32 | {g32.predicted_ms:.4g} | 0.05 | "
            f"{g32.error_pct:+.1f} |  |" in md)
    assert f"Mean absolute percentage error: {v.mape:.1f} %" in md
    js, mdfile, *_ = write_results(v, tmp_path / "out")
    assert js.name == "tk1-cgpredict.json" and mdfile.read_text() == md
    d = json.loads(js.read_text())
    assert d["schema_version"] == 1 and d["mape"] == pytest.approx(v.mape)
    assert [r["error_pct"] for r in d["rows"]] == [r.error_pct for r in v.rows]
    assert json.loads(to_json(v)) == d


def test_device_file_path_writes_into_out_dir(validation, tmp_path):
    """`--device /path/x.toml` names the tables after the file and writes them in out_dir."""
    import dataclasses

    v, _ = validation
    assert device_stem("h100") == "h100" and device_stem("/a/b/x.toml") == "x"
    elsewhere = dataclasses.replace(v, device=str(tmp_path / "devs" / "x.toml"))
    js, md, *_ = write_results(elsewhere, tmp_path / "out")
    assert js == tmp_path / "out" / "x-cgpredict.json" and md.parent == tmp_path / "out"


def test_only_and_no_measurements(corpus):
    v = validate("tk1", corpus, None, only=("atax",))
    assert [r.kernel for r in v.rows] == ["atax"]
    assert v.mape is None and v.gpu_name is None and v.measured_file is None
    md = to_markdown(v)
    assert "No measurements given." in md
    assert "Mean absolute percentage error: no measured kernels" in md


def test_load_measured_skips_errors(tmp_path):
    gpu, entries = load_measured(measurement(tmp_path, GEMM_RESULTS))
    assert gpu == "Test GPU"
    assert [(e["kernel"], e["config"]) for e in entries] == [("gemm", "32x32"),
                                                             ("gemm", "16x16")]
    gpu, _ = load_measured(measurement(tmp_path, [], gpu="plain name"))
    assert gpu == "plain name"


@pytest.mark.parametrize("content", [
    "{not json", '{"gpu": {"name": "x"}}', '{"gpu": {"name": "x"}, "results": 3}',
    "", pytest.param("[]"), b"\xff\xfe{}"])
def test_corrupt_measurement(tmp_path, content):
    p = tmp_path / "bad.json"
    p.write_bytes(content) if isinstance(content, bytes) else p.write_text(content)
    with pytest.raises(ValidationError, match="not a measurement file"):
        load_measured(p)
    assert ValidationError.exit_code == 2


def test_entries_without_result_are_skipped(tmp_path):
    gpu, entries = load_measured(measurement(tmp_path, [{}, {"kernel": "gemm", "config": "32x32",
                                                            "error": "no GPU"}]))
    assert entries == []


def test_missing_measurement_file(tmp_path):
    with pytest.raises(ValidationError):
        load_measured(tmp_path / "nope.json")


def test_empty_corpus(tmp_path, corpus):
    with pytest.raises(ValidationError, match="no corpus kernels"):
        validate("tk1", tmp_path)
    with pytest.raises(ValidationError, match=r"--only nothing: no such corpus file in .* "
                                              r"\(known: atax gemm\)"):
        validate("tk1", corpus, only=("nothing",))


def test_failed_prediction_is_a_row(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    d.joinpath("broken.c").write_text("int main(void) {\n#pragma cgp kernel k\n"
                                      "  for (int i = 0; i < 4; i++) x = 1;\n  return 0;\n}\n")
    v = validate("tk1", d)
    (r,) = v.rows
    assert r.predicted_ms is None and r.note.startswith("prediction failed: ")
    assert v.mape is None


def test_error_pct():
    r = ValidationRow("k", "32x32", {}, 1.5, 1.0, 0.1)
    assert r.error_pct == pytest.approx(50.0)
    assert ValidationRow("k", "32x32", {}, 0.5, 1.0, 0.1).error_pct == pytest.approx(-50.0)
    assert ValidationRow("k", "32x32", {}, None, 1.0, 0.1).error_pct is None
    assert ValidationRow("k", "32x32", {}, 1.0, 0.0, 0.1).error_pct is None


def test_default_measured_finds_the_gpu_named_file(tmp_path):
    folder = tmp_path / "validation" / "measured"
    assert default_measured("h100", tmp_path) is None  # no folder yet
    folder.mkdir(parents=True)
    (folder / "nvidia-h100-80gb-hbm3.json").write_text("{}")
    (folder / "nvidia-jetson-xavier-nx.json").write_text("{}")
    assert default_measured("h100", tmp_path).name == "nvidia-h100-80gb-hbm3.json"
    assert default_measured("jetson_xavier_nx", tmp_path).name == "nvidia-jetson-xavier-nx.json"
    assert default_measured("tk1", tmp_path) is None
    assert default_measured("h10", tmp_path) is None  # whole words only
    (folder / "h100.json").write_text("{}")  # an exact name wins
    assert default_measured("h100", tmp_path).name == "h100.json"
    (folder / "h100.json").unlink()
    (folder / "nvidia-h100-pcie.json").write_text("{}")
    with pytest.raises(ValidationError, match="several measurement files"):
        default_measured("h100", tmp_path)


def _entry(**over):
    e = {"kernel": "gemm", "config": "32x32", "work_sizes": {"NI": 64},
         "result": {"total_ms": 0.05}}
    e.update(over)
    return e


@pytest.mark.parametrize("entry, message", [
    (_entry(config="banana"), r"results\[1\]\.config: bad block shape 'banana'"),
    (_entry(config=None), r"results\[1\]\.config: bad block shape None"),
    (_entry(work_sizes={"NI": "big"}), r"results\[1\]\.work_sizes\.NI: want a positive integer"),
    (_entry(work_sizes={"NI": -64}), r"work_sizes\.NI: want a positive integer, got -64"),
    (_entry(work_sizes=[64]), r"results\[1\]\.work_sizes: want a table"),
    (_entry(result={"total_ms": "fast"}), r"results\[1\]\.result\.total_ms: want a positive"),
    (_entry(result={"total_ms": -0.5}), r"total_ms: want a positive number, got -0.5"),
    (_entry(result={"total_ms": float("nan")}), r"total_ms: want a positive number"),
    (_entry(result=5), r"results\[1\]\.result: want a table, got 5"),
    (_entry(kernel=3), r"results\[1\]\.kernel: want a kernel name"),
    ("text", r"results\[1\]: not a table"),
])
def test_bad_measured_entry_names_it(tmp_path, entry, message):
    p = measurement(tmp_path, [_entry(), entry])
    with pytest.raises(ValidationError, match=message) as exc:
        load_measured(p)
    assert str(exc.value).startswith(str(p)) and "\n" not in str(exc.value)


def test_failed_row_note_is_one_line_and_binary_source_fails_its_row(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    d.joinpath("syntax.c").write_text("int main(void) {\n  int x = ;\n  int y = ;\n"
                                      "  return 0;\n}\n")
    d.joinpath("binary.c").write_bytes(bytes(range(256)) * 8)
    v = validate("tk1", d)
    notes = {r.kernel: r.note for r in v.rows}
    assert notes["binary"] == f"prediction failed: {d / 'binary.c'}: not a UTF-8 text file"
    assert notes["syntax"].startswith("prediction failed: ") and "\n" not in notes["syntax"]
    table = [ln for ln in to_markdown(v).splitlines() if ln.startswith("| syntax")]
    assert len(table) == 1 and table[0].count("|") == 8


def test_sizes_cell():
    assert _sizes({}) == "default"
    assert _sizes({"NI": 1024, "NJ": 1024}) == "NI=NJ=1024"
    assert _sizes({"NX": 2048, "NY": 2048, "TMAX": 100}) == "NX=2048 NY=2048 TMAX=100"


def test_measure_py_files_are_event_timed(tmp_path):
    """validation/measure.py brackets each launch with cudaEvents: its files' entries are
    compared with the work of each launch plus the GPU's start of it, not a host timer."""
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"gpu": {"name": "g"}, "results": GEMM_RESULTS,
                             "timing": "cudaEvent pair around each launch; warm-up first"}))
    assert {e["timer"] for e in load_measured(p)[1]} == {"events"}
    own = dict(GEMM_RESULTS[0], timer="host")
    p.write_text(json.dumps({"gpu": {"name": "g"}, "results": [own],
                             "timing": "cudaEvent pair around each launch"}))
    assert load_measured(p)[1][0]["timer"] == "host"
    assert {e["timer"] for e in load_measured(measurement(tmp_path, GEMM_RESULTS))[1]} == {"host"}


def test_reset_of_an_entry_is_checked(tmp_path):
    """A measured entry may say how its repetition's re-upload ends (validation/port_resets.py);
    anything else is the file's error."""
    ok = dict(GEMM_RESULTS[0], reset="upload", reset_bytes=4096)
    assert load_measured(measurement(tmp_path, [ok]))[1][0]["reset"] == "upload"
    bad = dict(GEMM_RESULTS[0], reset="copy")
    with pytest.raises(ValidationError, match=r"\.reset: want one of upload, memset, none"):
        load_measured(measurement(tmp_path, [bad]))
    bad = dict(GEMM_RESULTS[0], reset="upload", reset_bytes=0)
    with pytest.raises(ValidationError, match=r"\.reset_bytes: want a positive byte count"):
        load_measured(measurement(tmp_path, [bad]))
    ok = dict(GEMM_RESULTS[0], reset="memset", memset_bytes=1 << 26)
    assert load_measured(measurement(tmp_path, [ok]))[1][0]["memset_bytes"] == 1 << 26
    for nbytes in (0, -4, True, "64 MB", 1.5):
        bad = dict(GEMM_RESULTS[0], reset="memset", memset_bytes=nbytes)
        with pytest.raises(ValidationError, match=r"\.memset_bytes: want a positive byte count"):
            load_measured(measurement(tmp_path, [bad]))
    ok = dict(GEMM_RESULTS[0], reset="memset", upload_bytes=3 << 26)  # eq. (E6)
    assert load_measured(measurement(tmp_path, [ok]))[1][0]["upload_bytes"] == 3 << 26
    for nbytes in (0, True, "192 MiB"):
        bad = dict(GEMM_RESULTS[0], reset="memset", upload_bytes=nbytes)
        with pytest.raises(ValidationError, match=r"\.upload_bytes: want a positive byte count"):
            load_measured(measurement(tmp_path, [bad]))


def test_tile_copy_of_an_entry_is_checked(tmp_path):
    """A measured entry says how its kernel copies its pragma tiles ("copy": the staging loop
    of the corpus ports or the textbook thread copy); anything else is the file's error."""
    ok = dict(GEMM_RESULTS[0], copy="thread")
    assert load_measured(measurement(tmp_path, [ok]))[1][0]["copy"] == "thread"
    bad = dict(GEMM_RESULTS[0], copy="unrolled")
    with pytest.raises(ValidationError, match=r"\.copy: want one of loop, thread, got 'unrolled'"):
        load_measured(measurement(tmp_path, [bad]))


def test_registers_of_an_entry_set_the_occupancy(corpus, tmp_path):
    """An entry may carry the registers a thread of its measured binary uses
    (validation/port_registers.py: ptxas -v); the row is predicted with that count, as
    ``--registers`` would: 40 a thread leave one 1024-thread block an H100 SM (65536
    registers), where the default 32 leave two."""
    entry = dict(GEMM_RESULTS[0], registers=40)
    v = validate("h100", corpus, measurement(tmp_path, [entry]))
    (row,) = v.rows
    block = Block(32, 32)
    direct = predict_source(corpus / "gemm.c", RunOptions(
        device="h100", block=block, work_sizes=GEMM_WORK, registers_per_thread=40))
    assert row.predicted_ms == pytest.approx(direct.total_ms, rel=1e-9)
    assert row.report.kernels[0].occupancy_limit == "registers"
    default = validate("h100", corpus, measurement(tmp_path, [GEMM_RESULTS[0]])).rows[0]
    assert default.report.kernels[0].occupancy_limit != "registers"
    bad = dict(GEMM_RESULTS[0], registers=0)
    with pytest.raises(ValidationError, match=r"\.registers: want a positive register count"):
        load_measured(measurement(tmp_path, [bad]))
    # --registers estimated: the entry's count is set aside, the C's estimate (eq. (RG1))
    # leaves GEMM's two blocks
    (est,) = validate("h100", corpus, measurement(tmp_path, [entry]),
                      measured_registers=False).rows
    k = est.report.kernels[0]
    assert k.registers_from == "estimated" and k.occupancy_limit != "registers"
    assert row.report.kernels[0].registers_from == "given"


