"""pandas and scikit-learn manners of the library (issue 37): the caller's index is kept,
unknown keywords are refused, value errors are ValueErrors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

import dpkit

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


@pytest.fixture(scope="module")
def split() -> tuple[pd.DataFrame, pd.DataFrame, dpkit.Forest]:
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(3000)
    train, test = train_test_split(df, test_size=0.3, random_state=0)
    model = dpkit.forest(train, schema=SCHEMA, epsilon=2.0, trees=5, depth=3, seed=KEY)
    return train, test, model


def test_predict_keeps_the_callers_index(split) -> None:
    _, test, model = split
    assert not test.index.equals(pd.RangeIndex(len(test)))  # shuffled: the trap of a fresh 0..n-1
    pred = model.predict(test)
    proba = model.predict_proba(test)
    assert pred.index.equals(test.index) and proba.index.equals(test.index)
    test = test.copy()
    test["pred"] = model.predict(test)
    assert test["pred"].notna().all()  # every row got its prediction
    # ... and the right one: row by row, the same as predicting that row alone
    for i in [0, 5, len(test) - 1]:
        row = test.iloc[[i]].drop(columns="pred")
        assert model.predict(row).iloc[0] == test["pred"].iloc[i]
        assert model.predict_proba(row).index[0] == test.index[i]
    shuffled = test.sample(frac=1.0, random_state=1).drop(columns="pred")
    again = model.predict(shuffled)
    assert again.index.equals(shuffled.index)
    assert (again == test["pred"].loc[shuffled.index]).all()  # rows in the caller's order
    full = model.predictions(test.drop(columns="pred"), proba=True, keep=["age"])
    assert full.index.equals(test.index) and (full["age"] == test["age"]).all()


def test_estimator_predictions_are_positional(split) -> None:
    train, test, _ = split
    features = [c for c in train.columns if c not in ("income", "fnlwgt")]
    clf = dpkit.DiffPRFsClassifier(epsilon=2.0, n_estimators=3, max_depth=3, schema=str(SCHEMA),
                                   random_state=KEY).fit(train[features], train["income"])
    out = clf.predict(test[features])
    assert isinstance(out, np.ndarray) and len(out) == len(test)
    proba = clf.predict_proba(test[features])
    assert isinstance(proba, np.ndarray)
    np.testing.assert_array_equal(proba, clf.predict_proba(test[features].reset_index(drop=True)))
