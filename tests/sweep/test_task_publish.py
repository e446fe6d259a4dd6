from __future__ import annotations

from pathlib import Path

import pytest

from dpkit.errors import DpkitUsageError
from dpkit.sweep.tasks.publish import run_experiment

ROOT = Path(__file__).resolve().parents[2]
IRIS = {"data": str(ROOT / "sample_data/iris/iris.csv"), "schema": str(ROOT / "taxonomies/iris.yaml"),
        "split": "stratified", "levels": 5, "min_samples_leaf": 1}


@pytest.mark.parametrize("algorithm", ["maxgddp", "diffgen"])
def test_run_experiment_on_iris(algorithm):
    r = run_experiment({**IRIS, "algorithm": algorithm, "epsilon": 1.0}, seed=3)
    assert set(r) >= {"accuracy", "baseline_accuracy", "floor_accuracy", "epsilon_spent"}
    assert 0 <= r["accuracy"] <= 1
    assert r["floor_accuracy"] == pytest.approx(1 / 3)  # 17 test records per class
    assert r["baseline_accuracy"] > 0.85
    assert r["epsilon_spent"] == pytest.approx(1.0)
    assert run_experiment({**IRIS, "algorithm": algorithm, "epsilon": 1.0}, seed=3) == r  # seeded


def test_high_epsilon_approaches_the_baseline():
    r = run_experiment({**IRIS, "epsilon": 1000.0, "levels": 6}, seed=1)
    assert r["accuracy"] > 0.8


def test_unknown_algorithm():
    with pytest.raises(DpkitUsageError, match="algorithm must be one of maxgddp, diffgen"):
        run_experiment({**IRIS, "algorithm": "nope"}, seed=1)


def test_the_raw_baseline_takes_a_kept_missing_number(tmp_path) -> None:  # noqa: ANN001
    """missing_policy: keep leaves NaN in a numeric column; the raw-data baseline tree (sklearn,
    which refuses NaN) reads it below the bounds instead of failing the experiment."""
    import numpy as np
    import pandas as pd

    from dpkit.sweep.tasks.publish import run_experiment

    g = np.random.default_rng(0)
    n = 600
    x = g.integers(0, 100, n).astype(str).astype(object)
    x[::7] = ""
    pd.DataFrame({"x": x, "y": np.where(g.random(n) < 0.5, "a", "b")}).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.yaml").write_text("target: y\nmissing: ''\nmissing_policy: keep\ncolumns:\n"
                                     "  x: {type: numeric, bounds: [0, 100], integer: true}\n"
                                     "  y: {type: categorical, values: [a, b]}\n")
    result = run_experiment({"data": str(tmp_path / "t.csv"), "schema": str(tmp_path / "s.yaml"), "epsilon": 1.0,
                             "split": "stratified"}, 0)
    assert 0 <= result["baseline_accuracy"] <= 1 and 0 <= result["accuracy"] <= 1
