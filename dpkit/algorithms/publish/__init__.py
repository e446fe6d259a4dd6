"""``dpkit publish``: differentially private generalized release of classification data.

MAXGDDP (:mod:`dpkit.algorithms.publish.maxgddp`), the DiffGen baseline (:mod:`dpkit.algorithms.publish.diffgen`),
the cut they specialize (:mod:`dpkit.algorithms.publish.cut`) and the sparse noisy table
(:mod:`dpkit.algorithms.publish.sparse`).
"""

from __future__ import annotations

from typing import Any

ALGORITHMS = ("maxgddp", "diffgen")
#: the algorithm of ``dpkit.publish`` (and of a sweep) when none is named
DEFAULT_ALGORITHM = "maxgddp"
#: every option a publisher takes besides ``epsilon`` (``raw`` is ``postprocess="raw"``)
OPTIONS = ("levels", "raw", "postprocess", "allocation", "selection_share", "selector", "grid", "n_share",
           "resolution", "score")
#: the options only MAXGDDP takes (DiffGen's budget split is fixed by the algorithm)
MAXGDDP_ONLY = ("allocation", "selection_share", "selector", "grid", "score")


def make_model(algorithm: str, epsilon: float, options: dict[str, Any] | None = None) -> Any:
    """The publisher for ``algorithm`` (``maxgddp`` or ``diffgen``) with ``options``.

    One place for the library, the CLI and the sweep runner, so all build the same model. Only
    the options given (not None) are passed on: every default is the estimator's own
    (``MaxGDDP.__init__``, ``DiffGen.__init__``). ``raw: true`` is the estimator's
    ``postprocess="raw"`` (the paper's plain release); ``raw: false`` leaves ``postprocess`` to
    its default (suppress with ``levels="auto"``, raw with a fixed h). DiffGen ignores the
    MAXGDDP-only options (:data:`MAXGDDP_ONLY`); keys neither takes are refused.
    """
    from dpkit.errors import DpkitUsageError

    every = [k.replace("-", "_") for k in (options or {})]
    given = {k.replace("-", "_"): v for k, v in (options or {}).items() if v is not None}
    if given.pop("raw", False):
        given["postprocess"] = "raw"
    if algorithm == "diffgen":
        from dpkit.algorithms.publish.diffgen import DiffGen as cls
        for k in MAXGDDP_ONLY:
            given.pop(k, None)
    elif algorithm == "maxgddp":
        from dpkit.algorithms.publish.maxgddp import MaxGDDP as cls
    else:
        raise DpkitUsageError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}",
                              param="algorithm")
    import inspect

    known = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "epsilon")]
    # every key, None-valued ones too: a None is a default only for an option the publisher has
    unknown = sorted(set(every) - set(known) - {"raw", "postprocess", *MAXGDDP_ONLY})
    if unknown:
        raise DpkitUsageError(f"unknown option(s) {', '.join(unknown)} for algorithm {algorithm!r} "
                              f"(known: {', '.join(known)})", param=unknown[0])
    return cls(epsilon=epsilon, **given)
