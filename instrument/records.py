"""The static tables of an instrumented module, which the trace file stores and the whole
package reads: memory instructions (``MemInstr``), loops (``LoopInfo``), basic blocks with
their operation mix (``BlockInfo``), calls (``CallSite``), and the pass's result
(``InstrumentedModule``). Re-exported by ``memtrace``, the pass that builds them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemInstr:
    id: int
    region: int  # -1: in a helper function called from regions
    function: str
    block: int
    kind: str  # "load" | "store"
    bytes: int
    type: str
    file: str
    line: int
    column: int
    base: str  # the IR value the address derives from (a global or argument name)


@dataclass(frozen=True)
class LoopInfo:
    id: int
    region: int
    function: str
    header: str
    parent: int  # -1: outermost in its region
    depth: int  # 1 = outermost loop of the region
    line: int
    # header runs once per iteration (not a while-form exit test). A while loop whose latch can
    # also leave (a `break` at the end of its body) counts as bottom-tested: its iterations then
    # read high by the exits taken through the while test.
    rotated: bool
    blocks: tuple[int, ...] = ()  # ids (BlockInfo.id) of the blocks in its body
    carried: bool = False  # the compiler forwards a stored value to the next iteration


@dataclass(frozen=True)
class BlockInfo:
    id: int
    region: int
    function: str
    label: str
    ops: tuple[tuple[str, str, str, int], ...]  # (opcode, type, detail, static count)


@dataclass(frozen=True)
class CallSite:
    region: int
    function: str
    callee: str
    traced: bool  # a function of this module, instrumented; else an external operation
    line: int
    block: int = -1  # BlockInfo id of the calling block


@dataclass(frozen=True)
class InstrumentedModule:
    ir: str
    mem: tuple[MemInstr, ...]
    loops: tuple[LoopInfo, ...]
    blocks: tuple[BlockInfo, ...]
    calls: tuple[CallSite, ...]
    helpers: tuple[str, ...]
    globals: tuple[str, ...] = ()  # array globals whose run-time addresses the runtime records
