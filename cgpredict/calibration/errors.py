"""The errors of `cgpredict calibrate` (one line each; exit code 5)."""

from __future__ import annotations

from cgpredict.errors import CGPredictError

__all__ = ["CalibrationError", "NoGPUError"]


class CalibrationError(CGPredictError):
    """Calibration could not run or its results cannot make a device file."""

    exit_code = 5


class NoGPUError(CalibrationError):
    """No NVIDIA GPU, driver or CUDA compiler on this machine."""
