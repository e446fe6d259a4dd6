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
    model = dpkit.forest(train, schema=SCHEMA, epsilon=2.0, n_estimators=5, max_depth=3, random_state=KEY)
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


# ------------------------------------------------------------------------- keywords

SMALL = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(200)


@pytest.mark.parametrize("call", [
    lambda kw: dpkit.publish(SMALL, schema=SCHEMA, epsilon=1.0, **kw),
    lambda kw: dpkit.forest(SMALL, schema=SCHEMA, epsilon=1.0, **kw),
    lambda kw: dpkit.cluster(SMALL, columns=["age"], n_clusters=2, epsilon=1.0, bounds="0:100", **kw),
])
@pytest.mark.parametrize("value", [None, 3, "x"])
def test_an_unknown_keyword_is_refused_whatever_its_value(call, value) -> None:
    # (0.4's example was missing=None; since issue 36 publish and cluster take missing=)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'") as info:
        call({"colour": value})
    assert isinstance(info.value, dpkit.DpkitUsageError) and info.value.param == "colour"


def test_the_closest_keyword_is_named(split) -> None:
    with pytest.raises(TypeError, match="'levls'; did you mean 'levels'"):
        dpkit.publish(SMALL, schema=SCHEMA, epsilon=1.0, levls=None)
    with pytest.raises(TypeError, match="'seeds'; did you mean 'random_state'"):
        dpkit.cluster(SMALL, columns=["age"], n_clusters=2, epsilon=1.0, bounds="0:100", seeds=None)
    _, test, model = split
    # a DataFrame ignores the reading options, but a misspelt one is not silently dropped
    with pytest.raises(TypeError, match="'delimeter'; did you mean 'delimiter'"):
        model.predict(test, delimeter=None)


# ------------------------------------------------------------------------- errors


@pytest.mark.parametrize(("kw", "name"), [
    (dict(epsilon=0), "epsilon"), (dict(epsilon=-1), "epsilon"), (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon="lots"), "epsilon"), (dict(epsilon=1.0, delta=2, schema=None, target="income"), "delta"),
    (dict(epsilon=1.0, random_state=-3), "random_state")])
def test_bad_values_are_value_errors(kw, name) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be") as info:
        dpkit.publish(SMALL, **{"schema": SCHEMA, **kw})
    assert isinstance(info.value, dpkit.DpkitUsageError) and info.value.param == name


def test_every_exception_lives_in_errors() -> None:
    import ast

    from dpkit import errors, ledger
    from dpkit.privacy import accountant

    package = REPO / "dpkit"
    for path in package.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                assert not any(b.endswith(("Error", "Exception", "Exceeded", "Warning")) for b in bases), \
                    f"{path.relative_to(REPO)}: class {node.name} belongs in dpkit/errors.py"
    # the old homes still import them
    assert accountant.BudgetExceededError is errors.BudgetExceededError
    assert ledger.BudgetExceeded is errors.BudgetExceeded is dpkit.BudgetExceeded
    assert issubclass(errors.DataError, ValueError) and issubclass(errors.SchemaError, ValueError)
    assert issubclass(errors.ParameterTypeError, TypeError) and issubclass(errors.ParameterTypeError, ValueError)
    assert not issubclass(errors.BudgetExceeded, ValueError)  # a refusal, about no value


def test_one_rule_per_parameter() -> None:
    from dpkit import validate
    from dpkit.algorithms.cluster.common import check_k
    from dpkit.api.domain import check_delta, check_share
    from dpkit.ledger import _check_delta
    from dpkit.privacy import check_seed, validate_epsilon

    assert check_delta is validate.delta and check_share is validate.share and check_seed is validate.seed
    assert validate_epsilon is validate.epsilon
    for bad in (0, 2, -1e-9, float("nan"), "x", True, 1.1e-3):
        with pytest.raises(ValueError, match="^delta must be"):
            check_delta(bad)
    assert _check_delta(0) == 0.0 and _check_delta(1e-6) == 1e-6
    with pytest.raises(ValueError, match="^delta must be 0 .pure epsilon. or"):
        _check_delta(0.5)  # the ledger's rule is a run's rule (it said [0, 1) before)
    with pytest.raises(TypeError, match="^k must be ≥ 1"):
        check_k(2.5)
    with pytest.raises(ValueError, match="^k must be ≥ 1"):
        dpkit.kanon_select(SMALL, k=0, schema=SCHEMA, target="income")


# ------------------------------------------------------------------------- typing


def test_the_package_is_typed() -> None:
    import inspect
    import tomllib

    assert (REPO / "dpkit" / "py.typed").exists()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["dpkit"]  # it ships
    assert {"DataLike", "SeedLike", "LedgerLike", "ReadOptions"} <= set(dpkit.__all__)
    for fn in (dpkit.publish, dpkit.forest, dpkit.cluster, dpkit.infer_schema):
        params = inspect.signature(fn).parameters
        assert params["data"].annotation == "DataLike" and params["random_state"].annotation == "SeedLike"
        assert params["ledger"].annotation == "LedgerLike"
    # one ReadOptions, read by every function
    opts = dpkit.ReadOptions(str(ADULT))
    assert len(dpkit.publish(opts, schema=SCHEMA, epsilon=1.0, random_state=KEY).table) > 0


# ------------------------------------------------------------------------- messages


def test_a_wrong_delimiter_is_named(tmp_path) -> None:
    semi = tmp_path / "semi.csv"
    semi.write_text("a;b;c;y\n1;2;3;no\n")
    frame = pd.read_csv(semi)  # read with the default ',': one column 'a;b;c;y'
    with pytest.raises(dpkit.DpkitUsageError, match=r"holds ';': the delimiter is likely wrong") as info:
        dpkit.publish(frame, target="y", epsilon=1.0, delta=1e-6)
    assert info.value.param == "target"


def test_the_list_of_columns_says_it_stops() -> None:
    from dpkit.console import have_columns

    wide = [f"c{i}" for i in range(30)]
    assert have_columns(wide) == f"(have: {', '.join(wide[:12])}, … (30 in all))"
    assert have_columns(["a", "b"]) == "(have: a, b)"
    with pytest.raises(dpkit.DpkitUsageError, match=r"c11, … \(30 in all\)"):
        dpkit.infer_schema(pd.DataFrame({c: ["1"] * 5 for c in wide}), target="nope", epsilon=1.0, delta=1e-6)


def test_an_empty_dataframe_is_refused_clearly() -> None:
    empty = SMALL.head(0)
    for call in (lambda: dpkit.publish(empty, target="income", epsilon=1.0, delta=1e-6),
                 lambda: dpkit.publish(empty, schema=SCHEMA, epsilon=1.0),
                 lambda: dpkit.forest(empty, schema=SCHEMA, epsilon=1.0),
                 lambda: dpkit.cluster(empty, columns=["age"], n_clusters=2, epsilon=1.0, bounds="0:100")):
        with pytest.raises(dpkit.DataError, match=r"^<DataFrame>: has no rows .*nothing to release"):
            call()


def test_a_target_too_rare_to_learn_says_what_to_do() -> None:
    with pytest.raises(dpkit.DataError, match=r"no class of the target 'income' .*values=") as info:
        dpkit.publish(SMALL.head(30), target="income", epsilon=1.0, delta=1e-6)
    assert "ignore" not in str(info.value)  # the target cannot be left out
