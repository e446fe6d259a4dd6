"""Classification metrics: accuracy, balanced accuracy, precision, recall, F1 (per class and
macro), ROC AUC and the confusion matrix.

Thin wrappers over :mod:`sklearn.metrics` that state dpkit's conventions in one place: a
ratio whose denominator is zero is 0 (``zero_division=0``); binary tasks score one
*positive* class; multi-class tasks macro-average over the labels.
Every function accepts ``sample_weight`` (a released ``--counts`` table's ``count`` column).

Clustering metrics (NICV, F-measure, RCP) live in :mod:`dpkit.evaluate.clustering`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpkit.errors import DataError


def _arrays(y_true: Sequence[Any], y_pred: Sequence[Any], sample_weight: Sequence[float] | None):
    t = np.asarray(y_true, dtype=object)
    p = np.asarray(y_pred, dtype=object)
    if t.shape != p.shape or t.ndim != 1:
        raise DataError(f"y_true and y_pred need the same 1-D shape, got {t.shape} and {p.shape}")
    w = np.ones(t.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if w.shape != t.shape:
        raise DataError(f"sample_weight needs shape {t.shape}, got {w.shape}")
    return t, p, w


def class_labels(*ys: Sequence[Any]) -> list[Any]:
    """The sorted union of the labels seen in ``ys`` (the order of the confusion matrix)."""
    seen: set[Any] = set()
    for y in ys:
        seen.update(np.asarray(y, dtype=object).tolist())
    return sorted(seen, key=lambda v: (str(type(v)), v))


def confusion_matrix(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    labels: Sequence[Any] | None = None,
    sample_weight: Sequence[float] | None = None,
) -> np.ndarray:
    """``C[i, j]`` = (weighted) number of records of true class ``labels[i]`` predicted ``labels[j]``.

    Rows are true classes, columns predictions (scikit-learn's layout). Records whose true
    or predicted label is not in ``labels`` are left out. Integer dtype without weights.
    """
    from sklearn.metrics import confusion_matrix as sk_confusion

    t, p, w = _arrays(y_true, y_pred, sample_weight)
    labels = class_labels(t, p) if labels is None else list(labels)
    if not labels:
        return np.zeros((0, 0), dtype=np.int64)
    known = set(labels)
    ok = np.array([a in known and b in known for a, b in zip(t.tolist(), p.tolist(), strict=True)], dtype=bool)
    if not ok.any():
        return np.zeros((len(labels), len(labels)), dtype=np.int64 if sample_weight is None else float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "a single label was found": labels is given
        c = sk_confusion(t[ok], p[ok], labels=labels, sample_weight=None if sample_weight is None else w[ok])
    return c.astype(np.int64) if sample_weight is None else c.astype(float)


def accuracy(
    y_true: Sequence[Any], y_pred: Sequence[Any], sample_weight: Sequence[float] | None = None
) -> float:
    """Fraction (weighted) of records whose prediction equals the true label; 0 if empty."""
    from sklearn.metrics import accuracy_score

    t, p, w = _arrays(y_true, y_pred, sample_weight)
    if t.size == 0 or w.sum() <= 0:
        return 0.0
    with warnings.catch_warnings():
        # sklearn warns when only one label occurs; for accuracy that is harmless
        warnings.simplefilter("ignore", UserWarning)
        return float(accuracy_score(t, p, sample_weight=w))


def per_class(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    labels: Sequence[Any] | None = None,
    sample_weight: Sequence[float] | None = None,
) -> dict[Any, dict[str, float]]:
    """Precision, recall, F1 and support of every label (one-vs-rest)."""
    from sklearn.metrics import precision_recall_fscore_support

    t, p, w = _arrays(y_true, y_pred, sample_weight)
    labels = class_labels(t, p) if labels is None else list(labels)
    if not labels:
        return {}
    if t.size == 0:
        return {label: {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0.0} for label in labels}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "a single label was found": harmless here
        prec, rec, f1, _ = precision_recall_fscore_support(
            t, p, labels=labels, sample_weight=w, zero_division=0, average=None
        )
    # weighted support (sklearn's counts records, ignoring the weights)
    support = confusion_matrix(t, p, labels, w).astype(float).sum(axis=1)
    return {
        label: {"precision": float(prec[i]), "recall": float(rec[i]), "f1": float(f1[i]),
                "support": float(support[i])}
        for i, label in enumerate(labels)
    }


def precision_recall_f1(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    positive: Any = None,
    labels: Sequence[Any] | None = None,
    sample_weight: Sequence[float] | None = None,
) -> tuple[float, float, float]:
    """Precision, recall and F1 of the ``positive`` class, or macro averages if it is None.

    The macro F1 is the mean of the per-class F1 scores (scikit-learn's ``average='macro'``),
    not the harmonic mean of the macro precision and recall.
    """
    stats = per_class(y_true, y_pred, labels, sample_weight)
    if positive is not None:
        if positive not in stats:
            s = per_class(y_true, y_pred, [*stats, positive], sample_weight)[positive]
        else:
            s = stats[positive]
        return s["precision"], s["recall"], s["f1"]
    if not stats:
        return 0.0, 0.0, 0.0
    n = len(stats)
    return (
        sum(s["precision"] for s in stats.values()) / n,
        sum(s["recall"] for s in stats.values()) / n,
        sum(s["f1"] for s in stats.values()) / n,
    )


def default_positive(y: Sequence[Any], labels: Sequence[Any] | None = None) -> Any:
    """The class scored as positive in a binary task: the less frequent one in ``y``.

    Ties (and a class absent from ``y``) go to the later label in sorted order, so
    ``<=50K``/``>50K`` gives ``>50K`` and BCW's ``2``/``4`` gives ``4`` (malignant).
    """
    labels = class_labels(y) if labels is None else list(labels)
    values = np.asarray(y, dtype=object).tolist()
    counts = {label: values.count(label) for label in labels}
    # min over (count, -position): the rarest, latest label
    return min(labels, key=lambda lab: (counts[lab], -labels.index(lab)))


def majority_rate(y: Sequence[Any]) -> float:
    """The share of ``y`` in its most frequent label: the accuracy of always predicting the
    majority class of ``y`` itself (the sweeps' ``floor_accuracy``); 0 if empty."""
    _, counts = np.unique(np.asarray(y), return_counts=True)
    return float(counts.max() / counts.sum()) if counts.size else 0.0


def majority_class(y: Sequence[Any], sample_weight: Sequence[float] | None = None) -> Any:
    """The most frequent (weighted) label of ``y``; ties go to the earlier sorted label."""
    t = np.asarray(y, dtype=object)
    w = np.ones(t.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    totals: dict[Any, float] = {}
    for label, weight in zip(t.tolist(), w.tolist(), strict=True):
        totals[label] = totals.get(label, 0.0) + weight
    if not totals:
        raise DataError("no labels to score")
    order = class_labels(list(totals))
    return max(order, key=lambda lab: (totals[lab], -order.index(lab)))


def balanced_accuracy(y_true: Sequence[Any], y_pred: Sequence[Any],
                      sample_weight: Sequence[float] | None = None) -> float:
    """The mean recall over the true classes (scikit-learn's ``balanced_accuracy_score``): the
    majority-class predictor scores 1/k, whatever the imbalance; 0 if empty."""
    from sklearn.metrics import balanced_accuracy_score

    t, p, w = _arrays(y_true, y_pred, sample_weight)
    if t.size == 0 or w.sum() <= 0:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "y_pred contains classes not in y_true"
        return float(balanced_accuracy_score(t, p, sample_weight=w))


def roc_auc(y_true: Sequence[Any], scores: np.ndarray, classes: Sequence[Any], *, positive: Any = None) -> float | None:
    """ROC AUC of per-class ``scores`` (rows of ``y_true``, one column per ``classes``).

    Binary (``positive`` given, or two classes): the AUC of the positive class's score.
    More classes: the macro average of one-vs-rest AUCs over the classes present in
    ``y_true`` (scikit-learn's ``multi_class="ovr"``, ``average="macro"``, rows renormalized).
    ``None`` when it is undefined (one class in ``y_true``).
    """
    from sklearn.metrics import roc_auc_score

    t = np.asarray(y_true, dtype=object)
    s = np.asarray(scores, dtype=float)
    classes = list(classes)
    present = [c for c in classes if np.any(t == c)]
    if len(present) < 2 or t.size == 0:
        return None
    if positive is not None or len(classes) == 2:
        pos = positive if positive is not None else classes[1]
        if pos not in classes:
            return None
        return float(roc_auc_score(np.asarray(t == pos, dtype=bool), s[:, classes.index(pos)]))
    present = sorted(present, key=str)  # scikit-learn wants the labels sorted, whatever the schema's order
    idx = [classes.index(c) for c in present]
    sub = s[:, idx]
    keep = np.isin(t, present)
    sub = sub[keep]
    total = sub.sum(axis=1, keepdims=True)
    sub = np.where(total > 0, sub / np.where(total > 0, total, 1), 1.0 / len(present))
    if len(present) == 2:
        # two of the classes in y_true: scikit-learn reads two labels as a binary task and wants one
        # score column; after renormalizing, both one-vs-rest AUCs equal the second class's
        return float(roc_auc_score(t[keep] == present[1], sub[:, 1]))
    # as strings: scikit-learn cannot type an object array of numbers ("unknown format")
    return float(roc_auc_score(t[keep].astype(str), sub, multi_class="ovr", average="macro",
                               labels=[str(c) for c in present]))


def roc_points(y_true: Sequence[Any], scores: np.ndarray, classes: Sequence[Any], positive: Any,
               *, max_points: int = 200) -> dict[str, Any] | None:
    """The ROC curve of the ``positive`` class's score (one-vs-rest): false and true positive
    rates at every threshold (scikit-learn's ``roc_curve``, Fawcett 2006), thinned to at most
    ``max_points`` points for drawing. ``None`` when it is undefined (one class present, or no
    score column for ``positive``)."""
    from sklearn.metrics import roc_curve

    t = np.asarray(y_true, dtype=object)
    classes = list(classes)
    if positive not in classes or t.size == 0:
        return None
    hit = np.asarray(t == positive, dtype=bool)
    if hit.all() or not hit.any():
        return None
    fpr, tpr, _ = roc_curve(hit, np.asarray(scores, dtype=float)[:, classes.index(positive)])
    if len(fpr) > max_points:
        keep = np.unique(np.linspace(0, len(fpr) - 1, max_points).round().astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    return {"positive": positive, "fpr": [round(float(x), 5) for x in fpr],
            "tpr": [round(float(x), 5) for x in tpr]}


def classification_report(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    positive: Any = None,
    labels: Sequence[Any] | None = None,
    scores: np.ndarray | None = None,
    score_classes: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """All metrics of one set of predictions, as plain data.

    With ``positive`` given, precision/recall/F1 are those of that class (one-vs-rest);
    otherwise binary tasks score :func:`default_positive` of ``y_true`` and tasks with more
    classes macro-average. Keys: ``accuracy``, ``balanced_accuracy``, ``precision``,
    ``recall``, ``f1``, ``macro_f1``, ``roc_auc`` (from ``scores``, one column per
    ``score_classes``; ``None`` without scores), ``average`` (``"binary"`` or ``"macro"``),
    ``positive``, ``labels``, ``per_class`` (precision, recall, F1 and support of every
    label), ``confusion_matrix`` (rows true, columns predicted, in ``labels`` order).
    """
    labels = class_labels(y_true, y_pred) if labels is None else list(labels)
    if positive is None and len(labels) == 2:
        positive = default_positive(y_true, labels)
    prec, rec, f1 = precision_recall_f1(y_true, y_pred, positive=positive, labels=labels)
    stats = per_class(y_true, y_pred, labels)
    auc = None
    if scores is not None:
        auc = roc_auc(y_true, scores, list(score_classes if score_classes is not None else labels),
                      positive=positive if len(labels) == 2 else None)
    return {
        "accuracy": accuracy(y_true, y_pred),
        "balanced_accuracy": balanced_accuracy(y_true, y_pred),
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "macro_f1": sum(v["f1"] for v in stats.values()) / len(stats) if stats else 0.0,
        "roc_auc": auc,
        "average": "macro" if positive is None else "binary",
        "positive": positive,
        "labels": labels,
        "per_class": {str(k): v for k, v in stats.items()},
        "confusion_matrix": confusion_matrix(y_true, y_pred, labels).tolist(),
    }
