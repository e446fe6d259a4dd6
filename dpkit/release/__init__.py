"""``dpkit publish``: differentially private generalized release of classification data.

MAXGDDP (:mod:`dpkit.release.maxgddp`), the DiffGen baseline (:mod:`dpkit.release.diffgen`),
the cut they specialize (:mod:`dpkit.release.cut`), the sparse noisy table
(:mod:`dpkit.release.sparse`) and the experiment hook (:mod:`dpkit.release.experiment`).
"""
