"""``dpkit.forest``, ``dpkit.load_forest``, ``dpkit.cluster`` and the scikit-learn estimators."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline

import dpkit

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
ADULT_TEST = REPO / "sample_data" / "adult" / "test.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
S1 = REPO / "sample_data" / "clustering" / "s1.csv"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


@pytest.fixture(scope="module")
def trained() -> dpkit.Forest:
    return dpkit.forest(ADULT, schema=SCHEMA, epsilon=1.0, n_estimators=5, max_depth=3, random_state=11)


def test_forest_report_and_predictions(trained: dpkit.Forest, tmp_path: Path) -> None:
    rep = trained.report
    assert rep["command"] == "forest train" and rep["parameters"]["trees"] == 5
    assert rep["privacy"]["epsilon_spent"] <= 1.0 + 1e-9 and len(rep["spends_by_tree"]) == 5
    proba = trained.predict_proba(ADULT_TEST)
    assert list(proba.columns) == ["p_<=50K", "p_>50K"]
    assert np.allclose(proba.sum(axis=1), 1.0)
    labels = trained.predict(ADULT_TEST)
    assert labels.name == "income" and set(labels) <= {"<=50K", ">50K"}
    assert (labels == np.where(proba["p_>50K"] > proba["p_<=50K"], ">50K", "<=50K")).mean() > 0.999
    trained.write(tmp_path / "m.json")
    back = dpkit.load_forest(tmp_path / "m.json")
    assert back.report is None and back.privacy["epsilon_budget"] == 1.0
    pd.testing.assert_frame_equal(back.predict_proba(ADULT_TEST), proba)


def test_forest_defaults_live_in_the_estimator() -> None:
    from dpkit.algorithms.forest.dprf import DiffPRFs

    small = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(400)
    f = dpkit.forest(small, schema=SCHEMA, epsilon=1.0, random_state=1)
    # the default shape is the estimator's "auto": resolved from noisy class counts, reported
    assert DiffPRFs(epsilon=1).n_trees == DiffPRFs(epsilon=1).max_depth == "auto"
    shape = f.report["release"]["shape"]
    assert shape["trees"] == shape["depth"] == "auto" and len(shape["noisy_class_counts"]) == 2
    assert [f.report["parameters"]["trees"], f.report["parameters"]["depth"]] == shape["resolved"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tree'; did you mean 'n_estimators'") as info:
        dpkit.forest(small, schema=SCHEMA, epsilon=1.0, tree=3)
    assert info.value.param == "tree"


def test_cluster_returns_centroids_histogram_and_assignment() -> None:
    c = dpkit.cluster(S1, columns=["x", "y"], n_clusters=15, epsilon=1.0, bounds="0:1e6,0:1e6", random_state=2)
    assert list(c.centroids.columns) == ["cluster_not_private", "x", "y"] and len(c.centroids) == 15
    assert c.report["parameters"]["bounds_source"] == "--bounds" and c.histogram is not None
    assigned = c.assign(S1)
    assert len(assigned) == len(pd.read_csv(S1)) and set(assigned[c.label]) <= {str(i) for i in range(15)}
    df = pd.read_csv(S1)
    same = dpkit.cluster(df, columns=["x", "y"], n_clusters=15, epsilon=1.0, bounds=[(0, 1e6), (0, 1e6)], random_state=2)
    np.testing.assert_array_equal(same.centroids, c.centroids)  # a plain seed: same noise whatever the input form
    # no bounds, no schema: a share of ε learns them (pure ε-DP), the report says how
    learned = dpkit.cluster(S1, columns=["x", "y"], n_clusters=3, epsilon=1.0, random_state=KEY)
    params = learned.report["parameters"]
    assert params["bounds_source"].startswith("learned under DP") and params["domain_share"] == 0.1
    assert learned.report["privacy"]["model"] == "epsilon-dp" and learned.report["privacy"]["delta"] == 0
    domain = [s for s in learned.report["spends"] if s["step"].startswith("domain:")]
    assert [s["step"] for s in domain] == ["domain: x bounds", "domain: y bounds"]
    assert sum(s["epsilon"] for s in domain) == pytest.approx(0.1)
    assert learned.report["privacy"]["epsilon_spent"] <= 1.0 + 1e-9
    (xlo, xhi), (ylo, yhi) = params["bounds"]
    assert xlo < xhi and ylo < yhi and learned.label == "cluster"
    lo, hi = np.array([xlo, ylo]), np.array([xhi, yhi])
    centres = learned.centroids[learned.columns].to_numpy()
    assert np.all(centres >= lo) and np.all(centres <= hi)  # the points were clipped
    with pytest.raises(dpkit.DpkitUsageError, match="domain_share applies only"):
        dpkit.cluster(S1, columns=["x", "y"], n_clusters=3, epsilon=1.0, bounds="0:1e6,0:1e6", domain_share=0.2)
    with pytest.raises(dpkit.DpkitUsageError, match="domain_share must be a number between 0"):
        dpkit.cluster(S1, columns=["x", "y"], n_clusters=3, epsilon=1.0, domain_share=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        leaky = dpkit.cluster(S1, columns=["x", "y"], n_clusters=3, epsilon=1.0, allow_data_bounds=True, random_state=1)
    assert any(issubclass(w.category, dpkit.PrivacyLeakWarning) for w in seen)
    assert leaky.report["privacy"]["model"] == "none" and leaky.label == "cluster_not_private"


# ------------------------------------------------------------------------- scikit-learn


def _adult_xy(n: int = 3000) -> tuple[pd.DataFrame, pd.Series]:
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    df = df[~(df == "?").any(axis=1)].head(n).reset_index(drop=True)
    return df.drop(columns=["income", "fnlwgt"]), df["income"]


def test_classifier_follows_sklearn_conventions() -> None:
    X, y = _adult_xy()
    clf = dpkit.DiffPRFsClassifier(epsilon=1.0, n_estimators=5, schema=str(SCHEMA), random_state=4)
    params = copy.deepcopy(clf.get_params())
    assert clone(clf).get_params() == params
    with pytest.raises(NotFittedError):
        clf.predict(X)
    assert clf.fit(X, y) is clf
    assert clf.get_params() == params  # fit leaves the parameters as given
    assert list(clf.classes_) == ["<=50K", ">50K"] and clf.n_features_in_ == X.shape[1]
    assert clf.predict_proba(X).shape == (len(X), 2)
    assert clf.report_["privacy"]["epsilon_spent"] <= 1.0 + 1e-9
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.shape == (3,) and (scores > 0.6).all()
    pipe = Pipeline([("forest", clone(clf))]).fit(X, y)
    assert len(pipe.predict(X.head(7))) == 7


def test_classifier_needs_public_domains_and_maps_labels_back() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(2000, 2))
    y = (X[:, 0] > 5).astype(int)
    with pytest.raises(dpkit.DpkitUsageError, match="no public domain"):
        dpkit.DiffPRFsClassifier(classes=[0, 1]).fit(X, y)
    with pytest.raises(dpkit.DpkitUsageError, match="^classes is required"):
        dpkit.DiffPRFsClassifier(bounds=[(0, 10), (0, 10)]).fit(X, y)
    clf = dpkit.DiffPRFsClassifier(epsilon=5.0, n_estimators=5, bounds=[(0, 10), (0, 10)], classes=[0, 1],
                                   random_state=1).fit(X, y)
    assert list(clf.classes_) == [0, 1] and clf.score(X, y) > 0.8  # int labels, not their text


def test_dpqt_kmeans_estimator() -> None:
    pts = pd.read_csv(S1)[["x", "y"]].to_numpy()
    km = dpkit.DPQTKMeans(n_clusters=15, epsilon=1.0, bounds=[(0, 1e6), (0, 1e6)], random_state=1)
    params = km.get_params()
    assert km.fit(pts) is km and km.get_params() == params and clone(km).get_params() == params
    assert km.cluster_centers_.shape == (15, 2) and km.labels_.shape == (len(pts),)
    np.testing.assert_array_equal(km.predict(pts), km.labels_)
    np.testing.assert_array_equal(km.fit_predict(pts), km.labels_)
    # no bounds: learned in the fit with a share of ε, as dpkit.cluster does (pure ε-DP)
    learned = dpkit.DPQTKMeans(n_clusters=3, random_state=KEY).fit(pts)
    assert learned.report_["parameters"]["bounds_source"].startswith("learned under DP")
    assert learned.report_["privacy"]["delta"] == 0 and learned.cluster_centers_.shape == (3, 2)


def test_dpqt_kmeans_date_keyword_as_cluster_takes_it() -> None:
    """DPQTKMeans(date=...) means what dpkit.cluster's date= means: the columns of ISO dates are
    clustered as day numbers with bounds learned on the calendar grid; stored as given (sklearn),
    validated in fit before anything is spent."""
    import datetime as dt

    first, epoch = dt.date(2019, 1, 1).toordinal(), dt.date(1970, 1, 1).toordinal()
    days = np.repeat(np.r_[np.arange(0, 200, 2), np.arange(1500, 1700, 2)], 10)  # two clumps of signups
    X = pd.DataFrame({"signup": [dt.date.fromordinal(first + int(d)).isoformat() for d in days],
                      "amount": (days % 11).astype(float)})
    km = dpkit.DPQTKMeans(2, epsilon=2.0, date="signup", random_state=KEY)
    assert km.get_params()["date"] == "signup" and clone(km).get_params() == km.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpkit.DpkitWarning)  # the noisy count's format warning (ε_c·ñ small)
        assert km.fit(X) is km
    assert km.get_params()["date"] == "signup"  # untouched by fit
    steps = [s["step"] for s in km.report_["spends"]]
    assert any(s.startswith("domain: signup bounds") for s in steps)
    # the centroids: ISO dates in the release, their day numbers in cluster_centers_
    iso = km.clustering_.centroids["signup"]
    assert [dt.date.fromordinal(epoch + int(d)).isoformat() for d in km.cluster_centers_[:, 0]] == list(iso)
    assert sorted(dt.date.fromisoformat(v).year for v in iso) == [2019, 2023]  # one centre in each clump
    # predict reads the dates as day numbers too, as ISO text or as datetimes
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    np.testing.assert_array_equal(km.predict(X.assign(signup=pd.to_datetime(X["signup"]))), km.labels_)
    assert len(set(km.labels_[:1000])) == 1 and km.labels_[0] != km.labels_[-1]
    # set_params, and the errors of fit (usage before data, data before any spend)
    with pytest.raises(dpkit.DpkitUsageError, match="date: column.*'nope'"):
        clone(km).set_params(date=["nope"]).fit(X)
    with pytest.raises(dpkit.DpkitUsageError, match="date applies only when the bounds are learned"):
        clone(km).set_params(bounds=[(17000, 20000), (0, 10)]).fit(X)
    bad = X.copy()
    bad.loc[7, "signup"] = "3/4/2021"
    with pytest.raises(dpkit.DataError, match="X column 'signup' is declared a date") as err:
        clone(km).fit(bad)
    assert "3/4/2021" not in str(err.value)  # X's values are not quoted
    with pytest.raises(dpkit.DataError, match="X column 'signup' is not numeric"):
        dpkit.DPQTKMeans(2).fit(X)  # without date= a date is no number
