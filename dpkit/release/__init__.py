"""``dpkit publish``: differentially private generalized release of classification data.

MAXGDDP (:mod:`dpkit.release.maxgddp`), the DiffGen baseline (:mod:`dpkit.release.diffgen`),
the cut they specialize (:mod:`dpkit.release.cut`), the sparse noisy table
(:mod:`dpkit.release.sparse`) and the experiment hook (:mod:`dpkit.release.experiment`).
"""

from __future__ import annotations

from typing import Any


def make_model(algorithm: str, epsilon: float, params: dict[str, Any]) -> Any:
    """The publisher for ``algorithm`` (``maxgddp`` or ``diffgen``) with ``params``' options.

    One place for the CLI and the sweep runner, so both build the same model; DiffGen takes
    only ``levels`` (its budget split is fixed by the algorithm) and the post-processing.
    ``levels`` is ``auto`` (default) or an integer; ``raw: true`` (or ``postprocess: raw``)
    keeps the paper's plain release (the default with an integer ``levels``; ``postprocess:
    suppress`` suppresses there too); ``n_share`` and ``resolution`` tune ``auto``.
    """
    from dpkit.errors import DpkitUsageError
    from dpkit.release import depth
    from dpkit.release.maxgddp import parse_levels

    levels = parse_levels(params.get("levels"))
    post = "raw" if params.get("raw") else params.get("postprocess")  # None: suppress with auto, raw with h
    auto = dict(n_share=float(params.get("n_share") or depth.N_SHARE),
                resolution=float(params.get("resolution") or depth.RESOLUTION))
    if algorithm == "diffgen":
        from dpkit.release.diffgen import DiffGen

        return DiffGen(epsilon=epsilon, levels=levels, postprocess=post, **auto)
    if algorithm == "maxgddp":
        from dpkit.release.maxgddp import MaxGDDP

        return MaxGDDP(epsilon=epsilon, levels=levels,
                       selection_share=float(params["selection_share"]),
                       allocation=params["allocation"], selector=params["selector"],
                       grid=int(params["grid"]), postprocess=post, **auto)
    raise DpkitUsageError(f"unknown algorithm {algorithm!r} (maxgddp or diffgen)")
