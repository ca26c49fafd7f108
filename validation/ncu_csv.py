"""One reader of Nsight Compute's ``--csv --page raw`` files for the validation scripts.

ncu writes ``==PROF==`` lines (and at times other text) before a header row whose first
cell is ``"ID"``, then a units row (first cell empty), then one row a profiled launch (first
cell its launch id). Metric cells hold numbers with thousands separators ('1,234.5'), or
text ('n/a', '', a launch dimension such as '(128, 1, 1)'). Every script that reads these
files takes its launches from here, so that they all skip the same lines and parse a number
the same way.

    from ncu_csv import read_ncu
    for launch in read_ncu(path):
        launch.kernel, launch.launch_id, launch.metrics["gpu__time_duration.sum"]
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

__all__ = ["NcuLaunch", "number", "read_ncu", "read_ncu_text"]


@dataclass(frozen=True)
class NcuLaunch:
    """One profiled launch: its ``launch_id`` (ncu's "ID"), ``kernel`` (the "Kernel Name"
    cut at its argument list), every cell's text by column (``cells``, as ncu wrote it) and
    every cell that is a number as a float (``metrics``: separators removed; text left out)."""

    launch_id: int
    kernel: str
    cells: dict[str, str]
    metrics: dict[str, float]


def number(text: str) -> float | None:
    """An ncu cell as a float with its thousands separators removed; None where it is not a
    number ('', 'n/a', '32,768 (0: 32,768)')."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def read_ncu_text(text: str) -> list[NcuLaunch]:
    """The launches of an ncu raw-page CSV's ``text``: the rows below the "ID" header whose
    first cell is a launch id and whose cells match the header's (the units row, the
    ``==PROF==`` lines and a cut-off last row are left out); none when there is no header."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    head = rows[0]
    out = []
    for row in rows[1:]:
        if len(row) != len(head) or not row[0].isdigit():
            continue
        cells = dict(zip(head, row))
        metrics = {k: v for k, v in ((k, number(t)) for k, t in cells.items()) if v is not None}
        out.append(NcuLaunch(launch_id=int(row[0]),
                             kernel=cells.get("Kernel Name", "").split("(")[0].strip(),
                             cells=cells, metrics=metrics))
    return out


def read_ncu(path: Path | str) -> list[NcuLaunch]:
    """The launches of the ncu raw-page CSV at ``path`` (read_ncu_text)."""
    return read_ncu_text(Path(path).read_text(errors="replace"))
