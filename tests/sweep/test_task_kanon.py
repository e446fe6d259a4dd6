"""run_experiment: one sweep cell of the XGB-KA experiment on Breast Cancer Wisconsin."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpkit.sweep.tasks.kanon import run_experiment

ROOT = Path(__file__).resolve().parents[2]
BCW = ROOT / "sample_data" / "breast-cancer-wisconsin" / "breast-cancer-wisconsin.csv"
BCW_SCHEMA = ROOT / "taxonomies" / "breast-cancer-wisconsin.yaml"


BASE = {"data": str(BCW), "schema": str(BCW_SCHEMA), "target": "class", "positive": "4", "split": 0}


def test_metrics_and_paired_splits() -> None:
    a = run_experiment({**BASE, "k": 1, "ranker": "xgboost"}, seed=11)
    b = run_experiment({**BASE, "k": 1, "ranker": "hamming"}, seed=99)
    # k = 1 keeps all 9 features whatever the ranker; `split` fixes the split, not the sweep seed
    assert a["selected_features"] == b["selected_features"] == 9
    assert a["precision"] == b["precision"] > 0.8 and a["recall"] == b["recall"] > 0.8
    c = run_experiment({**BASE, "k": 5, "ranker": "hamming"}, seed=0)
    assert set(c) >= {"selected_features", "precision", "recall", "seconds", "smallest_class"}
    assert c["smallest_class"] >= 5 and c["selected_features"] < 9
    assert 0 <= c["precision"] <= 1 and 0 <= c["recall"] <= 1 and c["seconds"] > 0


def test_sample_and_binning() -> None:
    m = run_experiment({**BASE, "k": 5, "ranker": "hamming", "sample": 300, "bin_numeric": 2}, seed=0)
    # two bins per feature: combinations of several features stay ≥ 5 in 210 training records
    assert m["selected_features"] >= 2 and m["smallest_class"] >= 5
    with pytest.raises(ValueError, match="positive class"):
        run_experiment({**BASE, "k": 2, "positive": "malignant", "ranker": "hamming"}, seed=0)
