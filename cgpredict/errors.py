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
