"""Tile transfers as the AXI ports and the DDR controller move them (SPEC §5, eqs. T2a-T2c).

A design's DRAM traffic is a `Flow`: bytes read and written, and the runs that start at a
non-sequential address (each opens a DDR row). Two resources move it:

* **AXI ports** (eq. T2a): ``axi_ports`` ports of ``axi_port_bytes`` per cycle, each with
  separate read and write channels, so overlapped reads and write-backs (double buffering)
  take ``max(R, W)`` port cycles, phased ones ``R + W``.
* **DDR** (eq. T2b): one bus at ``dram_bandwidth_gbps`` peak, at the controller's published
  efficiency per direction; bytes read and written at the same time (paired) run at the mixed
  efficiency (read/write turnaround), and every non-sequential run pays a fixed row-miss cost.
* **Row-miss cost** (eq. T2c): the random vs sequential efficiencies of the same bursts,
  ``t_miss = t_ref * (1 / e_random - 1 / e_sequential)``, ``t_ref`` one reference burst's
  data time; bursts that continue a run cost nothing extra (UG585 Table 22-6).

The transfer time is the slower of the two (eq. T2).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .device import FPGADevice


@dataclass(frozen=True)
class Flow:
    """DRAM traffic: bytes per direction and the non-sequential runs (row misses) in them."""

    read_bytes: float = 0.0
    write_bytes: float = 0.0
    read_runs: float = 0.0
    write_runs: float = 0.0

    def __add__(self, o: Flow) -> Flow:
        return Flow(
            read_bytes=self.read_bytes + o.read_bytes,
            write_bytes=self.write_bytes + o.write_bytes,
            read_runs=self.read_runs + o.read_runs,
            write_runs=self.write_runs + o.write_runs,
        )

    @property
    def bytes(self) -> float:
        return self.read_bytes + self.write_bytes


@dataclass(frozen=True)
class DramCosts:
    """The DDR peak and the per-direction efficiencies and row-miss costs (ns) of a device."""

    peak_bytes_per_ns: float
    eff_read: float
    eff_write: float
    eff_mixed: float
    miss_read_ns: float
    miss_write_ns: float
    miss_mixed_ns: float


def row_miss_ns(dev: FPGADevice, direction: str) -> float:
    """Eq. T2c: the fixed cost of a burst that opens a DDR row, from the published random vs
    sequential efficiency of the reference bursts."""
    t_ref = dev.dram_reference_burst_bytes / dev.dram_reference_gbps  # ns (B / (B/ns))
    seq = getattr(dev, f"dram_efficiency_{direction}")
    rnd = getattr(dev, f"dram_efficiency_{direction}_random")
    return t_ref * (1.0 / rnd - 1.0 / seq)


@functools.lru_cache(maxsize=16)
def dram_costs(dev: FPGADevice) -> DramCosts:
    """The device's DDR figures in the units eq. T2b uses."""
    return DramCosts(
        peak_bytes_per_ns=dev.dram_bandwidth_gbps,  # GB/s = bytes per ns
        eff_read=dev.dram_efficiency_read,
        eff_write=dev.dram_efficiency_write,
        eff_mixed=dev.dram_efficiency_mixed,
        miss_read_ns=row_miss_ns(dev, "read"),
        miss_write_ns=row_miss_ns(dev, "write"),
        miss_mixed_ns=row_miss_ns(dev, "mixed"),
    )


def port_cycles(flow: Flow, dev: FPGADevice, overlapped: bool) -> float:
    """Eq. T2a: fabric cycles on the AXI ports; read and write channels run at once when the
    fills and write-backs overlap."""
    per_cycle = dev.axi_ports * dev.axi_port_bytes
    if overlapped:
        return max(flow.read_bytes, flow.write_bytes) / per_cycle
    return flow.bytes / per_cycle


def ddr_ns(flow: Flow, c: DramCosts, overlapped: bool) -> float:
    """Eq. T2b: DDR time of the flow. Overlapped reads and writes are paired (each pair at the
    mixed efficiency, turnaround included); the rest runs at its own direction's efficiency;
    every run that opens a row adds its miss cost, weighted by the share of paired bytes."""
    paired = min(flow.read_bytes, flow.write_bytes) if overlapped else 0.0
    data = (
        2 * paired / c.eff_mixed
        + (flow.read_bytes - paired) / c.eff_read
        + (flow.write_bytes - paired) / c.eff_write
    ) / c.peak_bytes_per_ns
    mixed = 2 * paired / flow.bytes if flow.bytes else 0.0
    miss = (
        flow.read_runs * ((1 - mixed) * c.miss_read_ns + mixed * c.miss_mixed_ns)
        + flow.write_runs * ((1 - mixed) * c.miss_write_ns + mixed * c.miss_mixed_ns)
    )
    return data + miss


def transfer_cycles(flow: Flow, dev: FPGADevice, overlapped: bool) -> tuple[float, str]:
    """Eq. T2: fabric cycles to move the flow, and what limits it ("AXI ports" or "DDR")."""
    ports = port_cycles(flow, dev, overlapped)
    ddr = ddr_ns(flow, dram_costs(dev), overlapped) * dev.clock_mhz / 1e3
    return (ddr, "DDR") if ddr > ports else (ports, "AXI ports")


def burst_efficiency(run_bytes: float, dev: FPGADevice, direction: str = "read") -> float:
    """Share of the DDR peak that back-to-back runs of ``run_bytes``, each opening a row, get
    in one direction ("read", "write") or read and written back at once ("mixed")."""
    c = dram_costs(dev)
    eff = getattr(c, f"eff_{direction}")
    miss = getattr(c, f"miss_{direction}_ns")
    t = run_bytes / c.peak_bytes_per_ns
    return t / (t / eff + miss)
