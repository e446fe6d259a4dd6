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


def test_a_cell_is_one_dpkit_publish_run(tmp_path, monkeypatch):
    """The cell is a dpkit.publish run (issue 37 item 9), not a second copy of it: it books on
    $DPKIT_LEDGER as every library call does, and its tree is seeded from the run
    (Release.postprocessing_seed), so the same seed gives the same metrics."""
    import dpkit

    book = tmp_path / "ledger.db"
    dpkit.Ledger(book).register("iris", IRIS["data"], 5)
    monkeypatch.setenv("DPKIT_LEDGER", str(book))
    given = {**IRIS, "split": "given", "test": IRIS["data"], "epsilon": 0.5}
    first = run_experiment(given, seed=7)
    status = dpkit.Ledger(book).status()[0]
    assert status.spent == pytest.approx(0.5) and status.runs == 1
    assert run_experiment(given, seed=7) == first


def test_release_postprocessing_seed_follows_the_run_seed():
    """The seed is drawn after the release: the release is the same bytes with or without it,
    and the same run seed gives the same post-processing seed."""
    import dpkit

    data, schema = IRIS["data"], IRIS["schema"]
    a = dpkit.publish(data, schema=schema, target="species", epsilon=1.0, random_state=3, levels=3)
    b = dpkit.publish(data, schema=schema, target="species", epsilon=1.0, random_state=3, levels=3)
    c = dpkit.publish(data, schema=schema, target="species", epsilon=1.0, random_state=4, levels=3)
    assert a.postprocessing_seed == b.postprocessing_seed != c.postprocessing_seed
    assert a.table.equals(b.table)
    assert round(a.expected_noise_share, 4) == a.report["release"]["expected_noise_share"]
