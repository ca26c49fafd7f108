"""validation/ncu_csv.py: the one reader of Nsight Compute's raw-page CSVs, on a hand-written
file (the lines it skips, its numbers by hand) and on a committed file (every launch row that
csv.reader finds below the header, counted by hand from the file)."""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

from ncu_csv import number, read_ncu, read_ncu_text  # noqa: E402

TEXT = "\n".join([
    "==PROF== Connected to process 4242",
    "==PROF== Profiling \"k\": 0%....50%....100% - 9 passes",
    '"ID","Process ID","Kernel Name","Grid Size","gpu__time_duration.sum","dram__bytes_read.sum"',
    '"","","","","ns","byte"',
    '"0","4242","k(float *, int)","(128, 1, 1)","3,000","1,048,576"',
    '"1","4242","other_k(float *)","(2, 2, 1)","n/a","12.5"',
    '"2","4242","k(float *, int)","(128, 1',  # cut off: the profiler stopped mid-row
    "==PROF== Disconnected from process 4242",
])


def test_launch_rows_by_hand():
    """Two launch rows: the ==PROF== lines, the units row and the cut-off row left out; the
    name cut at its argument list; '3,000' is 3000.0, 'n/a' and '(128, 1, 1)' are no number
    (absent from metrics, kept as text in cells)."""
    a, b = read_ncu_text(TEXT)
    assert (a.launch_id, a.kernel, b.launch_id, b.kernel) == (0, "k", 1, "other_k")
    assert a.metrics["gpu__time_duration.sum"] == 3000.0
    assert a.metrics["dram__bytes_read.sum"] == 1048576.0
    assert "gpu__time_duration.sum" not in b.metrics and b.cells["gpu__time_duration.sum"] == "n/a"
    assert b.metrics["dram__bytes_read.sum"] == 12.5
    assert "Grid Size" not in a.metrics and a.cells["Grid Size"] == "(128, 1, 1)"
    assert "Kernel Name" not in a.metrics and a.metrics["ID"] == 0.0


def test_numbers_and_a_file_without_a_header():
    assert number("1,234.5") == 1234.5 and number("7") == 7.0
    assert number("") is None and number("n/a") is None and number("32,768 (0: 32,768)") is None
    assert math.isnan(number("nan"))
    assert read_ncu_text("==PROF== no launch was profiled\n") == []
    assert read_ncu_text("") == []


def test_a_committed_file_has_every_launch_row():
    """A committed file: as many launches as rows below the header whose first cell is a
    launch id, the last one's duration the same cell read by csv.reader directly."""
    path = ROOT / "validation/measured/h100-worst2-2026-11-27/blind-ncu/mandelbrot-16x16.csv"
    got = read_ncu(path)
    lines = path.read_text().splitlines()
    rows = list(csv.reader(lines[next(i for i, ln in enumerate(lines) if ln.startswith('"ID"')):]))
    ids = [r for r in rows[1:] if r and r[0].isdigit()]
    assert len(got) == len(ids) >= 1 and [g.launch_id for g in got] == [int(r[0]) for r in ids]
    col = rows[0].index("gpu__time_duration.sum")
    assert got[-1].metrics["gpu__time_duration.sum"] == float(ids[-1][col].replace(",", ""))
    assert got[-1].kernel == "mandelbrot"
