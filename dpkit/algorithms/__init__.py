"""The algorithms, a room each: ``publish/`` (MAXGDDP, DiffGen), ``forest/`` (DiffPRFs),
``cluster/`` (DPQTk-means and its baselines) and ``kanon/`` (k-anonymity: XGB-KA, Greedy-Hamdist).

Each takes a frame (:mod:`dpkit.engine`), an accountant and an rng, and returns plain results;
the public functions that run them are :func:`dpkit.publish`, :func:`dpkit.forest`,
:func:`dpkit.cluster` and :func:`dpkit.kanon_select` (docs/architecture.md).
"""
