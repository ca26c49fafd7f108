"""The memory analysis of one kernel (SPEC §2.3, §2.6): from the pseudo-warps' addresses to
the L2 and DRAM transactions and the shared-memory counts the models take.

* ``transactions``: the coalescing class of each warp instruction, its L2 transactions and
  the DRAM transactions the cache analysis leaves;
* ``lru``: the LRU cache analyser with temporal conflict sets; ``reuse``: hits at the work
  size from the trace size's reuse distances;
* ``shared``: shared-memory staging of tiled kernels and its bank conflicts; ``staging``: the
  tile phases and staging loads of one kernel;
* ``residency``: data a launch finds in the L2, left by earlier launches; ``footprint``: the
  trace-size check per cache level.
"""
