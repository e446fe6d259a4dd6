"""Classification metrics against hand-computed values and against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from dpkit.evaluate.metrics import (
    accuracy,
    class_labels,
    classification_report,
    confusion_matrix,
    default_positive,
    majority_class,
    per_class,
    precision_recall_f1,
)

# hand example: 3 classes, 8 records
#   true: a a a b b c c c
#   pred: a b a b c c a c
T = ["a", "a", "a", "b", "b", "c", "c", "c"]
P = ["a", "b", "a", "b", "c", "c", "a", "c"]


def test_confusion_matrix_by_hand():
    c = confusion_matrix(T, P, ["a", "b", "c"])
    # rows true, columns predicted
    assert c.tolist() == [[2, 1, 0], [0, 1, 1], [1, 0, 2]]
    assert c.dtype.kind == "i"


def test_accuracy_by_hand():
    assert accuracy(T, P) == pytest.approx(5 / 8)
    assert accuracy([], []) == 0.0


def test_per_class_by_hand():
    s = per_class(T, P)
    # a: tp 2, predicted a 3, actual a 3
    assert s["a"]["precision"] == pytest.approx(2 / 3)
    assert s["a"]["recall"] == pytest.approx(2 / 3)
    # b: tp 1, predicted 2, actual 2
    assert s["b"]["precision"] == pytest.approx(1 / 2)
    assert s["b"]["recall"] == pytest.approx(1 / 2)
    # c: tp 2, predicted 3, actual 3
    assert s["c"]["f1"] == pytest.approx(2 / 3)
    assert s["c"]["support"] == 3


def test_macro_by_hand():
    p, r, f = precision_recall_f1(T, P)
    assert p == pytest.approx((2 / 3 + 1 / 2 + 2 / 3) / 3)
    assert r == pytest.approx((2 / 3 + 1 / 2 + 2 / 3) / 3)
    assert f == pytest.approx((2 / 3 + 1 / 2 + 2 / 3) / 3)


def test_binary_by_hand():
    t = ["n", "n", "n", "y", "y", "y", "y", "n"]
    p = ["n", "y", "n", "y", "y", "n", "n", "n"]
    # positive y: tp 2, fp 1, fn 2
    prec, rec, f1 = precision_recall_f1(t, p, positive="y")
    assert prec == pytest.approx(2 / 3)
    assert rec == pytest.approx(2 / 4)
    assert f1 == pytest.approx(2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2))


def test_zero_division_is_zero():
    # never predicts the positive class: precision 0/0 -> 0, as sklearn zero_division=0
    prec, rec, f1 = precision_recall_f1(["y", "n"], ["n", "n"], positive="y")
    assert (prec, rec, f1) == (0.0, 0.0, 0.0)
    # a positive class absent from both
    assert precision_recall_f1(["n"], ["n"], positive="y") == (0.0, 0.0, 0.0)


def test_weights_equal_repetition():
    w = [1, 2, 3, 1, 1, 2, 1, 4]
    t_rep = [v for v, k in zip(T, w, strict=True) for _ in range(k)]
    p_rep = [v for v, k in zip(P, w, strict=True) for _ in range(k)]
    assert accuracy(T, P, w) == pytest.approx(accuracy(t_rep, p_rep))
    assert np.allclose(confusion_matrix(T, P, sample_weight=w), confusion_matrix(t_rep, p_rep))
    assert precision_recall_f1(T, P, sample_weight=w) == pytest.approx(precision_recall_f1(t_rep, p_rep))


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_against_sklearn(n_classes, weighted):
    rng = np.random.default_rng(n_classes + 10 * weighted)
    t = rng.integers(0, n_classes, 300).astype(str)
    # predictions agree often, so the scores are not trivial
    p = np.where(rng.random(300) < 0.6, t, rng.integers(0, n_classes, 300).astype(str))
    w = rng.integers(1, 5, 300).astype(float) if weighted else None
    labels = class_labels(t, p)
    assert accuracy(t, p, w) == pytest.approx(skm.accuracy_score(t, p, sample_weight=w))
    assert np.allclose(confusion_matrix(t, p, labels, w), skm.confusion_matrix(t, p, labels=labels, sample_weight=w))
    ours = precision_recall_f1(t, p, sample_weight=w)
    theirs = skm.precision_recall_fscore_support(t, p, average="macro", sample_weight=w, zero_division=0)[:3]
    assert ours == pytest.approx(theirs)
    pos = labels[-1]
    ours = precision_recall_f1(t, p, positive=pos, sample_weight=w)
    theirs = (
        skm.precision_score(t, p, labels=[pos], average="macro", sample_weight=w, zero_division=0),
        skm.recall_score(t, p, labels=[pos], average="macro", sample_weight=w, zero_division=0),
        skm.f1_score(t, p, labels=[pos], average="macro", sample_weight=w, zero_division=0),
    )
    assert ours == pytest.approx(theirs)


def test_binary_matches_sklearn_pos_label():
    t = ["<=50K"] * 6 + [">50K"] * 3
    p = ["<=50K", ">50K", "<=50K", "<=50K", "<=50K", "<=50K", ">50K", ">50K", "<=50K"]
    ours = precision_recall_f1(t, p, positive=">50K")
    theirs = skm.precision_recall_fscore_support(t, p, pos_label=">50K", average="binary")[:3]
    assert ours == pytest.approx(theirs)


def test_default_positive_is_rarer_class():
    assert default_positive(["<=50K"] * 3 + [">50K"]) == ">50K"
    assert default_positive(["2", "2", "4"]) == "4"
    assert default_positive(["b", "a", "a", "b"]) == "b"  # tie -> later label
    assert default_positive(["x", "x"], ["x", "y"]) == "y"  # absent -> rarest


def test_majority_class():
    assert majority_class(["a", "b", "b"]) == "b"
    assert majority_class(["a", "b", "b"], [5, 1, 1]) == "a"
    assert majority_class(["a", "b"]) == "a"  # tie -> earlier label


def test_classification_report_shape():
    rep = classification_report(["n", "y", "y", "n", "n"], ["n", "y", "n", "n", "y"])
    assert rep["average"] == "binary"
    assert rep["positive"] == "y"
    assert rep["labels"] == ["n", "y"]
    assert rep["confusion_matrix"] == [[2, 1], [1, 1]]
    assert rep["accuracy"] == pytest.approx(3 / 5)
    multi = classification_report(T, P)
    assert multi["average"] == "macro" and multi["positive"] is None
    one = classification_report(T, P, positive="b")
    assert one["average"] == "binary" and one["precision"] == pytest.approx(0.5)


def test_majority_rate_is_the_share_of_the_most_frequent_label() -> None:
    from dpkit.evaluate.metrics import majority_rate

    assert majority_rate([0, 1, 1, 2]) == 0.5
    assert majority_rate(["a", "b", "b"]) == 2 / 3
    assert majority_rate([]) == 0.0
