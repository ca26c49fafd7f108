"""The optimisation advisor (``cgpredict advise``, SPEC §2.6 and §4): candidate fixes ranked by
predicted speedup, each re-predicted from the same trace rather than guessed.

* **coalescing**: every 2-D array with uncoalesced accesses is re-analysed with its layout
  transposed (the recorded addresses remapped, then warps, cache and model run again); when
  that slows some kernels down, a transposed copy read only by the kernels it speeds up;
* **shared memory**: per kernel, the arrays it only reads inside its per-thread loops and does
  not already stage are staged in 32x32 tiles (bank conflicts from the remapped addresses,
  staging loads from what each block touches), or the user's tiled variant is predicted as
  written; a tiling that does not fit the device is not proposed;
* **block shape**: the model swept over legal block shapes, against the block the baseline
  used; "keep" unless a shape is predicted faster;
* **register accumulation**: in a plain port (pointers that may alias) an accumulator such as
  ``C[i][j] += ...`` is stored on every iteration; ``__restrict__`` or a local sum keeps it in
  a register, predicted from a second trace of the restrict port; and that change combined
  with the best coalescing or tiling fix, re-predicted as one kernel (not multiplied);
* **block reduction** and **privatisation** (atomic_fixes): a reduction over the threads
  combined per block (shuffles, shared memory, one atomicAdd per block) instead of per warp;
  a histogram's bins kept per block in shared memory and merged once per block; both
  re-predicted with ``RunOptions.reduce = "block"`` (atomics.py), each with a CUDA snippet;
* **padded shared-memory transposition**: an uncoalesced access each thread of a 2-D kernel
  makes once goes through a 32x33 tile (thread (tx, ty) makes the access of thread (ty, tx)),
  re-predicted with the access exchanged inside 32x32 tiles and the tile's shared store,
  barrier and conflict-free column load added (``tile_fix``);
* **AoS->SoA**: an array of structs read with the struct's stride, re-predicted with one array
  per field (``soa_fix``);
* **warp per row**: a kernel with one thread per row has each warp take its 32 rows in turn,
  lanes splitting each row loop, a shuffle butterfly per reducing loop (``row_fix``);
* **halo tile**: a 2-D stencil's array staged per block in shared memory with the halo
  its stencil reads, loaded once and coalesced, every neighbour read from the tile; not
  offered for an in-place stencil (``halo_fix``);
* **register blocking**: each thread of a 2-D stencil computes R = 2, 4 or 8 outputs along y,
  the loads its outputs share made once and kept in registers, re-predicted with the threads
  regrouped and the repeated loads dropped (register_block.py); it needs ``__restrict__``
  arrays and says so; not offered for an in-place stencil (``regblock_fix``);
* **GPUPerf benefits** (B_itilp, B_memlp, B_fp, B_serial) and the bound of every kernel;
* **roofline**: each kernel's DRAM, L2 and issue bounds, how close it is to the nearest, and
  the best a fix of a kind that keeps every instruction can reach (``roofline``).

**Legality** (``legality``): a layout change is applied everywhere the array is used and says
so (each kernel, the host code that fills or reads it); none that makes a data-moving kernel
a copy (storing a transpose's output transposed) is offered; no transposed copy of an array a
kernel writes. Fix kinds that propose themselves from the baseline alone are entries of
``registry.FIX_KINDS``, each run as a task of the advisor's pool.

A fix predicted slower than now is listed as not worth doing (no instruction); the baseline's
warnings and the fixes that could not be predicted are given as notes.


The package: ``advice`` (what it hands back, its text and chart), ``fixes`` (each candidate
fix, re-predicted), ``atomic_fixes`` (the fixes of reductions and atomics), ``rank``
(``advise``: the fixes predicted side by side and ranked), ``legality``, ``roofline``,
``registry``, ``soa_fix``, ``tile_fix``, ``row_fix``, ``halo_fix``, ``regblock_fix``.
"""

from .advice import (
    ADVICE_SCHEMA_VERSION,
    BLOCKS_1D,
    BLOCKS_2D,
    COMBINE,
    TILE,
    TOLERANCE,
    Advice,
    Benefits,
    Fix,
    benefit_chart,
    benefits,
    explain_change,
    render_text,
)
from .blocks import block_fix
from .fixes import (
    check_tiled,
    coalescing_fixes,
    combined_fix,
    register_fix,
    restored_stores,
    shared_candidates,
    shared_candidates_by_kernel,
    shared_fix,
    start_coalescing,
)
from .rank import advise, advise_prepared, may_keep_in_register

__all__ = [
    "ADVICE_SCHEMA_VERSION",
    "BLOCKS_1D",
    "BLOCKS_2D",
    "COMBINE",
    "TILE",
    "TOLERANCE",
    "Advice",
    "Benefits",
    "Fix",
    "advise",
    "advise_prepared",
    "benefit_chart",
    "benefits",
    "block_fix",
    "check_tiled",
    "coalescing_fixes",
    "combined_fix",
    "explain_change",
    "may_keep_in_register",
    "register_fix",
    "render_text",
    "restored_stores",
    "shared_candidates",
    "shared_candidates_by_kernel",
    "shared_fix",
    "start_coalescing",
]
