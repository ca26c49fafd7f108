"""A content-addressed on-disk cache of what only the source decides (issue #15).

Tracing a file (compile, instrument, link, run, and the count-only probe runs that fit the
trip counts to the work size) takes most of a cold ``cgpredict run``; the same source, flags,
sizes and tool give the same trace, so it is kept here and reused by ``run``, ``advise``,
``sweep`` and the rest. Not to be confused with ``cache.py``, the L2 cache *analyzer*.

Layout: ``ROOT/entries/KIND/KEY/`` holds the entry's files and ``entry.json`` (the format
stamp, the tool fingerprint, the key, the size and CRC-32 (``file_digest``) of every file,
and free metadata);
``ROOT/tmp/`` holds entries being written. An entry is built in ``tmp`` and renamed into
place in one step, so a concurrent reader sees a whole entry or none, and two writers of the
same key leave one of theirs. An entry whose stamp, fingerprint, key or file hashes do not
match is removed and rebuilt, never used.

ROOT is ``$CGPREDICT_CACHE_DIR``, else ``$XDG_CACHE_HOME/cgpredict``, else
``~/.cache/cgpredict``; ``CGPREDICT_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import mmap
import os
import shutil
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Layout and ``entry.json`` format; an entry of another format is rebuilt.
FORMAT = 2
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
    """A checksum of a stored file's content (CRC-32 of the whole file, read through a
    memory map): it catches a corrupt or truncated entry, and at 3-4 GB/s costs 0.04 s on
    3MM's 150 MB of traces where SHA-256 with buffered reads cost 0.23 s on every read of
    the entry. The entry's key, which must not collide, stays a SHA-256."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return "crc32:00000000"
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return f"crc32:{zlib.crc32(m):08x}"


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
            f"size: {self.total_bytes} bytes ({self.total_bytes / 2**20:.1f} MiB)",
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


def default_cache() -> DiskCache | None:
    """The cache at ``cache_root()``, or None when it is turned off."""
    return DiskCache() if enabled() else None
