"""A content-addressed on-disk cache of what only the source decides (issue #15).

Tracing a file (compile, instrument, link, run, and the count-only probe runs that fit the
trip counts to the work size) takes most of a cold ``cgpredict run``; the same source, flags,
sizes and tool give the same trace, so it is kept here and reused by ``run``, ``advise``,
``sweep`` and the rest. Not to be confused with ``memory/lru.py``, the L2 cache *analyzer*.

Layout: ``ROOT/entries/KIND/KEY/`` holds the entry's files and ``entry.json`` (the format
stamp, the tool fingerprint, the key, the size and SHA-256 (``file_digest``) of every file,
and free metadata);
``ROOT/tmp/`` holds entries being written. An entry is built in ``tmp`` and renamed into
place in one step, so a concurrent reader sees a whole entry or none, and two writers of the
same key leave one of theirs. An entry whose stamp, fingerprint, key or file hashes do not
match is removed and rebuilt, never used. Entries hold data only (traces, JSON, NPZ read
with ``allow_pickle=False``): nothing in the cache is ever unpickled or run.

ROOT is ``$CGPREDICT_CACHE_DIR``, else ``$XDG_CACHE_HOME/cgpredict``, else
``~/.cache/cgpredict``; ``CGPREDICT_NO_CACHE=1`` turns the cache off, and so does a ROOT that
cannot be used (read-only, a file where a folder should be), with a one-line warning.

The cache is bounded: once per process, after its first write, the least recently used
entries (a hit refreshes an entry's time) are removed until the whole is under
``CGPREDICT_CACHE_MAX_MB`` MiB (default 2048), and entries of older cache formats go too.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import mmap
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Layout and ``entry.json`` format; an entry of another format is rebuilt (3: SHA-256, and
#: reports as JSON/NPZ data instead of pickles).
FORMAT = 3
DEFAULT_MAX_MB = 2048
_ENTRY = "entry.json"
_PACKAGE = Path(__file__).resolve().parent


def cache_root() -> Path:
    """Where the cache lives (see the module docstring)."""
    env = os.environ.get("CGPREDICT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cgpredict"


def enabled() -> bool:
    """False when ``CGPREDICT_NO_CACHE`` is set to anything but empty or 0."""
    return os.environ.get("CGPREDICT_NO_CACHE", "") in ("", "0")


@functools.lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """The package version and a hash of every source file of cgpredict (Python, the
    instrumentation pass, the C runtime): a changed tool never reads an older tool's entry."""
    from importlib import metadata

    try:
        version = metadata.version("cgpredict")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        version = "0"
    h = hashlib.sha256(version.encode())
    roots = [_PACKAGE]
    for sub in ("instrument", "runtime"):
        spec = importlib.util.find_spec(f"cgpredict.{sub}")  # located, not imported
        for loc in (spec.submodule_search_locations or []) if spec else []:
            roots.append(Path(loc).resolve())
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".c", ".h", ".toml") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return f"{version}+{h.hexdigest()[:16]}"


def entry_key(kind: str, parts: Mapping[str, object]) -> str:
    """sha256 of the kind, the tool fingerprint and ``parts`` (JSON, keys sorted)."""
    blob = json.dumps(
        {"kind": kind, "tool": tool_fingerprint(), "format": FORMAT, "parts": parts},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def file_digest(path: Path) -> str:
    """The SHA-256 of a stored file's content, read through a memory map (no copy through
    Python buffers: about 1.5 GB/s where the CPU has SHA instructions, 0.1 s on 3MM's 150 MB
    of traces)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return f"sha256:{hashlib.sha256().hexdigest()}"
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return f"sha256:{hashlib.sha256(m).hexdigest()}"


def max_bytes() -> int:
    """The size bound of the cache: ``CGPREDICT_CACHE_MAX_MB`` MiB, default 2048."""
    try:
        mb = float(os.environ.get("CGPREDICT_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(max(mb, 0) * 2**20)


@dataclass(frozen=True)
class Entry:
    """A valid cache entry: its directory and metadata."""

    path: Path
    meta: dict

    def file(self, name: str) -> Path:
        return self.path / name


@dataclass(frozen=True)
class CacheInfo:
    """What ``cgpredict cache info`` prints."""

    location: Path
    entries: int
    total_bytes: int
    by_kind: dict[str, int]

    def lines(self) -> list[str]:
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(self.by_kind.items())) or "none"
        return [
            f"location: {self.location}",
            f"entries: {self.entries} ({kinds})",
            f"size: {self.total_bytes} bytes ({self.total_bytes / 2**20:.1f} MiB, bounded to "
            f"{max_bytes() / 2**20:.0f} MiB: CGPREDICT_CACHE_MAX_MB)",
            f"enabled: {'yes' if enabled() else 'no (CGPREDICT_NO_CACHE is set)'}",
        ]


class DiskCache:
    """The cache at ``root`` (default ``cache_root()``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root()

    def _dir(self, kind: str, key: str) -> Path:
        return self.root / "entries" / kind / key

    def tmp_dir(self) -> Path:
        """The directory next to the entries (same file system, so files move in by rename)
        where a caller builds an entry's files."""
        tmp = self.root / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return tmp

    def staging(self) -> Path:
        """A fresh directory in ``tmp_dir()``."""
        return Path(tempfile.mkdtemp(prefix="stage-", dir=self.tmp_dir()))

    def get(self, kind: str, key: str) -> Entry | None:
        """The valid entry ``kind/key``, or None; an invalid one is removed."""
        d = self._dir(kind, key)
        if not d.is_dir():
            return None
        meta = self._valid(d, key)
        if meta is None:
            self._discard(d)
            return None
        try:
            os.utime(d)  # its time of last use, for the eviction of the least recently used
        except OSError:
            pass
        return Entry(d, meta.get("meta", {}))

    def _valid(self, d: Path, key: str) -> dict | None:
        try:
            meta = json.loads((d / _ENTRY).read_text())
            if meta.get("format") != FORMAT or meta.get("tool") != tool_fingerprint():
                return None
            if meta.get("key") != key:
                return None
            for name, (size, digest) in meta["files"].items():
                p = d / name
                if p.stat().st_size != size or file_digest(p) != digest:
                    return None
            return meta
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(
        self, kind: str, key: str, files: Mapping[str, Path], meta: Mapping | None = None
    ) -> Entry:
        """Store ``files`` (name in the entry -> a file, hard-linked in when on the same file
        system, else copied; the caller's files stay where they are) as entry ``kind/key``
        and return it; when another process stored a valid one first, that one is
        returned."""
        stage = self.staging()
        try:
            stamp: dict = {"format": FORMAT, "tool": tool_fingerprint(), "key": key,
                           "kind": kind, "files": {}, "meta": dict(meta or {})}
            for name, src in files.items():
                dst = stage / name
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copy2(src, dst)
                stamp["files"][name] = [dst.stat().st_size, file_digest(dst)]
            (stage / _ENTRY).write_text(json.dumps(stamp, sort_keys=True))
            final = self._dir(kind, key)
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(stage, final)
            except OSError:  # an entry is there: keep it when valid, else replace it
                if self._valid(final, key) is not None:
                    return Entry(final, stamp["meta"])
                self._discard(final)
                os.rename(stage, final)
            return Entry(final, stamp["meta"])
        finally:
            if stage.exists():
                shutil.rmtree(stage, ignore_errors=True)
            self._evict_once()

    def _evict_once(self) -> None:
        """``evict()`` the first time this process writes to this cache."""
        if str(self.root) not in _EVICTED:
            _EVICTED.add(str(self.root))
            try:
                self.evict()
            except OSError:  # a cache another process is clearing: bounded next time
                pass

    def _entry_dirs(self) -> list[Path]:
        base = self.root / "entries"
        if not base.is_dir():
            return []
        return [e for k in base.iterdir() if k.is_dir() for e in k.iterdir() if e.is_dir()]

    def evict(self, limit: int | None = None) -> int:
        """Remove the entries of other cache formats, then the least recently used ones until
        the cache holds at most ``limit`` bytes (default ``max_bytes()``); bytes freed."""
        limit = max_bytes() if limit is None else limit
        kept, freed = [], 0
        for d in self._entry_dirs():
            try:
                size = sum(f.stat().st_size for f in d.iterdir() if f.is_file())
                fmt = json.loads((d / _ENTRY).read_text()).get("format")
                used = d.stat().st_mtime
            except (OSError, ValueError, AttributeError):
                size, fmt, used = 0, None, 0.0
            if fmt != FORMAT:
                self._discard(d)
                freed += size
            else:
                kept.append((used, size, d))
        total = sum(size for _, size, _ in kept)
        for _, size, d in sorted(kept):
            if total <= limit:
                break
            self._discard(d)
            total -= size
            freed += size
        return freed

    def get_json(self, kind: str, key: str):
        """The JSON value stored under ``kind/key``, or None."""
        e = self.get(kind, key)
        if e is None:
            return None
        try:
            return json.loads(e.file("value.json").read_text())
        except (OSError, ValueError):
            return None

    def put_json(self, kind: str, key: str, value) -> None:
        stage = self.staging()
        try:
            p = stage / "value.json"
            p.write_text(json.dumps(value, sort_keys=True))
            self.put(kind, key, {"value.json": p})
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def remove(self, entry: Entry) -> None:
        """Remove ``entry`` (one found unusable after all)."""
        self._discard(entry.path)

    def _discard(self, d: Path) -> None:
        """Remove an entry directory: renamed out of the way first, so no reader can find
        it half-deleted."""
        tmp = self.root / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        trash = Path(tempfile.mkdtemp(prefix="trash-", dir=tmp))
        try:
            os.rename(d, trash / "x")
        except OSError:
            pass  # another process removed or replaced it
        shutil.rmtree(trash, ignore_errors=True)

    def info(self) -> CacheInfo:
        entries, total, kinds = 0, 0, {}
        base = self.root / "entries"
        if base.is_dir():
            for kind_dir in sorted(p for p in base.iterdir() if p.is_dir()):
                for e in kind_dir.iterdir():
                    if not e.is_dir():
                        continue
                    entries += 1
                    kinds[kind_dir.name] = kinds.get(kind_dir.name, 0) + 1
                    total += sum(f.stat().st_size for f in e.iterdir() if f.is_file())
        return CacheInfo(self.root, entries, total, kinds)

    def clear(self) -> int:
        """Remove every entry (and any staging left by killed runs); returns bytes freed.
        Only the cache's own sub-directories are touched."""
        freed = self.info().total_bytes
        for sub in ("entries", "tmp"):
            d = self.root / sub
            if d.is_dir():
                trash = self.root / f".clearing-{sub}-{os.getpid()}"
                try:
                    os.rename(d, trash)
                except OSError:
                    continue
                shutil.rmtree(trash, ignore_errors=True)
        return freed


_EVICTED: set[str] = set()  # cache roots this process has already bounded


def default_cache() -> DiskCache | None:
    """The cache at ``cache_root()``, or None when it is turned off or cannot be used."""
    if not enabled():
        return None
    root = cache_root()
    return DiskCache(root) if _usable(str(root)) else None


@functools.lru_cache(maxsize=None)
def _usable(root: str) -> bool:
    """Whether a cache can live at ``root`` (its folders made, a file written there); when
    not, one warning on stderr, once per process, and the cache stays off."""
    try:
        tmp = Path(root) / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix="probe-", dir=tmp)
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        print(f"cgpredict: warning: the cache at {root} cannot be used ({reason}); "
              f"running without it", file=sys.stderr)
        return False
