"""A forest trained on a DataFrame answers in the target's own dtype (issue 37): a 0/1 int,
bool or float target gives 0/1 predictions, not '0'/'1', so ``(pred == test.y).mean()`` is the
accuracy; a CSV-trained model keeps text labels and the bytes of its JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.algorithms.forest.model import load_model

pytestmark = pytest.mark.filterwarnings("ignore::dpkit.DpkitWarning")

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


def _table(n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(["x", "z"], n)})
    df["y"] = (df["a"] > 0).astype(int)
    return df


@pytest.mark.parametrize("dtype", ["int64", "bool", "float64", "Int64"])
def test_predictions_in_the_targets_dtype(dtype: str, tmp_path: Path) -> None:
    df = _table()
    df["y"] = df["y"].astype(dtype)
    model = dpkit.forest(df, target="y", epsilon=2.0, delta=1e-6, n_estimators=5, max_depth=3, random_state=KEY,
                         output=tmp_path / "m.json")
    pred = model.predict(df)
    assert str(pred.dtype) == dtype
    assert (pred == df["y"]).mean() > 0.8  # compared with the caller's own column, not '0' with 0
    proba = model.predict_proba(df)
    assert model.labels == sorted(df["y"].unique().tolist())
    # p_<class> for every dtype (issue 43: the columns were the labels themselves for a typed target)
    assert list(proba.columns) == [f"p_{c}" for c in model.model.classes]
    assert (proba.to_numpy().argmax(axis=1) == [model.labels.index(v) for v in pred]).all()
    # the dtype travels with the model file
    back = dpkit.load_forest(tmp_path / "m.json")
    assert back.model.target_dtype == dtype
    pd.testing.assert_series_equal(back.predict(df), pred)
    assert str(back.predictions(df, proba=True)["y"].dtype) == dtype


def test_text_target_and_csv_model_stay_text(tmp_path: Path) -> None:
    model = dpkit.forest(ADULT, schema=SCHEMA, epsilon=1.0, n_estimators=3, max_depth=2, random_state=KEY, output=tmp_path / "m.json")
    assert model.model.target_dtype is None
    assert "target_dtype" not in json.loads((tmp_path / "m.json").read_text())
    assert pd.api.types.is_string_dtype(model.predict(ADULT).dtype)  # object on pandas 2, str on 3
    assert all(c.startswith("p_") for c in model.predict_proba(ADULT).columns)
    df = _table().assign(y=lambda d: d["y"].map({0: "no", 1: "yes"}))
    text = dpkit.forest(df, target="y", epsilon=2.0, delta=1e-6, n_estimators=3, max_depth=2, random_state=KEY)
    assert text.model.target_dtype is None and set(text.predict(df)) <= {"no", "yes"}


def test_a_bad_target_dtype_in_a_model_file_is_refused(tmp_path: Path) -> None:
    df = _table()
    dpkit.forest(df, target="y", epsilon=2.0, delta=1e-6, n_estimators=3, max_depth=2, random_state=KEY, output=tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["target_dtype"] = "datetime64[ns]"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(dpkit.DataError, match="target_dtype"):
        load_model(tmp_path / "bad.json")
