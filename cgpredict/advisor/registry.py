"""The fix kinds that propose themselves from the baseline alone (issue #26): each a function
of the prepared trace, the options, the baseline and a list for its notes, returning its
fixes re-predicted. ``advise`` runs every entry as a task of its pool; a new kind (another
layout change, a reduction or privatisation fix) is one more entry here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..prediction import Report, RunOptions
from ..prepared import Prepared
from .advice import Fix
from .atomic_fixes import atomic_fixes
from .csr_fix import csr_fixes
from .halo_fix import halo_fixes
from .regblock_fix import regblock_fixes
from .row_fix import row_fixes
from .soa_fix import soa_fixes
from .tile_fix import tile_fixes


@dataclass(frozen=True)
class FixKind:
    """One kind of fix: its name, what proposes it, and whether it keeps every instruction
    (then no fix of it beats the issue bound on all SMs: roofline.kind_floors)."""

    kind: str
    propose: Callable[[Prepared, RunOptions, Report, list[str]], list[Fix]]
    keeps_instructions: bool = False


def _atomic(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """atomic_fixes (block reduction, privatisation: one re-analysis for both) as an entry."""
    return atomic_fixes(prep, opts, base)


FIX_KINDS: tuple[FixKind, ...] = (
    FixKind(kind="block-reduction, privatisation", propose=_atomic),
    FixKind(kind="aos-to-soa", propose=soa_fixes, keeps_instructions=True),
    FixKind(kind="shared-transpose", propose=tile_fixes),
    FixKind(kind="warp-per-row", propose=row_fixes),
    FixKind(kind="halo-tile", propose=halo_fixes),
    FixKind(kind="register-blocking", propose=regblock_fixes),
    FixKind(kind="warp-per-row", propose=csr_fixes),
)

#: Kinds whose fixes keep every instruction of every thread (block shape, layout changes).
KEEP_INSTRUCTIONS = ("block-shape", "coalescing") + tuple(
    k.kind for k in FIX_KINDS if k.keeps_instructions)
