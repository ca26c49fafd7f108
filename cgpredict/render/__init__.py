"""Renderings a person reads: the self-contained HTML report (``html``) and its inline SVG
charts (``svg``)."""

from .html import GENERATOR, check_output, is_report, render_html, write_report

__all__ = ["GENERATOR", "check_output", "is_report", "render_html", "write_report"]
