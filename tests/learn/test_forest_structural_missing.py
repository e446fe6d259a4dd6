"""A forest without a schema gives every numeric column its missing child, established or not
(issue 36 gap (b); dpkit.domain.metadata.structural_missing).

On a narrow or smallish table the metadata's threshold (≈ 2,900 records with 4 predictors) is far
above a column's 10–20 % of missing values, so the learned schema says ``missing: false`` and the
forest read a missing value as the column's lower bound — mixed with its lowest values. Now the
forest's schema gives the column its missing child by a public rule (``missing: true``, marked
structural in the YAML and the report); ``publish`` keeps the learned flag (an empty bucket costs
a release cells: docs/results/missing.md, "Narrow tables")."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.data.schema import parse_schema
from dpkit.domain.metadata import ColumnMeta, structural_missing
from dpkit.learn.model import missing_rule


def narrow(n: int, seed: int = 0) -> pd.DataFrame:
    """4 predictors; ``x`` is '?' in 15 % of the rows, and a missing x means yes (as the lowest
    x's never do): label = yes iff x > 60 or x missing."""
    g = np.random.default_rng(seed)
    x = g.integers(0, 101, n)
    gone = g.random(n) < 0.15
    xs = x.astype(str).astype(object)
    xs[gone] = "?"
    return pd.DataFrame({"x": xs, "y": g.integers(0, 50, n).astype(str),
                         "color": g.choice(["red", "green", "blue"], n),
                         "size": g.choice(["s", "m", "l"], n),
                         "label": np.where((x > 60) | gone, "yes", "no")})


def test_the_rule_flags_only_unestablished_numbers_and_dates() -> None:
    metas = [ColumnMeta("a", "numeric", missing=False), ColumnMeta("b", "numeric", missing=True),
             ColumnMeta("c", "categorical", missing=False), ColumnMeta("d", "date", integer=True, missing=False),
             ColumnMeta("e", "numeric", missing=None), ColumnMeta("f", "ignore")]
    got = {m.name: (m.missing, m.missing_structural) for m in structural_missing(metas)}
    assert got == {"a": (True, True), "b": (True, False), "c": (False, False), "d": (True, True),
                   "e": (None, False), "f": (None, False)}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[dpkit.Forest, Path, pd.DataFrame]:
    d = tmp_path_factory.mktemp("narrow")
    train = d / "train.csv"
    narrow(4000).to_csv(train, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = dpkit.forest(str(train), target="label", epsilon=1.0, delta=1e-6, seed=7, output=str(d / "f.json"))
    return f, d, narrow(2000, seed=1)


def test_a_forest_gives_a_missing_child_to_a_column_below_the_threshold(trained) -> None:
    """x's 600 '?' sit far below the metadata threshold: not established (no token learned), yet
    the forest's rule for x is a missing child (before: 'low', its lower bound)."""
    f, d, _ = trained
    text = (d / "f.schema.yaml").read_text()
    assert "'?'" not in text.split("columns:")[0]  # '?' not learned as a token
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("x:"))
    assert "missing: true" in line and "structural" in line
    assert "STRUCTURAL (a public rule, not learned)" in text
    assert f.report["release"]["missing_values"]["features"]["x"] == "branch"
    meta = f.report["parameters"]["metadata"]["columns"]["x"]
    assert meta["structural"] == ["missing"] and "missing tokens" in meta["learned"]
    model = json.loads((d / "f.json").read_text())
    assert next(ft for ft in model["features"] if ft["name"] == "x")["missing"] == "branch"


@pytest.mark.statistical
def test_the_missing_rows_reach_their_own_child(trained) -> None:
    """A missing x means yes; x's lowest values mean no. Read as the lower bound (before), the
    '?' rows were predicted with the low x's: 'no' for most of them (seed 7: none of them yes, accuracy 0.83);
    with the missing child, yes (tolerance: ≥ 0.8 of them at ε = 1, seed 7)."""
    f, _, test = trained
    gone = (test["x"] == "?").to_numpy()
    got = np.asarray(f.predict(test.drop(columns="label")))
    assert (got[gone] == "yes").mean() >= 0.8
    assert (got == test["label"].to_numpy()).mean() >= 0.85


def test_the_learned_schema_given_back_trains_the_same_rule(trained) -> None:
    _, d, _ = trained
    s = parse_schema((d / "f.schema.yaml").read_text(), "f.schema.yaml")
    assert s.columns["x"].holds_missing is True and missing_rule(s.columns["x"]) == "branch"


def test_publish_keeps_the_learned_flag(tmp_path: Path) -> None:
    """publish is not given the rule: x stays missing: false (its missing values in the lowest
    interval), as measured best for a release (docs/results/missing.md, "Narrow tables")."""
    train = tmp_path / "train.csv"
    narrow(4000).to_csv(train, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpkit.publish(str(train), target="label", epsilon=1.0, delta=1e-6, seed=7, output=str(tmp_path / "r.csv"))
    text = (tmp_path / "r.schema.yaml").read_text()
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("x:"))
    assert "missing: false" in line and "structural" not in line and "STRUCTURAL" not in text
