"""The errors cgpredict reports to the user as one line (the CLI turns them into exit codes)."""

from __future__ import annotations


class CGPredictError(Exception):
    """Base class: a problem with the user's input or environment, not a bug."""

    exit_code = 1


class ToolchainError(CGPredictError):
    """No usable compiler or runtime could be found."""


class CompileError(CGPredictError):
    """The user's C does not compile; the message carries the compiler's diagnostics."""

    exit_code = 2


class RegionError(CGPredictError):
    """No kernel region, or a malformed `#pragma cgp` line."""

    exit_code = 2


class OutputExistsError(CGPredictError):
    """The output path holds a file cgpredict did not write; it is never overwritten silently."""

    exit_code = 2


class TraceRunError(CGPredictError):
    """The traced program crashed, timed out or exceeded the event limit."""

    exit_code = 3


class TraceFormatError(CGPredictError):
    """A trace file that is unreadable, truncated, corrupt or of another version."""

    exit_code = 4


class OutputPathError(CGPredictError):
    """An output path cgpredict cannot write (no folder, a directory, a FIFO, no permission)."""

    exit_code = 2


def check_writable(path, what: str = "") -> None:
    """Raise OutputPathError (`cannot write X: reason`) unless ``path`` can be written as a
    regular file: its folder exists (it is never created silently) and is writable, and the path
    is absent or a regular file. Nothing is opened, so a FIFO never blocks."""
    import os
    import stat
    from pathlib import Path

    path = Path(path)
    label = f"{what} {path}" if what else str(path)

    def fail(reason: str) -> None:
        raise OutputPathError(f"cannot write {label}: {reason}")

    parent = path.parent if str(path.parent) else Path(".")
    try:
        pst = parent.stat()
    except FileNotFoundError:
        fail(f"folder {parent} does not exist")
    except NotADirectoryError:
        fail(f"{_first_file(parent)} is not a folder")
    except OSError as exc:
        fail(exc.strerror or str(exc))
    if not stat.S_ISDIR(pst.st_mode):
        fail(f"{parent} is not a folder")
    try:
        st = path.lstat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        fail(exc.strerror or str(exc))
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            try:
                st = path.stat()
            except OSError:
                st = None  # a dangling link: writing creates its target
        if st is not None and stat.S_ISDIR(st.st_mode):
            fail("it is a directory")
        if st is not None and not stat.S_ISREG(st.st_mode):
            fail("not a regular file")
    if not os.access(parent, os.W_OK | os.X_OK) or _pseudo_fs(parent):
        fail(f"folder {parent} is not writable")


def _first_file(path):
    """The first component of ``path`` that exists and is not a folder."""
    for p in reversed((path, *path.parents)):
        if p.exists() and not p.is_dir():
            return p
    return path


def _pseudo_fs(folder) -> bool:
    """/proc and /sys: kernel file systems where os.access says yes and writes fail."""
    resolved = folder.resolve()
    return any(resolved.is_relative_to(p) for p in ("/proc", "/sys"))
