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


def test_the_baseline_scores_a_kept_missing_number(tmp_path):
    """missing_policy: keep leaves a missing number NaN in the encoded table; the raw-data
    baseline tree reads it below the bounds (it refused NaN: bench_dates crashed on a learned
    schema after keep was merged)."""
    rows = ["x,d,y"] + [f"{'?' if i % 10 == 0 else i % 50},{2019 + i % 6}-0{1 + i % 9}-01,{'a' if i % 50 < 25 else 'b'}"
                        for i in range(600)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "s.yaml").write_text(
        "target: y\nmissing: '?'\nmissing_policy: keep\ncolumns:\n  x: {type: numeric, bounds: [0, 50], integer: true}\n"
        "  d: {type: date, bounds: [2019-01-01, 2025-01-01]}\n  y: {type: categorical, values: [a, b]}\n")
    r = run_experiment({"data": str(tmp_path / "t.csv"), "schema": str(tmp_path / "s.yaml"), "split": "stratified",
                        "epsilon": 1.0}, seed=1)
    assert r["baseline_accuracy"] > 0.9 and 0 <= r["accuracy"] <= 1
