"""``cgpredict report --pdf``: the HTML page printed to PDF by a headless Chromium, when one is
installed (Debian's ``chromium``); nothing is downloaded."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..errors import CGPredictError, check_writable

__all__ = ["BROWSERS", "PDFError", "find_browser", "print_pdf"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "headless_shell")


class PDFError(CGPredictError):
    exit_code = 2


def find_browser() -> str | None:
    """The first headless-capable Chromium on PATH, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def check_pdf(pdf: Path) -> str:
    """The browser to print with; a one-line PDFError when there is none or ``pdf`` cannot be
    written (checked before the analysis)."""
    if pdf.suffix.lower() != ".pdf":
        raise PDFError(f"--pdf {pdf}: want a .pdf file")
    check_writable(pdf, "PDF")
    browser = find_browser()
    if browser is None:
        raise PDFError(
            f"--pdf needs a headless Chromium ({', '.join(BROWSERS)} on PATH; on Debian: "
            f"apt-get install chromium); the HTML page alone needs nothing"
        )
    return browser


def print_pdf(html: Path, pdf: Path, browser: str, timeout_s: float = 120.0) -> Path:
    """Print ``html`` to ``pdf`` with ``browser`` (headless, no network needed)."""
    cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-pdf-header-footer",
           f"--print-to-pdf={pdf.resolve()}", html.resolve().as_uri()]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PDFError(f"{browser} could not print {html}: {exc}") from None
    if r.returncode != 0 or not pdf.exists():
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise PDFError(f"{browser} could not print {html} (exit {r.returncode}): {last}")
    return pdf
