"""The front end and the trace (SPEC §2.1): C source -> marked regions -> LLVM IR ->
instrumented program, run confined -> trace file.

* ``regions``: the ``#pragma cgp`` kernel, shared and trace lines; ``port``: which CUDA port
  (plain or ``__restrict__`` pointers) is predicted; ``macros``: size macros as C evaluates
  them; ``compiler``: finding clang and compiling C to IR;
* ``tracer``: instrumenting, linking and running the program (``sandbox``: confined) into a
  trace; ``tracefile``: the versioned binary trace file every later stage reads;
  ``summary``: what a trace contains (``cgpredict trace-info``).

No module here imports the analysis above it (``tests/test_layering.py``).
"""
