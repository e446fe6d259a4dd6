"""The ledger takes any data (issue 37 item 1): a path, a pandas DataFrame, a numpy array;
``dpkit.Ledger(path)`` creates its file on the first ``register(name, data, cap)``; every
private function and estimator books under ``ledger=``; an estimator books against the data
set registered as its ``X`` (a fold of it too); a fit on rows an earlier fit used warns with the
ε they have spent, with or without a ledger."""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import KFold, cross_val_score

import dpkit
from dpkit.api.fits import forget_fits

REPO = Path(__file__).resolve().parents[2]
IRIS = REPO / "sample_data" / "iris" / "iris.csv"
SCHEMA = REPO / "taxonomies" / "iris.yaml"
BOUNDS = [(0, 10)] * 4


@pytest.fixture(autouse=True)
def _fresh_session(monkeypatch):
    """Each test starts a session: no earlier fit, no ledger in the environment."""
    monkeypatch.delenv("DPKIT_LEDGER", raising=False)
    monkeypatch.delenv("DPKIT_RESERVATION", raising=False)
    forget_fits()
    yield
    forget_fits()


@pytest.fixture
def iris() -> pd.DataFrame:
    return pd.read_csv(IRIS)


def _leaks(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, dpkit.PrivacyLeakWarning)]


def test_a_new_ledger_is_created_by_its_first_register(tmp_path, iris) -> None:
    book = dpkit.Ledger(tmp_path / "new.db")
    assert not book.path.exists()
    assert book.register("iris", iris, cap=2) == "iris"
    assert stat.S_IMODE(os.stat(book.path).st_mode) == 0o600
    (status,) = book.status()
    assert (status.name, status.cap, status.runs) == ("iris", 2.0, 0)


def test_publish_a_dataframe_under_a_ledger(tmp_path, iris) -> None:
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris", iris, cap=2)
    dpkit.publish(iris, schema=SCHEMA, epsilon=1.5, ledger=book)
    (run,) = book.history()
    assert run["dataset"] == "iris" and run["status"] == "complete"
    with pytest.raises(dpkit.BudgetExceeded, match="remaining 0.5"):
        dpkit.publish(iris, schema=SCHEMA, epsilon=1.0, ledger=book)
    assert len(book.history()) == 1  # refused: nothing booked
    other = iris.copy()
    other.loc[0, "species"] = "virginica"  # one record changed: another data set
    with pytest.raises(dpkit.LedgerError, match="not registered"):
        dpkit.publish(other, schema=SCHEMA, epsilon=0.1, ledger=book)


def test_register_order_of_0_4_still_works_with_a_deprecation(tmp_path) -> None:
    book = dpkit.Ledger(tmp_path / "l.db")
    with pytest.warns(DeprecationWarning, match=r"register\(name, data, cap\)"):
        assert book.register(IRIS, "iris", 2) == "iris"
    versions = []
    for i in range(2):
        versions.append(tmp_path / f"v{i}.csv")
        versions[-1].write_text(IRIS.read_text() + "5.0,3.0,1.5,0.2,setosa\n" * (i + 1))
    with pytest.warns(DeprecationWarning):
        book.register(data_path=versions[0], name="kw", cap=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        book.register("new", versions[1], 1)  # the new order: no warning
    assert [s.name for s in book.status()] == ["iris", "kw", "new"]
    with pytest.raises(dpkit.DpkitUsageError, match=r"register\(name, data, cap\)"):
        book.register(pd.read_csv(IRIS))  # data without a name: one clear error (0.4: a raw TypeError)


def test_a_subset_of_a_registered_frame_is_that_data_set(tmp_path, iris) -> None:
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris", iris, cap=2)
    with pytest.raises(dpkit.LedgerError, match="all rows of data set 'iris'"):
        book.register("first-half", iris.head(75), cap=2)  # the same people, a second cap
    assert book.register("iris", iris.head(75), cap=2, exist_ok=True) == "iris"
    dpkit.publish(iris.sample(100, random_state=0), schema=SCHEMA, epsilon=0.5, ledger=book)
    assert [r["dataset"] for r in book.history()] == ["iris"]


def test_estimators_book_against_the_x_registered(tmp_path, iris) -> None:
    X, y = iris.drop(columns="species"), iris["species"]
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris-x", X, cap=3)
    book.register("iris-array", X.to_numpy(), cap=3)
    clf = dpkit.DiffPRFsClassifier(epsilon=1.0, n_estimators=2, max_depth=2, schema=SCHEMA, ledger=book)
    clf.fit(X, y)
    km = dpkit.DPQTKMeans(n_clusters=3, epsilon=0.5, bounds=BOUNDS, ledger=book).fit(X.to_numpy())
    runs = book.history()
    assert [(r["dataset"], r["command"], r["epsilon_reserved"]) for r in runs] == [
        ("iris-x", "forest train", 1.0), ("iris-array", "cluster", 0.5)]
    assert km.cluster_centers_.shape == (3, 4)
    with pytest.raises(dpkit.LedgerError, match="no data set holds all of its rows"):
        # X with y is not the X registered: the estimator books against its X
        dpkit.DPQTKMeans(n_clusters=3, epsilon=0.5, bounds=BOUNDS + [(0, 10)], ledger=book).fit(
            X.assign(y=1).to_numpy())


def test_cross_validation_books_each_fold_and_warns(tmp_path, iris) -> None:
    X, y = iris.drop(columns="species"), iris["species"]
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris", X, cap=10)
    clf = dpkit.DiffPRFsClassifier(epsilon=1.0, n_estimators=2, max_depth=2, schema=SCHEMA, ledger=book)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_val_score(clf, X, y, cv=KFold(3, shuffle=True, random_state=0))
    runs = book.history()
    assert len(runs) == 3 and {r["dataset"] for r in runs} == {"iris"}  # each fold: a subset of X
    assert book.status()[0].spent == pytest.approx(3.0)
    leaks = _leaks(caught)
    assert len(leaks) == 2  # the second and third folds overlap the earlier ones
    assert {w.filename for w in caught if issubclass(w.category, dpkit.PrivacyLeakWarning)} == {__file__}
    assert "up to epsilon=2 in all" in leaks[0] and "up to epsilon=3 in all" not in leaks[0]


def test_refit_warns_without_a_ledger_with_the_epsilon_spent(iris) -> None:
    X = iris.drop(columns="species").to_numpy()
    km = dpkit.DPQTKMeans(n_clusters=3, epsilon=0.5, bounds=BOUNDS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        km.fit(X[:75])
        km.fit(X[75:])  # disjoint rows: parallel composition, no warning
        assert _leaks(caught) == []
        km.fit(X)  # every row again
        km.fit(X[:10])
    first, second = _leaks(caught)
    assert "spent epsilon=0.5" in first and "up to epsilon=1 in all" in first
    assert "up to epsilon=1.5 in all" in second


def test_another_estimator_on_the_same_rows_warns(iris) -> None:
    X, y = iris.drop(columns="species"), iris["species"]
    dpkit.DPQTKMeans(n_clusters=3, epsilon=0.5, bounds=BOUNDS).fit(X)
    with pytest.warns(dpkit.PrivacyLeakWarning, match=r"up to epsilon=1\.5 in all"):
        dpkit.DiffPRFsClassifier(epsilon=1.0, n_estimators=2, max_depth=2, schema=SCHEMA).fit(X, y)


def test_a_refused_fit_spends_nothing(tmp_path, iris) -> None:
    X, y = iris.drop(columns="species"), iris["species"]
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris", X, cap=1)
    clf = dpkit.DiffPRFsClassifier(epsilon=2.0, n_estimators=2, schema=SCHEMA, ledger=book)
    with pytest.raises(dpkit.BudgetExceeded):
        clf.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpkit.PrivacyLeakWarning)
        clf.set_params(epsilon=1.0).fit(X, y)  # the refused fit counted nothing
    assert book.status()[0].spent == pytest.approx(1.0)


def test_a_keyed_fit_gives_the_same_model_with_and_without_a_ledger(tmp_path, iris) -> None:
    X, y = iris.drop(columns="species"), iris["species"]
    key = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris", X, cap=5)
    params = dict(epsilon=1.0, n_estimators=2, max_depth=2, schema=SCHEMA, random_state=key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpkit.PrivacyLeakWarning)
        plain = dpkit.DiffPRFsClassifier(**params).fit(X, y).predict_proba(X)
        booked = dpkit.DiffPRFsClassifier(**params, ledger=book).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(plain, booked)


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("abc")), min_size=2, max_size=30, unique=True),
       st.data())
def test_any_subset_of_a_registered_frame_books_against_it(rows, data) -> None:
    """Property: a run on any non-empty subset of a registered frame's rows (in any order) finds
    its data set; a frame with one row that is not in it does not."""
    import tempfile

    frame = pd.DataFrame(rows, columns=["n", "c"])
    picked = data.draw(st.lists(st.sampled_from(range(len(frame))), min_size=1, unique=True))
    with tempfile.TemporaryDirectory() as tmp:
        book = dpkit.Ledger(Path(tmp) / "l.db")
        book.register("d", frame, cap=1)
        assert book.check(data_path=frame.iloc[picked], epsilon=0.5)
        stranger = pd.DataFrame([(9, "z")], columns=["n", "c"])
        with pytest.raises(dpkit.LedgerError, match="no data set holds all of its rows"):
            book.check(data_path=pd.concat([frame.iloc[picked], stranger]), epsilon=0.5)
        with pytest.raises(dpkit.LedgerError, match="no data set holds"):  # other types: other data
            book.check(data_path=frame.iloc[picked].astype({"n": float}), epsilon=0.5)


def test_repr(tmp_path) -> None:
    assert repr(dpkit.Ledger(tmp_path / "l.db")) == f"Ledger({str(tmp_path / 'l.db')!r})"
