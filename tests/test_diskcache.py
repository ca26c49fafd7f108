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
from cgpredict.prepared import prepare

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
    for r in reports:  # damaged reports: never used, analysed again
        (r / "report.json").write_text('{"__cgp__": "dataclass"}')
    third = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert third.seconds["analysis"] > 0 and _json(third) == _json(first)


def test_stored_dependences_give_the_same_prediction(cache_dir, monkeypatch):
    """The inter-thread dependence found by one run is stored and read back by the next
    (another block shape, so it is analysed again): same report as without any cache."""
    api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert len(list((cache_dir / "entries" / "dependence").iterdir())) == 1
    with prepare(GEMM, _opts()) as prep:
        assert prep.memo.dependences()  # read back, not recomputed
    cached = api.predict(GEMM, "16x16", "h100", SMALL, trace_sizes=TRACE)
    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")
    fresh = api.predict(GEMM, "16x16", "h100", SMALL, trace_sizes=TRACE)
    assert _json(cached) == _json(fresh)


def test_file_digest_is_the_sha256_of_the_content(tmp_path):
    import hashlib

    from cgpredict.diskcache import file_digest

    empty, data = tmp_path / "e", tmp_path / "d"
    empty.write_bytes(b"")
    data.write_bytes(b"cgpredict" * 1000)
    assert file_digest(empty) == f"sha256:{hashlib.sha256(b'').hexdigest()}"
    assert file_digest(data) == f"sha256:{hashlib.sha256(b'cgpredict' * 1000).hexdigest()}"


# --------------------------------------------------------------------------- issue 29


def _planted(entry: Path, name: str, content: bytes) -> None:
    """Replace a file of an entry and make its stamp agree (as an attacker with write access
    to a shared cache would)."""
    from cgpredict.diskcache import file_digest

    (entry / name).write_bytes(content)
    stamp = json.loads((entry / "entry.json").read_text())
    stamp["files"][name] = [len(content), file_digest(entry / name)]
    (entry / "entry.json").write_text(json.dumps(stamp))


def test_reports_are_data_and_a_planted_entry_runs_nothing(cache_dir, tmp_path):
    import pickle

    api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    (report,) = (cache_dir / "entries" / "report").iterdir()
    assert sorted(p.name for p in report.iterdir()) == ["entry.json", "report.json"]
    json.loads((report / "report.json").read_text())  # plain JSON
    marker = tmp_path / "pwned"

    class Boom:
        def __reduce__(self):
            return (Path.touch, (marker,))

    _planted(report, "report.json", pickle.dumps(Boom()))
    stamp = json.loads((report / "entry.json").read_text())
    stamp["files"]["report.pickle"] = stamp["files"].pop("report.json")
    (report / "report.pickle").write_bytes(pickle.dumps(Boom()))
    (report / "entry.json").write_text(json.dumps(stamp))
    again = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert again.seconds["analysis"] > 0 and not marker.exists()


def test_a_planted_report_naming_a_foreign_type_is_refused(cache_dir, tmp_path):
    from cgpredict import datafile

    doc = {"__cgp__": "dataclass", "type": "os:system", "f": {"command": "touch x"}}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(datafile.DataFileError, match="not a cgpredict type"):
        datafile.load(tmp_path, "r")
    api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    (report,) = (cache_dir / "entries" / "report").iterdir()
    _planted(report, "report.json", json.dumps(doc).encode())
    again = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert again.seconds["analysis"] > 0


def test_datafile_round_trip_keeps_types(tmp_path):
    import numpy as np

    from cgpredict import datafile
    from cgpredict.block import Block

    value = {"t": (1, 2.5, float("inf"), None), "b": Block(32, 8), "n": np.float64(0.1),
             "a": np.arange(6, dtype=np.int32).reshape(2, 3), 3: [True, "x"]}
    files = datafile.dump(value, tmp_path, "v")
    assert [p.name for p in files] == ["v.json", "v.npz"]
    back = datafile.load(tmp_path, "v")
    assert back["t"] == (1, 2.5, float("inf"), None) and back["b"] == Block(32, 8)
    assert type(back["n"]) is np.float64 and back[3] == [True, "x"]
    np.testing.assert_array_equal(back["a"], value["a"])


def _entry(c: DiskCache, tmp_path: Path, name: str, nbytes: int, when: float) -> Path:
    import os

    src = tmp_path / f"{name}.bin"
    src.write_bytes(b"x" * nbytes)
    e = c.put("test", entry_key("test", {"n": name}), {"data.bin": src})
    os.utime(e.path, (when, when))
    return e.path


def test_eviction_keeps_the_recently_used_under_the_cap(cache_dir, tmp_path, monkeypatch):
    c = DiskCache()
    old = _entry(c, tmp_path, "old", 4000, 1_000)
    mid = _entry(c, tmp_path, "mid", 4000, 2_000)
    new = _entry(c, tmp_path, "new", 4000, 3_000)
    assert c.get("test", entry_key("test", {"n": "old"})) is not None  # a hit: used just now
    freed = c.evict(limit=9000)
    assert not mid.exists() and old.exists() and new.exists() and freed >= 4000
    monkeypatch.setenv("CGPREDICT_CACHE_MAX_MB", "0")
    c.evict()
    assert not old.exists() and not new.exists()


def test_entries_of_an_older_format_are_removed(cache_dir, tmp_path):
    c = DiskCache()
    e = _entry(c, tmp_path, "e", 10, 5_000)
    stale = cache_dir / "entries" / "report" / ("0" * 64)
    stale.mkdir(parents=True)
    (stale / "report.pickle").write_bytes(b"\x80\x05.")
    (stale / "entry.json").write_text(json.dumps({"format": 2}))
    c.evict()
    assert not stale.exists() and e.exists()


@pytest.mark.parametrize("where", ["file", "readonly"])
def test_an_unusable_cache_location_turns_the_cache_off(tmp_path, monkeypatch, capsys, where):
    import os

    from cgpredict import diskcache

    if where == "file":
        (tmp_path / "f").write_text("x")
        root = tmp_path / "f" / "cache"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes to read-only folders")
        root = tmp_path / "ro"
        root.mkdir(mode=0o500)
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(root))
    monkeypatch.delenv("CGPREDICT_NO_CACHE", raising=False)
    diskcache._usable.cache_clear()
    assert default_cache() is None and default_cache() is None
    err = capsys.readouterr().err
    assert err.count("warning: the cache at") == 1 and err.count("\n") == 1
    rep = api.predict(GEMM, "32x8", "h100", SMALL, trace_sizes=TRACE)
    assert rep.kernels


KEYED = """#include "sub/a.h"
#define CFG "cfg.h"
#include CFG
#include <extra.h>
#ifndef N
#define N 16
#endif
float A[N];
int main(void) {
#pragma cgp kernel k
  for (int i = 0; i < N; i++) A[i] = A[i] * SCALE + OFFSET + EXTRA;
  return 0;
}
"""


def test_the_key_covers_every_file_the_preprocessor_opens(cache_dir, tmp_path, monkeypatch):
    """A header of a header in a sub-folder, ``#include MACRO`` and a header found through
    CPATH: changing any of them changes the trace's key (the compiler lists them)."""
    from cgpredict.prediction import RunOptions
    from cgpredict.prepared import plan_trace

    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (tmp_path / "inc").mkdir()
    (src / "k.c").write_text(KEYED)
    (src / "sub" / "a.h").write_text('#include "b.h"\n')
    (src / "sub" / "b.h").write_text("#define SCALE 2.0f\n")
    (src / "cfg.h").write_text("#define OFFSET 1.0f\n")
    (tmp_path / "inc" / "extra.h").write_text("#define EXTRA 0.0f\n")
    monkeypatch.setenv("CPATH", str(tmp_path / "inc"))
    key = lambda: plan_trace(src / "k.c", RunOptions()).key  # noqa: E731
    keys = [key()]
    assert key() == keys[0]  # the dependency list read back from the cache
    for f, text in [(src / "sub" / "b.h", "#define SCALE 3.0f\n"),
                    (src / "cfg.h", "#define OFFSET 2.0f\n"),
                    (tmp_path / "inc" / "extra.h", "#define EXTRA 1.0f\n")]:
        f.write_text(text)
        keys.append(key())
    assert len(set(keys)) == 4


def test_an_unusable_cache_home_still_leaves_zig_a_cache(tmp_path, monkeypatch):
    from cgpredict.frontend import compiler

    (tmp_path / "f").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "f"))
    monkeypatch.delenv("ZIG_GLOBAL_CACHE_DIR", raising=False)
    compiler._usable_zig_cache()
    assert "cgpredict-zig-" in compiler.os.environ["ZIG_GLOBAL_CACHE_DIR"]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ok"))
    monkeypatch.delenv("ZIG_GLOBAL_CACHE_DIR")
    compiler._usable_zig_cache()
    assert "ZIG_GLOBAL_CACHE_DIR" not in compiler.os.environ


def test_datafile_refuses_a_field_of_another_type(tmp_path):
    from cgpredict import datafile
    from cgpredict.block import Block

    datafile.dump((Block(32, 8),), tmp_path, "b")
    doc = json.loads((tmp_path / "b.json").read_text())
    doc["v"][0]["f"]["x"] = "32"
    (tmp_path / "b.json").write_text(json.dumps(doc))
    with pytest.raises(datafile.DataFileError, match="Block.x holds a str"):
        datafile.load(tmp_path, "b")
