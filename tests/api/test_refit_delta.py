"""A fit on rows an earlier fit used warns with what those records have spent in all — the δ too
(issue 43, privacy review 4: the warning added up ε only). Fits that spend no δ keep the words
they always had."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.api.fits import forget_fits

IRIS = Path(__file__).resolve().parents[2] / "sample_data" / "iris" / "iris.csv"


@pytest.fixture(autouse=True)
def _fresh_session(monkeypatch):  # noqa: ANN001, ANN202
    monkeypatch.delenv("DPKIT_LEDGER", raising=False)
    monkeypatch.delenv("DPKIT_RESERVATION", raising=False)
    forget_fits()
    yield
    forget_fits()


def _leak(fit) -> str:  # noqa: ANN001
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    (msg,) = [str(w.message) for w in caught if issubclass(w.category, dpkit.PrivacyLeakWarning)]
    return msg


def test_the_refit_warning_adds_up_delta() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    X = pd.DataFrame({"x": rng.integers(0, 100, n), "c": rng.choice(["u", "v", "w"], n)})
    y = pd.Series(np.where(X["x"] > 50, "hi", "lo"), name="label")

    def model():  # noqa: ANN202
        return dpkit.DiffPRFsClassifier(epsilon=1.0, delta=1e-6, n_estimators=2, max_depth=2, random_state=0)

    first = model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first.fit(X, y)
    d = first.report_["privacy"]["delta_spent"]
    assert 0 < d <= 1e-6
    msg = _leak(lambda: model().fit(X, y))
    spent = re.search(r"this fit spent epsilon=([\d.e+-]+), delta=([\d.e+-]+)", msg)
    total = re.search(r"up to epsilon=([\d.e+-]+) and delta=([\d.e+-]+) in all", msg)
    assert spent and total, msg
    assert float(spent.group(2)) == pytest.approx(d, rel=1e-5)
    assert float(total.group(1)) == pytest.approx(2.0, rel=1e-5)
    assert float(total.group(2)) == pytest.approx(2 * d, rel=1e-5)


def test_a_pure_epsilon_refit_says_epsilon_only() -> None:
    X = pd.read_csv(IRIS).drop(columns="species")
    km = dpkit.DPQTKMeans(n_clusters=3, epsilon=0.5, bounds=[(0, 10)] * 4)
    km.fit(X)
    msg = _leak(lambda: km.fit(X))
    assert "up to epsilon=1 in all" in msg and "delta" not in msg
