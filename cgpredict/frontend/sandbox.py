"""Running the user's program, confined (issue 29).

cgpredict compiles the user's C and runs it to record its trace. By default the program runs:

* with a minimal environment (``PATH=/usr/bin:/bin``, ``HOME`` and ``TMPDIR`` its private
  working folder, ``LANG=C``, the runtime's ``CGP_*`` variables; nothing else of the caller's);
* in a private working folder (the trace's own temp folder);
* under resource limits: address space (``ADDRESS_SPACE_BYTES``), file size (the event limit's
  bytes and some), CPU time (``--timeout`` and two seconds), no core files, and no new
  processes (``RLIMIT_NPROC`` 0, which the kernel does not apply to root, and on x86-64 a
  seccomp filter, ``no_process_filter``, which it does);
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
import platform
import resource
import shutil
import signal
import struct
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

KEEP_BYTES = 64 * 1024
ADDRESS_SPACE_BYTES = 32 * 2**30
FILE_SLACK_BYTES = 256 * 2**20
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
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


_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38


def no_process_filter() -> bytes | None:
    """A seccomp BPF program (x86-64 only, else None) that forbids new processes, root's
    included (RLIMIT_NPROC spares root): fork, vfork and a clone without CLONE_THREAD fail
    with EPERM, clone3 with ENOSYS (libc then falls back to clone), x32 calls with EPERM."""
    if platform.machine() != "x86_64":
        return None
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    prog = [
        (ld, 0, 0, 4),  # 0: A = arch
        (jeq, 1, 0, 0xC000003E),  # 1: x86-64 -> 3
        (ret, 0, 0, _ALLOW),  # 2: another ABI (the kernel checks it apart)
        (ld, 0, 0, 0),  # 3: A = syscall number
        (jge, 7, 0, 0x40000000),  # 4: x32 -> 12
        (jeq, 6, 0, 57),  # 5: fork -> 12
        (jeq, 5, 0, 58),  # 6: vfork -> 12
        (jeq, 5, 0, 435),  # 7: clone3 -> 13
        (jeq, 0, 2, 56),  # 8: clone -> 9, else -> 11
        (ld, 0, 0, 16),  # 9: A = low word of its flags
        (jset, 0, 1, 0x10000),  # 10: CLONE_THREAD (a thread) -> 11, else -> 12
        (ret, 0, 0, _ALLOW),  # 11
        (ret, 0, 0, _ERRNO | _EPERM),  # 12
        (ret, 0, 0, _ERRNO | _ENOSYS),  # 13
    ]
    return b"".join(struct.pack("<HBBI", *ins) for ins in prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _preexec(limits: list[tuple[int, int]], no_processes: bytes | None = None):
    """The function run in the child between fork and exec: die with cgpredict, the limits
    (each lowered only, never raised above the caller's hard limit), then the seccomp filter
    ``no_processes`` (built here, before the fork)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        prctl = None
    wanted = []
    for res, value in limits:
        soft, hard = resource.getrlimit(res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        wanted.append((res, (cap, cap)))
    fprog = _SockFprog(len(no_processes) // 8, no_processes) if no_processes else None

    def run() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        for res, pair in wanted:
            try:
                resource.setrlimit(res, pair)
            except (ValueError, OSError):
                pass
        if prctl is not None and fprog is not None:
            prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)

    return run


def bwrap_command(argv: list[str], workdir: Path, seccomp_fd: int | None = None
                  ) -> list[str] | None:
    """``argv`` inside bubblewrap (no network, read-only file system but ``workdir``, a private
    /tmp; the seccomp filter read from ``seccomp_fd``), or None when ``bwrap`` is not on
    PATH."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None
    seccomp = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
    return [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        *_tmp_program(argv, workdir),
        "--bind", str(workdir), str(workdir), "--unshare-net", "--unshare-pid", "--unshare-ipc",
        "--die-with-parent", "--new-session", *seccomp, "--chdir", str(workdir), "--", *argv,
    ]


def _tmp_program(argv: list[str], workdir: Path) -> list[str]:
    """A read-only view of the folder under /tmp that holds the program run, when it lies
    there and outside ``workdir`` (an interpreter in a virtual environment under /tmp): the
    private /tmp would hide it. Nothing else of the caller's /tmp is shown."""
    if not argv or not os.path.isabs(argv[0]):
        return []
    parts = Path(argv[0]).parts
    if len(parts) < 3 or parts[1] != "tmp":
        return []
    top = Path(parts[0], parts[1], parts[2])
    if Path(workdir).is_relative_to(top):
        return []
    return ["--ro-bind", str(top), str(top)]


def _filter_fd(data: bytes) -> int:
    """A pipe's read end holding ``data`` (bwrap's ``--seccomp`` reads the filter there)."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


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
    seccomp = no_process_filter() if confine else None
    fd = _filter_fd(seccomp) if seccomp and shutil.which("bwrap") else None
    wrapped = bwrap_command(argv, workdir, fd) if confine else None
    limits = rlimits(timeout_s, max_file_bytes)
    if wrapped is not None:  # bwrap forks inside: no RLIMIT_NPROC for it, the filter after
        limits = [x for x in limits if x[0] != resource.RLIMIT_NPROC]
    try:
        proc = subprocess.Popen(
            wrapped or argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=_preexec(limits, None if wrapped else seccomp) if confine else None,
            pass_fds=(fd,) if fd is not None else (),
        )
    finally:
        if fd is not None:
            os.close(fd)
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
