"""One kernel (region) of a trace analysed and modelled, launch by launch (SPEC §2.2-2.6).

* ``analysis``: ``analyze_region``, the steps in turn, every launch and the kernel's report;
* ``region``: the region mapped onto the GPU at the trace size (tiles, resident warps, growth
  to the work size) and its memory analysis;
* ``launch``: one launch modelled (counts, memory profile, instruction mix, the model);
* ``reloads``: the loads that reload the plain port's accumulator, kept across analyses;
* ``layouts``: the advisor's layout changes applied to the pseudo-warps;
* ``checks``: the warnings of a kernel and the blocks and tiles the device refuses.
"""
