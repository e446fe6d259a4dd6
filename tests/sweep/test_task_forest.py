"""``run_experiment``: one sweep cell on a small sample data set."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpkit.errors import DpkitUsageError
from dpkit.sweep.spec import load_experiment
from dpkit.sweep.tasks.forest import run_experiment

ROOT = Path(__file__).resolve().parents[2]
IRIS = {"data": str(ROOT / "sample_data" / "iris" / "iris.csv"),
        "test": str(ROOT / "sample_data" / "iris" / "iris.csv"),
        "schema": str(ROOT / "taxonomies" / "iris.yaml"), "target": "species"}


def test_one_cell() -> None:
    out = run_experiment({**IRIS, "epsilon": 4, "trees": 3, "depth": 2, "utility": "gini"}, seed=3)
    assert set(out) == {"accuracy", "epsilon_spent", "fit_seconds", "floor_accuracy"}
    assert out["epsilon_spent"] == pytest.approx(4.0)
    assert 0 <= out["accuracy"] <= 1 and out["floor_accuracy"] == pytest.approx(1 / 3)
    again = run_experiment({**IRIS, "epsilon": 4, "trees": 3, "depth": 2, "utility": "gini"}, seed=3)
    assert again["accuracy"] == out["accuracy"]  # the seed fixes the run


def test_unknown_parameter() -> None:
    with pytest.raises(DpkitUsageError, match="levels"):
        run_experiment({**IRIS, "levels": 3}, seed=0)


def test_shipped_experiment_parses() -> None:
    exp = load_experiment(ROOT / "configs" / "experiments" / "diffprfs-adult.yaml")
    assert exp.task == "forest" and {s.name for s in exp.sweeps} == {"epsilon", "depth"}
    assert exp.repeats == 5
