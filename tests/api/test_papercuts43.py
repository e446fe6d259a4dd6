"""Papercuts a new user met (issue 43 item 8): predict_proba's columns, the estimator's target
name, and generalize's target dtype."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpkit

pytestmark = pytest.mark.filterwarnings("ignore::dpkit.DpkitWarning")

KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


def _table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 100, n), "b": rng.choice(["x", "z"], n)})
    df["y"] = (df["a"] > 50).astype(int)
    return df


def test_predict_proba_names_every_class_p_class(tmp_path) -> None:  # noqa: ANN001
    df = _table()
    model = dpkit.forest(df, target="y", epsilon=2.0, delta=1e-6, n_estimators=3, max_depth=2, random_state=KEY)
    proba = model.predict_proba(df)
    assert list(proba.columns) == ["p_0", "p_1"]
    written = model.predictions(df, proba=True, output=tmp_path / "p.csv")
    assert [c for c in written.columns if c.startswith("p_")] == list(proba.columns)  # as the CLI writes them
    assert list(pd.read_csv(tmp_path / "p.csv").columns) == ["y", "p_0", "p_1"]
    text = dpkit.forest(df.assign(y=df["y"].map({0: "No", 1: "Yes"})), target="y", epsilon=2.0, delta=1e-6,
                        n_estimators=3, max_depth=2, random_state=KEY)
    assert list(text.predict_proba(df.drop(columns="y")).columns) == ["p_No", "p_Yes"]


def test_the_estimator_names_the_target_after_a_named_series() -> None:
    df = _table()
    X, y = df[["a", "b"]], df["y"].rename("income")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = dpkit.DiffPRFsClassifier(epsilon=2.0, delta=1e-6, n_estimators=2, max_depth=2, random_state=KEY).fit(X, y)
    assert clf.forest_.model.target == "income" and clf.report_["parameters"]["target"] == "income"
    # an unnamed y, or one named like a column of X, keeps "y"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = dpkit.DiffPRFsClassifier(epsilon=2.0, delta=1e-6, n_estimators=2, max_depth=2,
                                         random_state=KEY).fit(X, y.to_numpy())
        clash = dpkit.DiffPRFsClassifier(epsilon=2.0, delta=1e-6, n_estimators=2, max_depth=2,
                                         random_state=KEY).fit(X, y.rename("a"))
    assert plain.forest_.model.target == "y" and clash.forest_.model.target == "y"


@pytest.mark.parametrize("dtype", ["int64", "bool", "Int64"])
def test_generalize_keeps_the_targets_dtype(dtype: str) -> None:
    df = _table()
    df["y"] = df["y"].astype(dtype)
    release = dpkit.publish(df, target="y", epsilon=2.0, delta=1e-6, random_state=KEY)
    test = _table(500, seed=1)
    test["y"] = test["y"].astype(dtype)
    rows = release.generalize(test)
    assert str(rows["y"].dtype) == dtype
    assert rows.index.equals(test.index) and (rows["y"] == test["y"]).all()
    assert (rows["y"] == test["y"].iloc[0]).any()  # y_test == 1 is not silently all False


def test_generalize_of_a_text_target_stays_text() -> None:
    df = _table()
    df["y"] = df["y"].map({0: "no", 1: "yes"})
    release = dpkit.publish(df, target="y", epsilon=2.0, delta=1e-6, random_state=KEY)
    rows = release.generalize(df.head(50))
    assert set(rows["y"]) <= {"no", "yes"}
