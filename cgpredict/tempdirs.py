"""cgpredict's temporary folders (``cgp-*``): each records the process that owns it, so the
leftovers of a process that died without cleaning up (SIGKILL, a crash) are found and
removed by a later run (``sweep_stale``) and by ``cgpredict cache clear``."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

PREFIX = "cgp-"
OWNER = ".cgp-owner"  # "PID START" of the owning process
UNOWNED_AGE_S = 24 * 3600  # a cgp-* folder without an owner file (older tools) kept this long
_swept: set[str] = set()
_live: set[str] = set()  # the folders this process made, for remove_all


def _start_time(pid: int) -> str:
    """The start time of process ``pid`` in clock ticks since boot ('' where unknown), so a
    recycled pid is not taken for the owner."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]


def make_tempdir(prefix: str = PREFIX, folder: Path | str | None = None):
    """A ``tempfile.TemporaryDirectory`` named ``prefix...`` that records its owner."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix, dir=folder)
    pid = os.getpid()
    (Path(tmp.name) / OWNER).write_text(f"{pid} {_start_time(pid)}")
    _live.add(tmp.name)
    return tmp


def remove_all() -> None:
    """Remove every temp folder this process made that is still there (signal handlers)."""
    for name in list(_live):
        shutil.rmtree(name, ignore_errors=True)
        _live.discard(name)


def owner_alive(folder: Path) -> bool | None:
    """Whether the process that made ``folder`` still runs (None: no owner recorded)."""
    try:
        pid_text, _, start = (folder / OWNER).read_text().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    if pid == os.getpid():
        return True
    if Path("/proc").is_dir():
        now = _start_time(pid)
        return bool(now) and (not start or now == start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def sweep_stale(folder: Path | str | None = None, everything: bool = False) -> int:
    """Remove this user's ``cgp-*`` folders in ``folder`` (default: the temp dir) whose owner
    has died; those without an owner file (made by an older cgpredict) once a day old
    (``everything``, as ``cache clear`` asks: an hour old). Returns how many were removed."""
    folder = Path(folder or tempfile.gettempdir())
    removed = 0
    try:
        candidates = [p for p in folder.iterdir() if p.name.startswith(PREFIX)]
    except OSError:
        return 0
    for p in candidates:
        try:
            st = p.lstat()
        except OSError:
            continue
        if not p.is_dir() or p.is_symlink() or st.st_uid != os.getuid():
            continue
        alive = owner_alive(p)
        age = time.time() - st.st_mtime
        if alive is False or (alive is None and age > (3600 if everything else UNOWNED_AGE_S)):
            shutil.rmtree(p, ignore_errors=True)
            removed += 1
    return removed


def sweep_once(folder: Path | str | None = None) -> None:
    """``sweep_stale(folder)``, the first time this process asks for that folder."""
    key = str(folder or tempfile.gettempdir())
    if key not in _swept:
        _swept.add(key)
        sweep_stale(folder)
