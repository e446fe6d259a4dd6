"""evaluate_clustering and evaluate_kanon take a pandas DataFrame, as their DataLike annotation
says (issue 37 item 8), and give what they give for the same rows in a file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import dpkit

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"


def test_evaluate_kanon_takes_a_dataframe(tmp_path: Path) -> None:
    df = pd.read_csv(ADULT, dtype=str, skipinitialspace=True).head(500)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    mem = dpkit.evaluate_kanon(df, quasi_identifiers=["sex", "race"], k=2)
    disk = dpkit.evaluate_kanon(str(path), quasi_identifiers=["sex", "race"], k=2)
    assert mem.check.records == disk.check.records == 500
    assert mem.check.classes == disk.check.classes and mem.check.k == disk.check.k


def test_evaluate_clustering_takes_a_dataframe(tmp_path: Path) -> None:
    points = pd.DataFrame({"x": [0.0, 0.1, 5.0, 5.1], "y": [0.0, 0.2, 5.0, 4.9]})
    cents = tmp_path / "c.csv"
    pd.DataFrame({"x": [0.05, 5.05], "y": [0.1, 4.95]}).to_csv(cents, index=False)
    path = tmp_path / "p.csv"
    points.to_csv(path, index=False)
    mem = dpkit.evaluate_clustering(points, str(cents), reference=False)
    disk = dpkit.evaluate_clustering(str(path), str(cents), reference=False)
    assert mem == disk and mem
