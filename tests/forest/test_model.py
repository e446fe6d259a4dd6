"""The model file: round trip, clear errors, and prediction from tables of strings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpkit.algorithms.forest import (
    DiffPRFs,
    load_model,
    predict,
    predict_frame,
    predict_proba,
    save_model,
)
from dpkit.algorithms.forest.model import FORMAT_VERSION, model_from_dict
from dpkit.errors import DataError, DpkitWarning
from dpkit.privacy import Accountant, make_rng

from .conftest import make_frame


@pytest.fixture()
def model(table):
    return DiffPRFs(epsilon=5.0, n_trees=4, max_depth=3).fit(
        table, "label", accountant=Accountant(5.0), rng=make_rng(2)).model_


def test_round_trip_keeps_every_prediction(model, tmp_path) -> None:
    path = tmp_path / "model.json"
    save_model(model, path)
    data = json.loads(path.read_text())
    assert data["format_version"] == FORMAT_VERSION and data["classes"] == ["no", "yes"]
    loaded = load_model(path)
    df = make_frame(300, seed=4)
    assert np.array_equal(predict_proba(model, df), predict_proba(loaded, df))
    assert loaded.to_dict()["trees"] == data["trees"]
    # readable: splits name their feature, categorical children their values
    def walk(node):
        if "counts" in node:
            return
        assert node["feature"] in {"x", "w", "color"}
        kids = node["children"]
        if node["feature"] == "color":
            assert list(kids) == ["red", "green", "blue"]
            kids = list(kids.values())
        for k in kids:
            walk(k)
    for tree in data["trees"]:
        walk(tree)


def test_predict_api(model, table) -> None:
    df = make_frame(200, seed=8)
    labels = predict(model, df)
    proba = predict_proba(model, df)
    assert labels.shape == (200,) and set(labels) <= {"no", "yes"}
    assert proba.shape == (200, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert list(predict_frame(model, df)) == list(labels)
    # an EncodedTable works too, with the same answers as its string form
    assert len(predict(model, table)) == table.n_rows


def test_missing_token_follows_the_largest_child(model) -> None:
    data = model.to_dict()
    data["trees"] = [{"size": 110, "feature": "x", "threshold": 50, "children": [
        {"size": 10, "counts": [10, 0]},
        {"size": 100, "feature": "color", "children": {
            "red": {"size": 20, "counts": [20, 0]},
            "green": {"size": 70, "counts": [0, 70]},
            "blue": {"size": 10, "counts": [10, 0]}}}]}]
    hand = model_from_dict(data)
    df = make_frame(6, seed=3)
    df["x"] = ["10", "?", "90", "?", "90", "60"]
    df["color"] = ["red", "red", "red", "?", "blue", "green"]
    # row 1: x missing -> the larger child (size 100), then red -> no; row 3: x and color
    # missing -> size 100, then green (size 70) -> yes
    assert list(predict(hand, df)) == ["no", "no", "no", "yes", "no", "yes"]
    assert predict_proba(hand, df)[3].tolist() == [0.0, 1.0]
    assert len(predict(model, df)) == 6


def test_unseen_category_and_missing_column(model, monkeypatch) -> None:
    df = make_frame(20, seed=3)
    df.loc[7, "color"] = "purple"
    # an unknown category is a missing value, never a refusal (issue 43): every row is scored, one
    # warning; a log gets neither the line nor the value (issue 38), the owner's terminal both
    with pytest.warns(DpkitWarning, match=r"test.csv: every row scored; values not in the schema were read as "
                                          r"missing in 'color'") as rec:
        got = predict(model, df, source="test.csv")
    assert len(got) == 20 and "purple" not in str(rec[0].message) and "line 9" not in str(rec[0].message)
    missing = df.copy()
    missing.loc[7, "color"] = "?"  # the model's missing token: the same prediction
    assert list(got) == list(predict(model, missing))
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)
    with pytest.warns(DpkitWarning, match=r"'color': 1 value\(s\) not in its taxonomy \('purple'; the first on line 9\)"):
        predict(model, df, source="test.csv")
    with pytest.raises(DataError, match=r"'w' used by the model are not in the header"):
        predict(model, make_frame(20).drop(columns=["w"]), source="test.csv")
    bad = make_frame(5)
    bad.loc[2, "x"] = "ten"
    with pytest.warns(DpkitWarning, match=r"'x': 1 value\(s\) not a number \('ten'"):
        assert len(predict(model, bad)) == 5


def test_other_format_version(model, tmp_path) -> None:
    data = model.to_dict()
    data["format_version"] = FORMAT_VERSION + 1
    data["dpkit_version"] = "9.9.9"
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"format version 2 \(written by dpkit 9.9.9\).*reads format version 1"):
        load_model(path)


def test_truncated_and_bad_files(model, tmp_path) -> None:
    path = tmp_path / "m.json"
    save_model(model, path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(DataError, match="truncated"):
        load_model(path)
    path.write_text("")
    with pytest.raises(DataError, match="empty"):
        load_model(path)
    path.write_text('{"some": "json"}')
    with pytest.raises(DataError, match="not a dpkit forest model"):
        load_model(path)
    with pytest.raises(DataError, match="file not found"):
        load_model(tmp_path / "nope.json")


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["trees"][0].update(feature="nope", children=[]), "unknown feature"),
    (lambda d: d.update(classes=["only"]), "at least two"),
    (lambda d: d.update(trees=[]), "no trees"),
    (lambda d: d["features"][0].pop("bounds", None) or d["features"][0].pop("values", None), "needs"),
    (lambda d: d.pop("target"), "missing key 'target'"),
])
def test_corrupt_structure(model, mutate, message) -> None:
    data = json.loads(json.dumps(model.to_dict()))
    data["trees"][0] = data["trees"][0] if "feature" in data["trees"][0] else {"size": 1, "feature": "x",
                                                                                  "threshold": 1, "children": []}
    mutate(data)
    with pytest.raises(DataError, match=message):
        model_from_dict(data, source="m.json")
