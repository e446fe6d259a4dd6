"""Classifier utility of a k-anonymous table: train on the release, test on a mapped split.

The measure of Wang & Wan's XGB-KA experiments — a linear SVM on the kept features one-hot
encoded, precision and recall of the positive class — plus accuracy, and the same for an
entropy decision tree (scikit-learn's ``DecisionTreeClassifier(criterion="entropy")``, a
C4.5-like learner as in Fung et al.'s classification-utility experiments). Every feature is
treated as categorical (generalized labels are categories), so the learners see exactly the
released values.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

TREE_MIN_LEAF = 5


def classifier_utility(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str], target: str,
    positive: str | None = None, seed: int = 0,
) -> dict[str, Any]:
    """SVM and entropy-tree accuracy, precision and recall (of ``positive``) on ``test``."""
    from sklearn.metrics import accuracy_score, precision_score, recall_score
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    y_train = train[target].astype(str).to_numpy()
    y_test = test[target].astype(str).to_numpy()
    classes, counts = np.unique(y_train, return_counts=True)
    binary = len(set(classes) | set(y_test)) <= 2
    if positive is None and binary:
        positive = str(classes[np.argmin(counts)]) if len(classes) == 2 else str(classes[0])
    majority = classes[np.argmax(counts)]
    out: dict[str, Any] = {
        "test_records": int(len(test)),
        "positive": positive if binary else None,
        "majority_accuracy": float(np.mean(y_test == majority)),
    }

    def scores(pred: np.ndarray) -> dict[str, float]:
        if binary:
            kw: dict[str, Any] = {"pos_label": positive, "average": "binary"}
        else:
            kw = {"average": "macro"}
        return {
            "accuracy": float(accuracy_score(y_test, pred)),
            "precision": float(precision_score(y_test, pred, zero_division=0, **kw)),
            "recall": float(recall_score(y_test, pred, zero_division=0, **kw)),
        }

    if not features or len(classes) < 2:
        pred = np.full(len(test), majority, dtype=object)
        out["svm"] = scores(pred)
        out["entropy_tree"] = scores(pred)
        return out
    enc = OneHotEncoder(handle_unknown="ignore")
    a = enc.fit_transform(train[features].astype(str))
    b = enc.transform(test[features].astype(str))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on small tables is harmless here
        svm = LinearSVC(C=1.0, random_state=seed, max_iter=5000).fit(a, y_train)
    out["svm"] = scores(svm.predict(b))
    tree = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=TREE_MIN_LEAF, random_state=seed)
    out["entropy_tree"] = scores(tree.fit(a, y_train).predict(b))
    return out
