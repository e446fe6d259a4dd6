"""One cell of a DiffPRFs sweep (``task: forest`` in ``configs/experiments/*.yaml``).

``run_experiment(params, seed)`` trains a forest on ``params["data"]`` with the library
(the same code as ``dpkit forest train``) and scores it on ``params["test"]``.
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
    from dpkit.data.schema import load_schema
    from dpkit.data.table import load_table
    from dpkit.errors import DpkitWarning

    schema = load_schema(schema_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpkitWarning)  # the dropped '?' rows, every time
        return load_table(path, schema)


def run_experiment(params: dict[str, Any], seed: int) -> dict[str, float]:
    """Train on ``data`` and return test ``accuracy``, ``epsilon_spent`` and ``fit_seconds``.

    Also ``floor_accuracy`` (always predicting the test set's majority class), the level a
    forest must beat to have learnt anything.
    """
    from dpkit.errors import DpkitUsageError
    from dpkit.learn.dprf import DiffPRFs
    from dpkit.learn.model import predict
    from dpkit.privacy import Accountant, make_rng

    for key in ("data", "test", "schema"):
        if key not in params:
            raise DpkitUsageError(f"a forest experiment needs {key!r} in its parameters")
    unknown = set(params) - set(DEFAULTS) - {"data", "test", "schema", "target", "algorithm"}
    if unknown:
        raise DpkitUsageError(f"unknown forest parameter(s): {', '.join(sorted(unknown))}")
    p = {**DEFAULTS, **params}
    train = _load(str(p["data"]), str(p["schema"]))
    test = _load(str(p["test"]), str(p["schema"]))
    target = p.get("target") or train.schema.target
    eps = float(p["epsilon"])
    accountant = Accountant(eps)
    forest = DiffPRFs(
        epsilon=eps, n_trees=int(p["trees"]), max_depth=int(p["depth"]),
        features_per_node=p["features_per_node"], utility=str(p["utility"]),
        sampling=str(p["sampling"]), size_share=float(p["size_share"]),
        leaf_factor=float(p["leaf_factor"]),
    )
    start = time.perf_counter()
    forest.fit(train, target, accountant=accountant, rng=make_rng(seed))
    fit_seconds = time.perf_counter() - start
    classes = np.asarray(forest.classes_, dtype=object)
    truth = classes[test.columns[target]]
    labels = predict(forest.model_, test)
    majority = np.bincount(test.columns[target], minlength=len(classes)).max() / max(test.n_rows, 1)
    return {
        "accuracy": float(np.mean(labels == truth)),
        "epsilon_spent": float(accountant.spent),
        "fit_seconds": float(fit_seconds),
        "floor_accuracy": float(majority),
    }
