"""The metrics an imbalanced target needs (issue 25), each against scikit-learn's own on fixed
inputs, and where evaluate classify reports them."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from dpkit.evaluate.classify import score_tables, scores_from_columns
from dpkit.evaluate.metrics import balanced_accuracy, classification_report, roc_auc

RNG = np.random.default_rng(25)
# a fixed imbalanced binary task (8 % positives) and a 3-class one
Y2 = np.where(RNG.random(500) < 0.08, "yes", "no").astype(object)
S2 = np.clip(0.3 * (Y2 == "yes") + RNG.random(500) * 0.8, 0, 1)
P2 = np.where(S2 > 0.5, "yes", "no").astype(object)
Y3 = RNG.choice(np.array(["a", "b", "c"], dtype=object), 300, p=[0.7, 0.2, 0.1])
S3 = RNG.dirichlet([1, 1, 1], 300)
S3[np.arange(300), np.searchsorted(["a", "b", "c"], Y3)] += 0.4
P3 = np.array(["a", "b", "c"], dtype=object)[np.argmax(S3, axis=1)]


def test_balanced_accuracy_is_sklearns() -> None:
    assert balanced_accuracy(Y2, P2) == pytest.approx(skm.balanced_accuracy_score(Y2, P2))
    assert balanced_accuracy(Y3, P3) == pytest.approx(skm.balanced_accuracy_score(Y3, P3))
    w = RNG.random(500)
    assert balanced_accuracy(Y2, P2, w) == pytest.approx(skm.balanced_accuracy_score(Y2, P2, sample_weight=w))
    assert balanced_accuracy(["no"] * 9 + ["yes"], ["no"] * 10) == pytest.approx(0.5)  # majority: 1/k


def test_roc_auc_is_sklearns() -> None:
    scores = np.column_stack([1 - S2, S2])
    assert roc_auc(Y2, scores, ["no", "yes"], positive="yes") == pytest.approx(skm.roc_auc_score(Y2 == "yes", S2))
    norm = S3 / S3.sum(axis=1, keepdims=True)
    want = skm.roc_auc_score(Y3, norm, multi_class="ovr", average="macro", labels=["a", "b", "c"])
    assert roc_auc(Y3, S3, ["a", "b", "c"]) == pytest.approx(want)
    # classes in a schema's order, not sorted (Adult's race lists White first): same AUC
    order = [2, 0, 1]
    assert roc_auc(Y3, S3[:, order], ["c", "a", "b"]) == pytest.approx(want)
    assert roc_auc(["no"] * 5, np.ones((5, 2)), ["no", "yes"]) is None  # undefined with one class


def test_roc_auc_with_two_of_three_classes_in_the_test() -> None:
    """Three classes scored, two present in the test (a 2-row test split): the AUC of the two,
    renormalized — scikit-learn's multi-class path took two labels for a binary task and
    raised (evaluate classify exited 70)."""
    keep = Y3 != "c"
    sub = S3[keep][:, :2]
    want = skm.roc_auc_score(Y3[keep] == "b", sub[:, 1] / sub.sum(axis=1))
    assert roc_auc(Y3[keep], S3[keep], ["a", "b", "c"]) == pytest.approx(want)
    assert roc_auc(["c0", "c1"], np.full((2, 3), 1 / 3), ["c0", "c1", "c2"]) == pytest.approx(0.5)


def test_report_per_class_and_macro_f1_are_sklearns() -> None:
    rep = classification_report(Y3, P3, scores=S3, score_classes=["a", "b", "c"])
    prec, rec, f1, sup = skm.precision_recall_fscore_support(Y3, P3, labels=["a", "b", "c"], zero_division=0)
    for i, c in enumerate(["a", "b", "c"]):
        got = rep["per_class"][c]
        assert (got["precision"], got["recall"], got["f1"], got["support"]) == pytest.approx(
            (prec[i], rec[i], f1[i], sup[i]))
    assert rep["macro_f1"] == pytest.approx(skm.f1_score(Y3, P3, average="macro"))
    assert rep["balanced_accuracy"] == pytest.approx(skm.balanced_accuracy_score(Y3, P3))
    assert rep["roc_auc"] is not None


def _adult(n: int = 4000) -> pd.DataFrame:
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "sample_data" / "adult" / "train.csv"
    return pd.read_csv(path, dtype=str, keep_default_na=False).head(n)


def test_score_tables_reports_auc_baseline_and_floor() -> None:
    df = _adult()
    out = score_tables(df.iloc[:3000], df.iloc[3000:], "income", baseline_train=df.iloc[:3000],
                       baseline_test=df.iloc[3000:])
    for key in ("balanced_accuracy", "macro_f1", "roc_auc"):
        assert 0 < out[key] <= 1 and 0 < out[f"baseline_{key}"] <= 1
    assert out["floor_roc_auc"] == 0.5 and out["floor_balanced_accuracy"] == 0.5
    assert out["roc_auc"] > 0.6  # a tree ranks better than chance on Adult


def test_predictions_file_probabilities_give_the_auc() -> None:
    y = pd.DataFrame({"income": Y2, "age": ["30"] * 500})
    pred = pd.DataFrame({"income": P2, "p_no": 1 - S2, "p_yes": S2})
    proba = scores_from_columns(pred, len(y))
    out = score_tables(None, y, "income", predictions=pred["income"].to_numpy(), proba=proba)
    assert out["roc_auc"] == pytest.approx(skm.roc_auc_score(Y2 == "yes", S2))


def test_one_class_predictions_warn_once() -> None:
    y = pd.DataFrame({"income": Y2, "age": ["30"] * 500})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = score_tables(None, y, "income", predictions=np.array(["no"] * 500, dtype=object))
    msgs = [str(w.message) for w in seen if "predicts 'no'" in str(w.message)]
    assert len(msgs) == 1 and "100.0 % of rows" in msgs[0] and "balanced_accuracy" in msgs[0]
    assert out["balanced_accuracy"] == pytest.approx(0.5)
