"""The on-disk trace cache (diskcache.py, trace_store.py): where it lives, that a cached run
predicts exactly what a fresh trace predicts, that corrupt or other-version entries are
rebuilt and never used, concurrent writers, and ``cgpredict cache info|clear``."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from cgpredict import api
from cgpredict.cli import main
from cgpredict.diskcache import DiskCache, cache_root, default_cache, entry_key
from cgpredict.pipeline import prepare

GEMM = Path(__file__).resolve().parents[1] / "polybench_c" / "gemm.c"
SMALL = {"NI": 64, "NJ": 64, "NK": 64}
TRACE = {"NI": 32, "NJ": 32, "NK": 32}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh, empty cache for one test."""
    d = tmp_path / "cache"
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(d))
    monkeypatch.delenv("CGPREDICT_NO_CACHE", raising=False)
    return d


def _opts(**kw):
    return api.options("32x8", "h100", SMALL, trace_sizes=TRACE, **kw)


def _json(rep) -> dict:
    d = json.loads(rep.to_json())
    d.pop("seconds")
    return d


def test_location_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(tmp_path / "a"))
    assert cache_root() == tmp_path / "a"
    monkeypatch.delenv("CGPREDICT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "cgpredict"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "cgpredict"
    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")
    assert default_cache() is None


def test_put_get_and_key(cache_dir, tmp_path):
    c = DiskCache()
    src = tmp_path / "x.bin"
    src.write_bytes(b"abc" * 1000)
    key = entry_key("test", {"a": 1})
    assert key != entry_key("test", {"a": 2}) and len(key) == 64
    assert c.get("test", key) is None
    e = c.put("test", key, {"x.bin": src}, {"note": "hi"})
    assert src.exists()  # linked in: the caller's file stays
    got = c.get("test", key)
    assert got is not None and got.meta == {"note": "hi"}
    assert got.file("x.bin").read_bytes() == b"abc" * 1000 and got.path == e.path
    assert e.path.parent.parent == cache_dir / "entries"


@pytest.mark.parametrize("damage", ["flip", "truncate", "version", "stamp"])
def test_bad_entry_is_removed_not_used(cache_dir, tmp_path, damage):
    c = DiskCache()
    src = tmp_path / "x.bin"
    src.write_bytes(bytes(range(256)) * 64)
    key = entry_key("test", {"k": damage})
    e = c.put("test", key, {"x.bin": src})
    f, stamp = e.file("x.bin"), e.path / "entry.json"
    if damage == "flip":
        data = bytearray(f.read_bytes())
        data[100] ^= 0xFF
        f.write_bytes(bytes(data))
    elif damage == "truncate":
        f.write_bytes(f.read_bytes()[:-1])
    elif damage == "version":  # an entry written by another cgpredict
        meta = json.loads(stamp.read_text())
        meta["tool"] = "0.0.1+othertool"
        stamp.write_text(json.dumps(meta))
    else:
        stamp.write_text("{not json")
    assert c.get("test", key) is None
    assert not e.path.exists()


def test_cached_prediction_equals_fresh_and_corrupt_trace_is_rebuilt(cache_dir):
    with prepare(GEMM, _opts()) as p1:
        assert not p1.cached
        fresh = _json(p1.analyze(_opts()))
    with prepare(GEMM, _opts()) as p2:
        assert p2.cached
        assert _json(p2.analyze(_opts())) == fresh
    # another device, block and work size: the same trace (the key has no such parts)
    other = api.options("16x16", "tk1", {"NI": 128, "NJ": 128, "NK": 128}, trace_sizes=TRACE)
    with prepare(GEMM, other) as p3:
        assert p3.cached
    entries = list((cache_dir / "entries" / "prepared").iterdir())
    assert len(entries) == 1
    trace = entries[0] / "trace.cgptrace"
    data = bytearray(trace.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one event
    trace.write_bytes(bytes(data))
    with prepare(GEMM, _opts()) as p4:
        assert not p4.cached  # traced again, the damaged entry never read
        assert _json(p4.analyze(_opts())) == fresh
    with prepare(GEMM, _opts()) as p5:
        assert p5.cached


def test_no_cache_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")
    with prepare(GEMM, _opts()) as p:
        assert not p.cached
    assert not (cache_dir / "entries").exists()


def test_cli_no_cache_flag(cache_dir):
    args = ["run", str(GEMM), "--json", "--no-cache", *_size_args()]
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    assert not (cache_dir / "entries" / "prepared").exists()


def _size_args() -> list[str]:
    out = []
    for n, v in SMALL.items():
        out += ["-D", f"{n}={v}"]
    for n, v in TRACE.items():
        out += ["--trace-size", f"{n}={v}"]
    return out


def test_concurrent_writers_leave_one_valid_entry(cache_dir, tmp_path):
    c = DiskCache()
    key = entry_key("test", {"race": True})
    errors = []

    def write(i: int) -> None:
        src = tmp_path / f"w{i}.bin"
        src.write_bytes(b"same content" * 100)
        try:
            c.put("test", key, {"x.bin": src})
        except Exception as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    e = c.get("test", key)
    assert e is not None and e.file("x.bin").read_bytes() == b"same content" * 100
    assert list((cache_dir / "tmp").iterdir()) == []  # no staging left behind


def test_cache_info_and_clear_commands(cache_dir):
    r = CliRunner().invoke(main, ["run", str(GEMM), *_size_args()], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    info = CliRunner().invoke(main, ["cache", "info"], catch_exceptions=False)
    assert info.exit_code == 0
    assert f"location: {cache_dir}" in info.stdout
    assert "prepared: 1" in info.stdout
    size = int(info.stdout.split("size: ")[1].split()[0])
    on_disk = sum(p.stat().st_size for p in (cache_dir / "entries").rglob("*") if p.is_file())
    assert size == on_disk > 0
    cleared = CliRunner().invoke(main, ["cache", "clear"], catch_exceptions=False)
    assert cleared.exit_code == 0 and f"{on_disk} bytes freed" in cleared.stdout
    after = CliRunner().invoke(main, ["cache", "info"], catch_exceptions=False)
    assert "entries: 0 (none)" in after.stdout


def test_same_question_twice_reads_the_report_back(cache_dir):
    first = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    again = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert _json(again) == _json(first)
    assert first.seconds["analysis"] > 0 and again.seconds["analysis"] == 0.0
    other = api.predict(GEMM, "32x8", "tk1", SMALL, trace_sizes=TRACE)  # another device
    assert other.seconds["analysis"] > 0 and other.device != first.device
    reports = list((cache_dir / "entries" / "report").iterdir())
    assert len(reports) == 2
    for r in reports:  # damaged reports: never unpickled, analysed again
        (r / "report.pickle").write_bytes(b"\x80\x05garbage")
    third = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert third.seconds["analysis"] > 0 and _json(third) == _json(first)


def test_stored_dependences_give_the_same_prediction(cache_dir, monkeypatch):
    """The inter-thread dependence found by one run is stored and read back by the next
    (another block shape, so it is analysed again): same report as without any cache."""
    api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert len(list((cache_dir / "entries" / "dependence").iterdir())) == 1
    with prepare(GEMM, _opts()) as prep:
        assert any(k[0] == "dependence" for k in prep.warps)  # read back, not recomputed
    cached = api.predict(GEMM, "16x16", "h100", SMALL, trace_sizes=TRACE)
    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")
    fresh = api.predict(GEMM, "16x16", "h100", SMALL, trace_sizes=TRACE)
    assert _json(cached) == _json(fresh)


def test_file_digest_is_the_crc32_of_the_content(tmp_path):
    import zlib

    from cgpredict.diskcache import file_digest

    empty, data = tmp_path / "e", tmp_path / "d"
    empty.write_bytes(b"")
    data.write_bytes(b"cgpredict" * 1000)
    assert file_digest(empty) == "crc32:00000000"
    assert file_digest(data) == f"crc32:{zlib.crc32(b'cgpredict' * 1000):08x}"
