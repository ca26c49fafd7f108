"""cgpredict's temp folders record their owner; the leftovers of dead processes are swept
(tempdirs.py, ``cgpredict cache clear``)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import pytest
from click.testing import CliRunner

from cgpredict import tempdirs
from cgpredict.cli import main


@pytest.fixture
def tmpdir_private(tmp_path, monkeypatch):
    """The temp dir of this test alone (other users' cgp-* folders are never touched)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_owner_is_recorded_and_only_dead_owners_are_swept(tmpdir_private):
    mine = tempdirs.make_tempdir()
    dead = tmpdir_private / "cgp-dead"
    dead.mkdir()
    (dead / tempdirs.OWNER).write_text(f"{_dead_pid()} 1")
    recycled = tmpdir_private / "cgp-recycled"  # a live pid that started at another time
    recycled.mkdir()
    (recycled / tempdirs.OWNER).write_text(f"{os.getppid()} 1")
    young, old = tmpdir_private / "cgp-young", tmpdir_private / "cgp-old"
    young.mkdir(), old.mkdir()
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    other = tmpdir_private / "not-ours"
    other.mkdir()
    assert tempdirs.sweep_stale() == 3
    left = sorted(p.name for p in tmpdir_private.iterdir())
    assert left == sorted([os.path.basename(mine.name), "cgp-young", "not-ours"])
    mine.cleanup()


def test_cache_clear_removes_stale_temp_folders(tmpdir_private, monkeypatch):
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(tmpdir_private / "cache"))
    dead = tmpdir_private / "cgp-abc"
    dead.mkdir()
    (dead / tempdirs.OWNER).write_text(f"{_dead_pid()} 1")
    (dead / "events.bin").write_bytes(b"x" * 100)
    r = CliRunner().invoke(main, ["cache", "clear"], catch_exceptions=False)
    assert r.exit_code == 0 and "1 stale temp folder(s) removed" in r.stdout
    assert not dead.exists()
