"""Missing values are values in the forest (issue 36 item 3, ``missing_policy: keep``): a numeric
split's missing child, a learned ``missing: false`` column read as its lower bound, a categorical
``(missing)`` leaf — every training row kept, every test row predicted."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.algorithms.forest import dprf
from dpkit.algorithms.forest.dprf import DiffPRFs
from dpkit.algorithms.forest.model import model_from_dict, predict
from dpkit.engine.frame import as_frame
from dpkit.engine.keys import Col, Route
from dpkit.errors import DataError
from dpkit.io.table import encode
from dpkit.privacy import Accountant, make_rng
from dpkit.schema.parse import parse_schema

KEEP = """\
target: label
missing: "?"
missing_policy: keep
columns:
  x:     {type: numeric, bounds: [0, 100], integer: true}
  color:
    type: categorical
    hierarchy:
      Any: [red, green, blue]
  label: {type: categorical, values: ["no", "yes"]}
"""


def frame(n: int, seed: int = 0) -> pd.DataFrame:
    """label = yes iff x > 50, or x is missing (30 % of the rows: '?'); color missing in 10 %."""
    g = np.random.default_rng(seed)
    x = g.integers(0, 101, n)
    gone = g.random(n) < 0.3
    color = g.choice(["red", "green", "blue"], n).astype(object)
    color[g.random(n) < 0.1] = "?"
    xs = x.astype(str).astype(object)
    xs[gone] = "?"
    return pd.DataFrame({"x": xs, "color": color, "label": np.where((x > 50) | gone, "yes", "no")})


def fit(table, **kw) -> DiffPRFs:
    eps, seed = kw.pop("epsilon", 1.0), kw.pop("seed", 1)
    return DiffPRFs(epsilon=eps, **kw).fit(table, "label", accountant=Accountant(eps), rng=make_rng(seed))


def test_route_sends_a_missing_value_to_the_third_child() -> None:
    cols = {"node": np.array([0, 0, 0, 1, 1]), "x": np.array([10.0, 90.0, np.nan, np.nan, 70.0])}
    base = dict(column=("x", "x"), threshold=np.array([50.0, 50.0]), offset=np.array([0, 3]),
                numeric=np.array([True, True]))
    # node 0 has a missing child, node 1 does not (its NaN goes to the <= side, as before)
    got = Route(Col("node"), missing=np.array([True, False]), **base).evaluate(cols)
    assert got.tolist() == [0, 1, 2, 3, 4]
    assert Route(Col("node"), **base).evaluate(cols).tolist() == [0, 1, 0, 3, 4]


def test_a_numeric_split_sets_the_missing_values_apart_once_per_path() -> None:
    s = parse_schema(KEEP)
    table = encode(frame(3000), s, source="keep.csv")
    assert table.n_rows == 3000  # nothing dropped on load
    f = fit(table, epsilon=2000.0, n_trees=2, max_depth=3, features_per_node="all", utility="info-gain")
    x = [i for i, ft in enumerate(f.features_) if ft.name == "x"][0]
    assert f.features_[x].missing == "branch" and f.features_[1 - x].missing == "(missing)"
    for tree in f.model_.trees:
        root = tree[0]
        assert root.feature == x and len(root.children) == 3
        le, gt, gone = (tree[c] for c in root.children)
        # the missing child holds the rows whose x is '?' (all yes), counted like any other
        assert abs(gone.size - 0.3 * 1500) < 0.1 * 1500

        def walk(i: int, apart: bool, in_missing: bool, tree=tree) -> None:
            node = tree[i]
            if node.is_leaf:
                return
            if node.feature == x:
                assert not in_missing  # every x is missing there: no split on x
                assert len(node.children) == (2 if apart else 3)
            for k, c in enumerate(node.children):
                here = node.feature == x
                walk(c, apart or (here and k < 2), in_missing or (here and k == 2))

        walk(0, False, False)
    # Σ of the roots' noisy sizes: every row is in a tree (disjoint sampling)
    assert abs(sum(t[0].size for t in f.model_.trees) - 3000) < 30


@pytest.mark.statistical
def test_the_missing_child_carries_its_signal_into_predictions() -> None:
    """x missing => yes: a forest that keeps those rows predicts yes for a missing x (tolerance:
    ≥ 0.95 of such test rows at ε = 20, seed 3; the old forest dropped them and sent a missing x
    to the larger child, where the rows with x <= 50 ('no') weigh as much as those above)."""
    s = parse_schema(KEEP)
    f = fit(encode(frame(6000), s), epsilon=20.0, n_trees=3, max_depth=2, features_per_node="all", seed=3)
    test = frame(2000, seed=5)
    gone = (test["x"] == "?").to_numpy()
    got = predict(f.model_, test)
    assert len(got) == 2000
    assert (got[gone] == "yes").mean() >= 0.95
    assert (got == test["label"].to_numpy()).mean() >= 0.9


def hand_model() -> dict:
    s = parse_schema(KEEP)
    m = fit(encode(frame(600), s), epsilon=1.0, n_trees=1, max_depth=1).model_.to_dict()
    m["trees"] = [{"size": 300, "feature": "x", "threshold": 50, "children": [
        {"size": 100, "counts": [100, 0]},
        {"size": 150, "feature": "color", "children": {
            "red": {"size": 20, "counts": [20, 0]}, "green": {"size": 60, "counts": [0, 60]},
            "blue": {"size": 40, "counts": [0, 40]}, "(missing)": {"size": 30, "counts": [30, 0]}}},
        {"size": 50, "counts": [0, 50]}]}]
    return m


def test_prediction_follows_the_missing_child_the_missing_leaf_and_the_lower_bound() -> None:
    data = hand_model()
    model = model_from_dict(data)
    assert [f.to_dict().get("missing") for f in model.features] == ["branch", "(missing)"]
    df = pd.DataFrame({"x": ["?", "10", "90", "90"], "color": ["red", "?", "?", "green"]})
    # x missing -> its own child (yes), not the larger one; color missing -> the (missing) leaf
    # (no), not the largest child (green, yes)
    assert list(predict(model, df)) == ["yes", "no", "no", "yes"]
    # a learned missing: false column reads a missing value as its lower bound (x <= 50: no)
    low = copy.deepcopy(data)
    low["features"][0]["missing"] = "low"
    low["trees"][0]["children"].pop()
    assert list(predict(model_from_dict(low), df)) == ["no", "no", "no", "yes"]


def test_the_model_file_checks_the_missing_rule() -> None:
    data = hand_model()
    assert model_from_dict(data).to_dict()["trees"] == data["trees"]  # three children read back
    for change, message in (
        (lambda d: d["features"][0].pop("missing"), "2 children"),
        (lambda d: d["features"][0].__setitem__("missing", "high"), "branch or low"),
        (lambda d: d["features"][1].__setitem__("missing", "(none)"), "missing must be one of its values"),
    ):
        bad = copy.deepcopy(data)
        change(bad)
        with pytest.raises(DataError, match=message):
            model_from_dict(bad)


def test_a_schema_that_does_not_keep_writes_no_missing_rule(schema, table) -> None:
    """The conftest schema says missing_policy: drop: its model keeps its bytes (no key)."""
    m = fit(table, n_trees=2, max_depth=2).model_.to_dict()
    assert all("missing" not in f for f in m["features"])


def hr_table(n: int, seed: int = 0) -> pd.DataFrame:
    """HR-like: three numeric columns 10–30 % empty, '?' in a categorical one; ~55 % of the rows
    hold some missing value."""
    g = np.random.default_rng(seed)
    sat = g.random(n)
    tenure = g.integers(0, 30, n)
    pay = g.lognormal(10, 0.4, n).round()
    dept = g.choice(["sales", "it", "ops"], n).astype(object)
    left = np.where(sat < 0.35, "yes", "no")
    out = pd.DataFrame({"satisfaction": [f"{v:.2f}" for v in sat], "tenure": tenure.astype(str),
                        "pay": pay.astype(int).astype(str), "dept": dept, "left": left})
    for col, share in (("satisfaction", 0.1), ("tenure", 0.3), ("pay", 0.2)):
        out.loc[g.random(n) < share, col] = ""
    out.loc[g.random(n) < 0.2, "dept"] = "?"
    return out


def test_a_forest_without_a_schema_keeps_every_row_and_predicts_every_row(tmp_path: Path, monkeypatch) -> None:
    """The old forest dropped every row with a missing number (here ~55 % of them)."""
    train, test = hr_table(3000), hr_table(500, seed=1)
    seen: list[int] = []
    fit_ = DiffPRFs.fit

    def spy(self, table, target, **kw):  # the exact rows the forest is grown on
        seen.append(int(as_frame(table).counts([Col(target)], (2,)).sum()))
        return fit_(self, table, target, **kw)

    monkeypatch.setattr(dprf.DiffPRFs, "fit", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = dpkit.forest(train, target="left", epsilon=1.0, delta=1e-6, seed=4)
        test.index = pd.RangeIndex(1000, 1500)
        got = f.predict(test.drop(columns="left"))
    assert seen == [3000]
    kept = f.report["release"]["missing_values"]
    assert kept["policy"] == "keep" and abs(kept["noisy_records"] - 3000) < 150
    assert set(kept["features"]) == {"satisfaction", "tenure", "pay", "dept"}
    assert got.index.tolist() == test.index.tolist() and got.notna().all()


def test_the_estimator_keeps_rows_with_nan(monkeypatch) -> None:
    g = np.random.default_rng(2)
    X = pd.DataFrame({"a": g.normal(50, 10, 3000).round(1), "b": g.integers(0, 10, 3000).astype(float)})
    y = (X["a"] > 50).astype(int).to_numpy()
    X.loc[g.random(3000) < 0.4, "a"] = np.nan
    seen: list[int] = []
    fit_ = DiffPRFs.fit

    def spy(self, table, target, **kw):
        seen.append(int(as_frame(table).counts([Col(target)], (2,)).sum()))
        return fit_(self, table, target, **kw)

    monkeypatch.setattr(dprf.DiffPRFs, "fit", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = dpkit.DiffPRFsClassifier(epsilon=1.0, delta=1e-6, random_state=3).fit(X, y)
        got = clf.predict(X)
    assert seen == [3000] and len(got) == 3000


def test_the_missing_child_is_there_whatever_the_data_holds() -> None:
    """The missing child is a public cell: a table with no missing x gets it too (a child that
    appeared only when some record is missing would reveal that record), and every record is
    in one child (the children's noisy sizes add up to about the node's)."""
    s = parse_schema(KEEP)
    full = frame(2000)
    x = np.random.default_rng(1).integers(0, 101, 2000)
    full["x"], full["label"] = x.astype(str), np.where(x > 50, "yes", "no")  # no '?' left
    f = fit(encode(full, s), epsilon=2000.0, n_trees=1, max_depth=1, features_per_node="all")
    (tree,) = f.model_.trees
    assert f.features_[tree[0].feature].name == "x" and len(tree[0].children) == 3
    le, gt, gone = (tree[c] for c in tree[0].children)
    assert gone.size <= 2 and abs(le.size + gt.size - 2000) <= 4


def test_a_column_without_established_missing_values_reads_them_as_its_lower_bound() -> None:
    """``missing: false`` (a learned schema's flag): the rows are kept, a missing x is x = lo in
    training and in prediction, from strings or from an encoded table alike."""
    s = parse_schema(KEEP.replace("integer: true}", "integer: true, missing: false}"))
    assert s.columns["x"].holds_missing is False
    df = frame(2000)
    table = encode(df, s)
    assert table.n_rows == 2000 and np.isnan(table.columns["x"]).any()
    f = fit(table, epsilon=50.0, n_trees=2, max_depth=2, features_per_node="all")
    assert f.features_[0].missing == "low"
    assert all(len(n.children) in (0, 2, 4) for t in f.model_.trees for n in t)  # no missing child
    assert np.array_equal(predict(f.model_, table), predict(f.model_, df.drop(columns="label")))
    as_lo = df.drop(columns="label").replace({"x": {"?": "0"}})
    assert np.array_equal(predict(f.model_, df.drop(columns="label")), predict(f.model_, as_lo))


def test_a_dataframe_none_predicts_as_the_empty_cell_of_a_csv(tmp_path: Path) -> None:
    """A model trained on a DataFrame learns an empty categorical cell as '' (the readers' empty
    cell); predicting on the DataFrame must read None/NaN the same way, not as 'None'/'nan'
    (found by bench/notebook_check.py: 91 of 2,700 predictions differed from the CSV's)."""
    import numpy as np
    import pandas as pd

    import dpkit
    from dpkit.algorithms.forest.model import Feature, ForestModel

    feat = Feature(name="d", kind="categorical", categories=("", "a", "(other)"), other="(other)")
    model = ForestModel(target="y", classes=("n", "y"), features=[feat], trees=[])
    got = model.encode_frame(pd.DataFrame({"d": ["a", None, np.nan, "zz"]}))
    assert got[:, 0].tolist() == [1.0, 0.0, 0.0, 2.0]
    assert dpkit  # the public package imports with the model module
