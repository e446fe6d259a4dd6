"""One cell of the XGB-KA paper's experiment (Wang & Wan, §4): select, then classify with an SVM.

``run_experiment(params, seed)``: read the data set (cached), optionally draw a stratified
sample (the paper draws 1,500 Adult records keeping the class ratio), split it into a
training and a held-out test part (stratified, seed-derived), run k-anonymous feature
selection on the training part (the released table), train a linear SVM on the selected
features one-hot encoded, and return precision and recall of the positive class on the
test part projected on the same features, with the number of selected features and the
selection's running time.

Parameters (the merged ``fixed`` + grid point of ``configs/experiments/xgbka.yaml``):
``data``, ``schema`` (optional), ``target``, ``k``, ``ranker`` (xgboost|hamming),
``positive`` (the positive class label), ``sample`` (optional record count),
``test_size`` (default 0.3), ``quasi_identifiers`` (optional list), ``C`` (SVM, default 1),
``split`` (optional: the seed of the sample, the split and XGBoost, so that a sweep compares
the rankers on the same splits), ``bin_numeric`` (optional N: before selection, replace each
numeric schema column by one of N equal-width intervals of its public bounds — a
preprocessing the paper may have done, it does not say).
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import Any

import numpy as np

from dpkit.errors import ExperimentError


@functools.lru_cache(maxsize=8)
def _load(data: str, schema: str | None, target: str):
    from dpkit.algorithms.kanon.frame import prepare
    from dpkit.io.table import read_csv
    from dpkit.schema.parse import load_schema

    sch = load_schema(schema, allow_draft=True) if schema else None
    df = read_csv(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # applies the schema's missing-value policy once, for every cell of the sweep
        prep = prepare(df, target=target, quasi_identifiers=None, keep=[], sensitive=None, schema=sch, source=data)
    return prep.table(), sch


def run_experiment(params: dict[str, Any], seed: int) -> dict[str, float]:
    """One sweep cell: selected features, SVM precision/recall (positive class), seconds."""
    from sklearn.metrics import precision_score, recall_score
    from sklearn.model_selection import train_test_split

    from dpkit.api.kanon import kanon_select  # dpkit.kanon_select

    target = params["target"]
    frame, sch = _load(str(params["data"]), params.get("schema"), target)
    positive = str(params["positive"])
    labels = frame[target].to_numpy()
    if positive not in set(labels):
        raise ExperimentError(f"positive class {positive!r} is not a value of {target!r}")
    # a `split` parameter (0, 1, ...) fixes the sample/split/XGBoost seed so that every
    # ranker and k of a sweep sees the same splits (paired comparison); else the sweep's seed
    seed = int(params["split"]) if params.get("split") is not None else int(seed) % (2**31)
    if params.get("sample"):
        n = int(params["sample"])
        if n < len(frame):
            # stratified: the sample keeps the data set's class ratio (as the paper does)
            frame, _ = train_test_split(frame, train_size=n, stratify=labels, random_state=seed)
    train, test = train_test_split(
        frame, test_size=float(params.get("test_size", 0.3)), stratify=frame[target].to_numpy(),
        random_state=seed + 1,
    )
    qis = params.get("quasi_identifiers")
    select_schema = sch
    if params.get("bin_numeric"):
        bins = int(params["bin_numeric"])
        train, test = _bin(train, sch, bins), _bin(test, sch, bins)
        # the binned columns are categorical now: select without the schema's numeric types
        qis = qis or (sch.predictors(target) if sch is not None else None)
        select_schema = None
    train = train.reset_index(drop=True)
    test = test.reset_index(drop=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = kanon_select(
            train, target=target, k=int(params["k"]), quasi_identifiers=qis,
            schema=select_schema, ranker=str(params.get("ranker", "xgboost")), random_state=seed,
        )
    seconds = time.perf_counter() - start
    selected = sel.selected
    y_train = (train[target].to_numpy() == positive).astype(int)
    y_test = (test[target].to_numpy() == positive).astype(int)
    predicted = _svm_predict(train[selected], y_train, test[selected], seed, float(params.get("C", 1.0)))
    return {
        "selected_features": float(len(selected)),
        "precision": float(precision_score(y_test, predicted, zero_division=0)),
        "recall": float(recall_score(y_test, predicted, zero_division=0)),
        "seconds": float(seconds),
        "ranking_seconds": float(sel.report["release"]["seconds"]["ranking"]),
        "smallest_class": float(sel.report["release"]["equivalence_classes"]["smallest"]),
    }


def _bin(df, schema, bins: int):
    """Numeric schema columns as labels of ``bins`` equal-width intervals of the public bounds."""
    import pandas as pd

    if schema is None:
        return df
    out = df.copy()
    for name, col in schema.columns.items():
        if col.kind != "numeric" or name not in out.columns:
            continue
        edges = np.linspace(col.lo, col.hi, bins + 1)
        v = np.clip(pd.to_numeric(out[name]).to_numpy(dtype=float), col.lo, col.hi)
        idx = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, bins - 1)
        labels = np.array([f"[{edges[i]:g},{edges[i + 1]:g})" for i in range(bins)], dtype=object)
        out[name] = labels[idx]
    return out


def _svm_predict(x_train, y_train: np.ndarray, x_test, seed: int, C: float) -> np.ndarray:
    """A linear SVM on the one-hot encoded features (every selected feature as categories).

    With no feature selected the table carries no information: predict the majority class.
    """
    if x_train.shape[1] == 0 or len(np.unique(y_train)) < 2:
        majority = int(np.bincount(y_train).argmax())
        return np.full(len(x_test), majority, dtype=int)
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.svm import LinearSVC

    enc = OneHotEncoder(handle_unknown="ignore")
    a = enc.fit_transform(x_train.astype(str))
    b = enc.transform(x_test.astype(str))
    model = LinearSVC(C=C, random_state=seed, max_iter=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on tiny samples is harmless here
        model.fit(a, y_train)
    return model.predict(b)
