"""Running the user's program, confined (issue 29).

cgpredict compiles the user's C and runs it to record its trace. By default the program runs:

* with a minimal environment (``PATH=/usr/bin:/bin``, ``HOME`` and ``TMPDIR`` its private
  working folder, ``LANG=C``, the runtime's ``CGP_*`` variables; nothing else of the caller's);
* in a private working folder (the trace's own temp folder);
* under resource limits: address space (``ADDRESS_SPACE_BYTES``), file size (the event limit's
  bytes and some), CPU time (``--timeout`` and a second), no core files, and no new processes
  (``RLIMIT_NPROC`` 0; the kernel does not apply it to root);
* in a process group of its own, killed whole when the program's ``main`` returns, at the
  timeout, and when cgpredict exits or gets SIGTERM/SIGHUP (``kill_all``, the CLI's handlers),
  so no forked child outlives the run and a child left behind does not hold the run up;
* with stdout and stderr streamed to bounded buffers (the last ``KEEP_BYTES`` of each);
* where ``bwrap`` (bubblewrap) is on PATH: in new network and PID namespaces (no network),
  on a read-only view of the file system with a private ``/tmp`` and only its output folder
  writable.

``--no-sandbox`` (or ``CGPREDICT_NO_SANDBOX=1``) runs it with the caller's environment and no
limits or namespaces; the process group, its kill and the bounded buffers stay.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import resource
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

KEEP_BYTES = 64 * 1024
ADDRESS_SPACE_BYTES = 32 * 2**30
FILE_SLACK_BYTES = 256 * 2**20
_PR_SET_PDEATHSIG = 1
_groups: set[int] = set()
_lock = threading.Lock()


@dataclass(frozen=True)
class RunResult:
    """How the program ended: its exit status (negative: killed by that signal), the tails of
    its stdout and stderr, and whether it ran past the timeout."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def enabled() -> bool:
    """False when ``CGPREDICT_NO_SANDBOX`` is set to anything but empty or 0."""
    return os.environ.get("CGPREDICT_NO_SANDBOX", "") in ("", "0")


def minimal_env(workdir: Path, extra: dict[str, str]) -> dict[str, str]:
    """The whole environment of the confined program."""
    base = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "TMPDIR": str(workdir),
            "LANG": "C", "LC_ALL": "C"}
    return {**base, **extra}


def rlimits(timeout_s: float, max_file_bytes: int) -> list[tuple[int, int]]:
    """(resource, limit) pairs of the confined program."""
    return [
        (resource.RLIMIT_AS, ADDRESS_SPACE_BYTES),
        (resource.RLIMIT_FSIZE, max_file_bytes + FILE_SLACK_BYTES),
        (resource.RLIMIT_CPU, int(timeout_s) + 2),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, 0),
    ]


def _preexec(limits: list[tuple[int, int]]):
    """The function run in the child between fork and exec: die with cgpredict, then the
    limits (each lowered only, never raised above the caller's hard limit)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        prctl = None
    wanted = []
    for res, value in limits:
        soft, hard = resource.getrlimit(res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        wanted.append((res, (cap, cap)))

    def run() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        for res, pair in wanted:
            try:
                resource.setrlimit(res, pair)
            except (ValueError, OSError):
                pass

    return run


def bwrap_command(argv: list[str], workdir: Path) -> list[str] | None:
    """``argv`` inside bubblewrap (no network, read-only file system but ``workdir``, a private
    /tmp), or None when ``bwrap`` is not on PATH."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None
    return [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(workdir), str(workdir), "--unshare-net", "--unshare-pid", "--unshare-ipc",
        "--die-with-parent", "--new-session", "--chdir", str(workdir), "--", *argv,
    ]


def _drain(stream, keep: bytearray) -> None:
    """Read ``stream`` to its end, keeping its last KEEP_BYTES in ``keep``."""
    while chunk := stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(1 << 16):
        keep += chunk
        if len(keep) > 2 * KEEP_BYTES:
            del keep[: len(keep) - KEEP_BYTES]
    stream.close()


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid`` (gone already: nothing to do)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_all() -> None:
    """Kill the process groups of every confined program still running (signal handlers)."""
    with _lock:
        groups = list(_groups)
    for pgid in groups:
        kill_group(pgid)


atexit.register(kill_all)  # whatever way cgpredict ends, no traced program outlives it


def run_confined(
    argv: list[str], workdir: Path, extra_env: dict[str, str], timeout_s: float,
    max_file_bytes: int, confine: bool | None = None,
) -> RunResult:
    """Run ``argv`` in ``workdir`` (confined unless ``confine`` is False or the sandbox is
    off), wait for it at most ``timeout_s``, then kill its whole process group."""
    confine = enabled() if confine is None else confine
    env = minimal_env(workdir, extra_env) if confine else {**os.environ, **extra_env}
    wrapped = bwrap_command(argv, workdir) if confine else None
    limits = rlimits(timeout_s, max_file_bytes)
    if wrapped is not None:  # bwrap forks inside: no RLIMIT_NPROC for it
        limits = [x for x in limits if x[0] != resource.RLIMIT_NPROC]
    proc = subprocess.Popen(
        wrapped or argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=_preexec(limits) if confine else None,
    )
    with _lock:
        _groups.add(proc.pid)
    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=_drain, args=(s, b), daemon=True)
               for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for t in readers:
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        kill_group(proc.pid)  # children it forked and left behind go with it
        proc.wait()
        with _lock:
            _groups.discard(proc.pid)
    for t in readers:
        t.join(timeout=5)
    rc = proc.returncode
    if wrapped is not None and rc > 128 and (rc - 128) in signal.valid_signals():
        rc = -(rc - 128)  # bwrap exits 128 + the signal that killed the program
    text = lambda b: bytes(b[-KEEP_BYTES:]).decode("utf-8", "replace")  # noqa: E731
    return RunResult(rc, text(out), text(err), timed_out)
