"""One cell of a ``publish`` sweep: release, generalize the test split, classify, score.

The evaluation protocol of docs/algorithms.md §1 (the papers'): run the release on the training
split with :func:`dpkit.publish` (the run of ``dpkit publish``: it books on ``$DPKIT_LEDGER``
when that is set, as every library call does), map the test split onto the released cut
(``dpkit generalize``), train a decision tree
with the entropy criterion (C4.5-like) on one-hot features of the released table and report
its accuracy on the generalized test split. Beside it: ``baseline_accuracy`` (the same
classifier on the raw splits, one-hot categories and numbers as they are) and
``floor_accuracy`` (always predicting the test split's majority class).

The released table is used through its cell counts as sample weights, which for a tree with
``min_samples_leaf=1`` grows the same splits as repeating each cell by its count, much faster.

Iris has no published split: with ``split: stratified`` (or no ``test``), each class is
shuffled with ``numpy.random.default_rng(split_seed)`` (default 0, the same for every repeat,
so repeats vary only the noise) and round(2/3) of it trains, the rest tests — 99/51 on Iris,
the nearest to the paper's balanced 100/50 split; the training rows go to :func:`dpkit.publish`
as a DataFrame of the file's text. The split is an evaluation device, not part of any release.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from typing import Any

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.io.table import EncodedTable, load_table
from dpkit.schema.parse import CategoricalColumn, Schema, load_schema

#: the evaluation's own defaults; the release's are dpkit.publish's
DEFAULTS: dict[str, Any] = {
    "epsilon": 1.0,
    "min_samples_leaf": 10,
    "split_seed": 0,
}


@functools.lru_cache(maxsize=8)
def _schema(path: str) -> Schema:
    return load_schema(path)


@functools.lru_cache(maxsize=8)
def _table(path: str, schema_path: str) -> EncodedTable:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the '?' rows dropped by the schema policy
        return load_table(path, _schema(schema_path))


def _subset(t: EncodedTable, rows: np.ndarray) -> EncodedTable:
    return EncodedTable(t.schema, {k: v[rows] for k, v in t.columns.items()}, int(rows.size), t.source)


@functools.lru_cache(maxsize=8)
def _splits(data: str, test: str | None, schema_path: str, split_seed: int) -> tuple[EncodedTable, EncodedTable]:
    full = _table(data, schema_path)
    if test:
        return full, _table(test, schema_path)
    train_rows, test_rows = _split_rows(full, split_seed)
    return _subset(full, train_rows), _subset(full, test_rows)


def _split_rows(full: EncodedTable, split_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (train, test) rows of the stratified split: round(2/3) of each class trains."""
    y = full.columns[full.schema.target] if full.schema.target else next(iter(full.columns.values()))
    # public, data-independent shuffle for the evaluation split (not part of any release)
    rng = np.random.default_rng(split_seed)
    train_rows, test_rows = [], []
    for c in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == c))
        k = int(round(rows.size * 2 / 3))
        train_rows.append(rows[:k])
        test_rows.append(rows[k:])
    return np.sort(np.concatenate(train_rows)), np.sort(np.concatenate(test_rows))


@functools.lru_cache(maxsize=8)
def _stratified_train(data: str, schema_path: str, split_seed: int) -> Any:
    """The training rows of the stratified split as the file holds them (a DataFrame of its
    text), for :func:`dpkit.publish`. The split indexes the encoded table, so the file must have
    no row its schema drops (Iris has none)."""
    from dpkit.io.source import ReadOptions
    from dpkit.io.table import read_table

    full = _table(data, schema_path)
    raw = read_table(ReadOptions(data))
    if len(raw) != full.n_rows:
        raise DpkitUsageError(f"split: stratified: {data} has rows its schema drops (missing values); "
                              "give a test split instead")
    return raw.iloc[_split_rows(full, split_seed)[0]]


def _one_hot(codes: list[np.ndarray], sizes: list[int]) -> Any:
    from scipy import sparse

    n = codes[0].size if codes else 0
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    cols = np.stack([c.astype(np.int64) + o for c, o in zip(codes, offsets, strict=True)], axis=1) if codes else np.zeros((n, 0), np.int64)
    rows = np.repeat(np.arange(n), len(codes))
    data = np.ones(rows.size, dtype=np.float32)
    return sparse.csr_matrix((data, (rows, cols.reshape(-1))), shape=(n, int(sum(sizes))))


def _tree(seed: int, min_samples_leaf: int, total_weight: float | None = None) -> Any:
    """Entropy tree; on weighted cells ``min_samples_leaf`` counts records (weight), as it
    would on the table with one row per released record."""
    from sklearn.tree import DecisionTreeClassifier

    if total_weight is None or min_samples_leaf <= 1:
        return DecisionTreeClassifier(criterion="entropy", min_samples_leaf=min_samples_leaf, random_state=seed)
    return DecisionTreeClassifier(criterion="entropy", min_weight_fraction_leaf=min(min_samples_leaf / total_weight, 0.5),
                                  random_state=seed)


@functools.lru_cache(maxsize=8)
def _baseline(data: str, test: str | None, schema_path: str, target: str, split_seed: int,
              min_samples_leaf: int) -> tuple[float, float]:
    """Raw-data accuracy of the same classifier, and the majority-class floor."""
    from scipy import sparse

    from dpkit.evaluate.metrics import majority_rate

    train, test_t = _splits(data, test, schema_path, split_seed)
    schema = train.schema

    def features(t: EncodedTable) -> Any:
        blocks = []
        for name in schema.predictors(target):
            col = schema.columns[name]
            if isinstance(col, CategoricalColumn):
                blocks.append(_one_hot([t.columns[name]], [len(col.leaves)]))
            else:
                # a kept missing value (missing_policy: keep) is NaN: below the bounds, so the tree
                # can set it apart as the release's missing bucket does
                v = np.asarray(t.columns[name], dtype=float)
                v = np.where(np.isnan(v), float(col.lo) - 1.0, v)
                blocks.append(sparse.csr_matrix(v.reshape(-1, 1)))
        return sparse.hstack(blocks).tocsr()

    clf = _tree(0, min_samples_leaf).fit(features(train), train.columns[target])
    x_test = features(test_t)
    yt = test_t.columns[target]
    pred = clf.predict(x_test)
    acc = float(np.mean(pred == yt))
    floor = majority_rate(yt)
    n_classes = len(schema.columns[target].leaves)
    bal, auc = _ranking(yt, pred, _scores(clf, x_test, n_classes), n_classes)
    return acc, floor, bal, auc


def _scores(clf: Any, x: Any, n_classes: int) -> np.ndarray:
    """The classifier's probabilities as an ``(n, n_classes)`` matrix over every class code
    (a class the tree never saw scores 0)."""
    proba = clf.predict_proba(x)
    out = np.zeros((proba.shape[0], n_classes))
    out[:, np.asarray(clf.classes_, dtype=np.int64)] = proba
    return out


def _ranking(yt: np.ndarray, pred: np.ndarray, scores: np.ndarray, n_classes: int) -> tuple[float, float]:
    """(balanced accuracy, ROC AUC) on class codes; binary AUC scores the test split's rarer
    class (dpkit.evaluate.metrics conventions); NaN where undefined."""
    from dpkit.evaluate.metrics import balanced_accuracy, default_positive, roc_auc

    classes = list(range(n_classes))
    positive = default_positive(yt.tolist(), classes) if n_classes == 2 else None
    auc = roc_auc(yt, scores, classes, positive=positive)
    # labels as strings: scikit-learn cannot type an object array of numbers
    return balanced_accuracy(yt.astype(str), pred.astype(str)), (math.nan if auc is None else auc)


def run_experiment(params: dict[str, Any], seed: int, timing: dict[str, float] | None = None) -> dict[str, float]:
    """Run one release with :func:`dpkit.publish` and evaluate it; ``params``: data, schema,
    [test], [target], epsilon, levels, algorithm, allocation, selection_share, selector, grid,
    min_samples_leaf.

    Returns accuracy, balanced_accuracy, roc_auc (of the tree's probabilities; binary: the
    test split's rarer class), their ``baseline_`` twins, floor_accuracy, epsilon_spent,
    released_records (noisy) and cells (size of the released table's domain). The tree is
    seeded with :attr:`dpkit.Release.postprocessing_seed`; ``timing["seconds"]``: the wall
    seconds of the :func:`dpkit.publish` call (benchmarks; not a result: it varies).
    """
    from dpkit.algorithms.publish import DEFAULT_ALGORITHM, OPTIONS
    from dpkit.api.publish import publish
    from dpkit.errors import DpkitWarning

    p = {**DEFAULTS, **{k.replace("-", "_"): v for k, v in params.items()}}
    for key in ("data", "schema"):
        if key not in p:
            raise DpkitUsageError(f"experiment parameter {key!r} is missing")
    schema = _schema(str(p["schema"]))
    target = p.get("target") or schema.target
    if not target:
        raise DpkitUsageError("experiment parameter 'target' is missing and the schema has none")
    test = p.get("test") if p.get("split", "given") != "stratified" else None
    split_seed = int(p["split_seed"])
    train, test_t = _splits(str(p["data"]), test, str(p["schema"]), split_seed)
    data = str(p["data"]) if test else _stratified_train(str(p["data"]), str(p["schema"]), split_seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpkitWarning)  # the dropped '?' rows and the noise share, every run
        release = publish(data, schema=str(p["schema"]), target=target, epsilon=float(p["epsilon"]),
                                algorithm=str(p.get("algorithm") or DEFAULT_ALGORITHM), random_state=int(seed),
                                engine="numpy", **{k: p[k] for k in OPTIONS if k in p})
    if timing is not None:
        timing["seconds"] = time.perf_counter() - t0
    rel = release.noisy
    cut = rel.cut
    sizes = cut.shape()
    yt = test_t.columns[target]
    msl = int(p["min_samples_leaf"])
    n_classes = len(rel.class_labels)
    if rel.counts.size:
        x_train = _one_hot([rel.cells[:, j] for j in range(len(sizes))], sizes)
        clf = _tree(release.postprocessing_seed, msl, float(rel.counts.sum())).fit(
            x_train, rel.cells[:, -1], sample_weight=rel.counts.astype(float))
        x_test = _one_hot(cut.codes(test_t.columns), sizes)
        pred = clf.predict(x_test)
        scores = _scores(clf, x_test, n_classes)
    else:  # nothing released: predict the first class
        pred = np.zeros_like(yt)
        scores = np.full((yt.size, n_classes), 1.0 / n_classes)
    base, floor, base_bal, base_auc = _baseline(str(p["data"]), test, str(p["schema"]), target, split_seed, msl)
    bal, auc = _ranking(yt, pred, scores, n_classes)
    return {
        "accuracy": float(np.mean(pred == yt)),
        "balanced_accuracy": bal,
        "roc_auc": auc,
        "baseline_accuracy": base,
        "baseline_balanced_accuracy": base_bal,
        "baseline_roc_auc": base_auc,
        "floor_accuracy": floor,
        "epsilon_spent": float(release.report["privacy"]["epsilon_spent"]),
        "released_records": float(rel.n_records),
        "cells": float(cut.n_cells() * len(rel.class_labels)),
        "levels_used": float(len(release.report["release"]["selections"])),
        "row_ratio": float(rel.n_records) / max(train.n_rows, 1),
        "expected_noise_share": release.expected_noise_share,
    }
