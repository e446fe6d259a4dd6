"""One cell of a DiffPRFs sweep (``task: forest`` in ``configs/experiments/*.yaml``).

``run_experiment(params, seed)`` trains a forest on ``params["data"]`` with :func:`dpkit.forest`
(the run of ``dpkit forest train``) and scores it on ``params["test"]``.
"""

from __future__ import annotations

import time
import warnings
from functools import lru_cache
from typing import Any

import numpy as np

#: params a forest cell understands (beyond data/test/schema/target) and their defaults.
DEFAULTS: dict[str, Any] = {
    "epsilon": 1.0, "trees": 25, "depth": 5, "features_per_node": "sqrt", "utility": "max",
    "sampling": "disjoint", "size_share": 0.5, "leaf_factor": 1.0,
}


@lru_cache(maxsize=8)
def _load(path: str, schema_path: str) -> Any:
    """The encoded table (cached: a sweep reads the same files hundreds of times)."""
    from dpkit.errors import DpkitWarning
    from dpkit.io.table import load_table
    from dpkit.schema.parse import load_schema

    schema = load_schema(schema_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpkitWarning)  # the dropped '?' rows, every time
        return load_table(path, schema)


@lru_cache(maxsize=8)
def _floor(path: str, schema_path: str, target: str) -> float:
    """The accuracy of always predicting the test set's majority class (computed once per file)."""
    from dpkit.evaluate.metrics import majority_rate

    return majority_rate(_load(path, schema_path).columns[target])


def run_experiment(params: dict[str, Any], seed: int) -> dict[str, float]:
    """Train on ``data`` with :func:`dpkit.forest` and return test ``accuracy``, ``epsilon_spent``
    (from the run's report) and ``fit_seconds`` (the whole call: read, fit, report).

    Also ``floor_accuracy`` (always predicting the test set's majority class), the level a
    forest must beat to have learnt anything. The run books on ``$DPKIT_LEDGER`` when it is
    set, as every library call does.
    """
    from dpkit.algorithms.forest.model import predict
    from dpkit.api.forest import forest as dp_forest
    from dpkit.errors import DpkitUsageError, DpkitWarning

    for key in ("data", "test", "schema"):
        if key not in params:
            raise DpkitUsageError(f"a forest experiment needs {key!r} in its parameters")
    unknown = set(params) - set(DEFAULTS) - {"data", "test", "schema", "target", "algorithm"}
    if unknown:
        raise DpkitUsageError(f"unknown forest parameter(s): {', '.join(sorted(unknown))}")
    p = {**DEFAULTS, **params}
    test = _load(str(p["test"]), str(p["schema"]))
    target = p.get("target") or test.schema.target
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpkitWarning)  # the dropped '?' rows, every time
        forest = dp_forest(
            str(p["data"]), schema=str(p["schema"]), target=target, epsilon=float(p["epsilon"]),
            n_estimators=int(p["trees"]), max_depth=int(p["depth"]), random_state=seed,
            features_per_node=p["features_per_node"], utility=str(p["utility"]),
            sampling=str(p["sampling"]), size_share=float(p["size_share"]),
            leaf_factor=float(p["leaf_factor"]),
        )
    fit_seconds = time.perf_counter() - start
    classes = np.asarray(forest.classes, dtype=object)
    truth = classes[test.columns[target]]
    labels = predict(forest.model, test)
    return {
        "accuracy": float(np.mean(labels == truth)),
        "epsilon_spent": float(forest.report["privacy"]["epsilon_spent"]),
        "fit_seconds": float(fit_seconds),
        "floor_accuracy": _floor(str(p["test"]), str(p["schema"]), target),
    }
