"""Sanity of calibrated values (SPEC §6): the plausible range of each device field, and why
a measured value cannot be right (not a positive finite number, not a power of two where a
size must be one, outside its field's range). A rejected value is left out, with a note.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["VALUE_RANGES", "screen", "value_problem"]

# Plausible range of a calibrated field (generous: a value outside is a broken measurement).
VALUE_RANGES: dict[str, tuple[float, float]] = {
    "clock_mhz": (100.0, 10_000.0),
    "l1_latency_cycles": (1.0, 2_000.0),
    "l2_latency_cycles": (1.0, 10_000.0),
    "dram_latency_cycles": (1.0, 20_000.0),
    "shared_latency_cycles": (1.0, 2_000.0),
    "smem_load_cycles": (1.0, 50_000.0),
    "dd_l2_cycles": (0.001, 1_000.0),
    "dd_dram_cycles": (0.001, 1_000.0),
    "inst_cycles_per_warp_inst": (0.01, 100.0),
    "inst_latency_cycles": (0.5, 1_000.0),
    "fp_latency_cycles": (0.5, 1_000.0),
    "fp64_latency_cycles": (0.5, 1_000.0),
    "sfu_latency_cycles": (0.5, 1_000.0),
    "dram_bandwidth_gbps": (1.0, 100_000.0),
    "barrier_cycles": (0.1, 1e6),
    "smem_conflict_replay_cycles": (0.01, 1_000.0),
    "warp_size": (1, 1024),
}
# Sizes that must be powers of two; fields that may be 0.
_POW2 = ("l2_sector_bytes", "l1_fetch_bytes", "l2_dram_fetch_bytes", "warp_size")
_ZERO_OK = ("shared_mem_reserved_per_block_bytes",)


def value_problem(key: str, value: Any) -> str | None:
    """Why a calibrated value cannot be right, or None: not a positive finite number, not a
    power of two (line and sector sizes), outside the plausible range of its field."""
    if isinstance(value, str):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "not a number"
    if not math.isfinite(value):
        return "not a finite number"
    if value < 0 or (value == 0 and key not in _ZERO_OK):
        return "not a positive number"
    if key in _POW2 and (value != int(value) or int(value) & (int(value) - 1)):
        return "not a power of two"
    lo, hi = VALUE_RANGES.get(key, (0.0, math.inf))
    if not lo <= value <= hi:
        return f"outside the plausible range [{lo:g}, {hi:g}]"
    return None


def screen(table: dict, notes: list, kept: str) -> None:
    """Drop from ``table`` every value ``value_problem`` rejects, with a note saying why and
    what is ``kept`` instead."""
    for key, m in list(table.items()):
        why = value_problem(key, m.value)
        if why:
            notes.append(f"{key}: measured {m.value!r} is {why}; {kept}")
            del table[key]
