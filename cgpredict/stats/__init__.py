"""A statistical model beside the analytical one (SPEC §7, after BlackForest).

``measured`` reads measured run times (the shared jsonl, ``validation/measure.py`` JSON, the
TK1 table), ``counters`` reads Nsight Compute counters, ``features`` turns cgpredict's own
analysis of every measured configuration into one typed table, ``forest`` fits a random forest
of log(measured time) with leave-one-kernel-out error, permutation importance, PCA and partial
dependence, and ``explain`` puts it together for ``cgpredict explain``.

``forest`` and the plots need the ``stats`` extra (scikit-learn, matplotlib); the readers and the
feature table need only numpy.
"""
