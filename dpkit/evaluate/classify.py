"""Train a classifier on one table and score it on another (the papers' utility protocol).

The data are public at this point — a released table, a generalized test split, or raw
data for the non-private baseline — so nothing here is differentially private and nothing
needs to be (docs/algorithms.md §1, "Evaluation protocol").

Features: categorical columns are one-hot encoded (categories learnt from the training
table; a test value never seen in training sets no indicator), numeric columns are used as
they are (standardized for the SVM). A column's kind comes from the schema when one is
given — except that a numeric column whose values are interval labels such as ``[15,37)``
(a released or generalized table) is categorical, since its values are not numbers any
more. Without a schema a column is numeric iff every value in both tables parses as a
number.

Models (:func:`make_model`):

- ``tree`` — scikit-learn's CART with the entropy criterion, standing in for the papers'
  C4.5. C4.5 prunes its trees; CART here does not, so a leaf must hold at least 0.1 % of
  the training weight (``min_weight_fraction_leaf=0.001``): on raw Adult that matches the
  paper's C4.5 baseline (docs/decisions/0014-evaluation-tree.md). The rule is on
  weight, so a ``--counts`` table and its one-row-per-record expansion give the same tree.
- ``svm`` — a linear SVM (``LinearSVC``, C = 1) on one-hot + standardized numeric
  features, as in the XGB-KA paper's evaluation; linear so that Adult trains in seconds.
- ``forest`` — a non-private random forest (100 trees) for comparison with DiffPRFs.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.console import private
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.schema.parse import Schema

MODELS = ("tree", "svm", "forest")
TREE_MIN_LEAF_FRACTION = 0.001
FOREST_TREES = 100

# a released/generalized numeric value: "[lo,hi)" or "[lo,hi]"
_INTERVAL = re.compile(r"^\[\s*[-+0-9.eEinf]+\s*,\s*[-+0-9.eEinf]+\s*[\])]$")


@dataclass
class Dataset:
    """Features, labels and sample weights of one table, ready for :func:`fit_predict`."""

    X: pd.DataFrame
    y: np.ndarray
    weight: np.ndarray | None
    source: str
    rows: np.ndarray | None = None  # indices of the input rows kept (missing/zero-weight dropped)


def is_interval_label(value: str) -> bool:
    return bool(_INTERVAL.match(value))


def numbers(series: pd.Series) -> np.ndarray:
    """``pd.to_numeric(series, errors="coerce")`` as float64, each distinct value parsed once.

    The tables come as strings (a column holds few distinct values); parsing every cell was a
    large share of ``evaluate classify``, the distinct values take a small part of that
    (docs/decisions/0012-io-performance.md). Value for value the same floats: the parse is element-wise (a missing value, which
    :func:`pandas.factorize` codes -1, stays NaN)."""
    import pandas as pd

    codes, distinct = pd.factorize(series)
    parsed = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").to_numpy(dtype=float)
    return np.append(parsed, np.nan)[codes]  # code -1 (missing) picks the NaN at the end


def _parses(series: pd.Series, tokens: Sequence[str] = ()) -> bool:
    """Is every value a finite number (or one of the missing ``tokens``)?"""
    if tokens:
        series = series[~series.isin(list(tokens))]
    if len(series) == 0:
        return True
    return bool(np.isfinite(numbers(series)).all())


def kept_tokens(schema: Schema | None) -> tuple[str, ...]:
    """The missing tokens that are values of the data (``missing_policy: keep``), else none."""
    return tuple(schema.missing_tokens) if schema is not None and schema.missing_policy == "keep" else ()


def column_kinds(frames: list[pd.DataFrame], columns: list[str], schema: Schema | None = None) -> dict[str, str]:
    """``column -> 'numeric' | 'categorical'``, looking at every frame (train and test). A
    numeric column may hold the missing tokens of a ``keep`` schema (read as NaN)."""
    from dpkit.schema.parse import CategoricalColumn

    tokens = kept_tokens(schema)
    kinds: dict[str, str] = {}
    for c in columns:
        declared = schema.columns.get(c) if schema is not None else None
        if isinstance(declared, CategoricalColumn):
            kinds[c] = "categorical"
            continue
        numeric = all(_parses(f[c], tokens) for f in frames if c in f.columns)
        kinds[c] = "numeric" if numeric else "categorical"
    return kinds


def feature_columns(df: pd.DataFrame, target: str, schema: Schema | None, weight_column: str | None) -> list[str]:
    """Every column but the target, the weight column and columns the schema ignores."""
    out = []
    for c in df.columns:
        if c in (target, weight_column):
            continue
        if schema is not None and c in schema.columns and schema.columns[c].kind == "ignore":
            continue
        out.append(c)
    return out


def resolve_weight_column(df: pd.DataFrame, target: str, weight_column: str | None, source: str) -> str | None:
    """The column holding sample weights: as given, else ``count`` if present and not the target."""
    if weight_column is not None:
        if weight_column not in df.columns:
            raise DpkitUsageError(f"{source}: weight column {weight_column!r} is not a column "
                                  f"({', '.join(df.columns[:8])})", param="weight_column")
        if weight_column == target:
            raise DpkitUsageError(f"weight_column {weight_column!r} is the target; choose another column",
                                  param="weight_column")
        return weight_column
    if "count" in df.columns and target != "count":
        return "count"
    return None


def _weights(df: pd.DataFrame, column: str, source: str) -> np.ndarray:
    import pandas as pd

    w = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(private(
            f"{source}:{i + 2}: weight column {column!r} has {df[column].iloc[i]!r}; weights must be finite numbers >= 0",
            f"{source}: weight column {column!r} has a value that is not a finite number >= 0; "
            "weights must be finite numbers >= 0",
        ))
    return w


def load_dataset(
    df: pd.DataFrame,
    target: str,
    *,
    schema: Schema | None = None,
    weight_column: str | None = None,
    auto_weight: bool = True,
    source: str = "<data>",
) -> Dataset:
    """Split a table of strings into features, labels and weights.

    Rows holding the schema's missing token in a used column are kept when the schema's policy
    is ``keep`` (the token is a value: a category, or NaN in a numeric column), dropped (with a
    warning) when it is ``drop``, refused otherwise — the same rule as ``encode``. A
    generalized table holds ``(missing)`` instead of the token: a category like any other, so
    every generalized test row is scored. Rows of weight 0 are dropped (a ``--counts`` table
    may list empty cells).
    """
    if target not in df.columns:
        from dpkit.console import have_columns

        # a usage error, as publish's (exit 2 on the command line): the target named is not there
        raise DpkitUsageError(f"target {target!r} is not a column of {source} {have_columns(df.columns)}",
                              param="target")
    wcol = resolve_weight_column(df, target, weight_column, source) if (weight_column or auto_weight) else None
    columns = feature_columns(df, target, schema, wcol)
    if not columns:
        raise DataError(f"{source}: no feature columns besides the target {target!r}")
    keep = np.ones(len(df), dtype=bool)
    if schema is not None and schema.missing is not None and schema.missing_policy != "keep":
        is_missing = df[[*columns, target]].isin(list(schema.missing_tokens)).to_numpy()
        rows = is_missing.any(axis=1)
        if rows.any() and schema.missing_policy != "drop":
            r = int(np.flatnonzero(rows)[0])
            raise DataError(
                f"{private(f'{source}:{r + 2}', source)}: a value is missing ({schema.missing!r}); "
                f"set missing_policy: drop in {schema.path} to drop such rows"
            )
        # evaluation reads the owner's own records and releases nothing: the notice is there when
        # rows were dropped (a private run's is there whatever the data holds: load_warnings)
        if schema.missing_policy == "drop" and rows.any():
            warn(
                private(f"{source}: dropped {int(rows.sum())} row(s) with a missing value ({schema.missing!r})",
                        f"{source}: dropped rows with a missing value ({schema.missing!r})"),
                DpkitWarning,
            )
            keep &= ~rows
    weight = None
    if wcol is not None:
        weight = _weights(df, wcol, source)
        keep &= weight > 0
        weight = weight[keep]
    frame = df.loc[keep, columns].reset_index(drop=True)
    y = df.loc[keep, target].to_numpy(dtype=object)
    if len(y) == 0:
        raise DataError(f"{source}: no rows left to evaluate (all dropped or of weight 0)")
    return Dataset(frame, y, weight, source, np.flatnonzero(keep))


def make_model(model: str, kinds: dict[str, str], seed: int | None = 0, *, impute: bool = False) -> Any:
    """An unfitted scikit-learn pipeline: one-hot categoricals, numeric as-is, then ``model``.

    ``impute``: some numeric value is missing (NaN, a ``keep`` schema's token): the numeric
    columns get the median and a missing-indicator column (``SimpleImputer(add_indicator=True)``)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    cat = [c for c, k in kinds.items() if k == "categorical"]
    num = [c for c, k in kinds.items() if k == "numeric"]
    numeric_step: Any = StandardScaler() if model == "svm" else "passthrough"
    if impute:
        from sklearn.impute import SimpleImputer

        numeric_step = Pipeline([("impute", SimpleImputer(strategy="median", add_indicator=True)),
                                 *([("scale", numeric_step)] if model == "svm" else [])])
    features = ColumnTransformer(
        [("categorical", OneHotEncoder(handle_unknown="ignore"), cat), ("numeric", numeric_step, num)],
        sparse_threshold=0.3,
    )
    if model == "tree":
        from sklearn.tree import DecisionTreeClassifier

        clf: Any = DecisionTreeClassifier(
            criterion="entropy", min_weight_fraction_leaf=TREE_MIN_LEAF_FRACTION, random_state=seed
        )
    elif model == "svm":
        from sklearn.svm import LinearSVC

        clf = LinearSVC(C=1.0, dual="auto", max_iter=5000, random_state=seed)
    elif model == "forest":
        from sklearn.ensemble import RandomForestClassifier

        clf = RandomForestClassifier(n_estimators=FOREST_TREES, random_state=seed, n_jobs=1)
    else:
        raise DpkitUsageError(f"unknown model {model!r} (use {', '.join(MODELS)})")
    return Pipeline([("features", features), ("model", clf)])


def _to_frame(ds: Dataset, kinds: dict[str, str]) -> pd.DataFrame:
    import pandas as pd

    out = {}
    for c, k in kinds.items():
        # errors="coerce": a numeric column holds numbers and, under keep, missing tokens (NaN)
        out[c] = numbers(ds.X[c]) if k == "numeric" else ds.X[c].astype(str)
    return pd.DataFrame(out)


def check_overlap(train: Dataset, test: Dataset, kinds: dict[str, str]) -> None:
    """Warn when most test values of a categorical column never occur in training.

    The usual cause: a test file that was not generalized with the release's cut.
    """
    for c, k in kinds.items():
        if k != "categorical":
            continue
        seen = set(train.X[c].tolist())
        unseen = float(np.mean([v not in seen for v in test.X[c].tolist()]))
        if unseen > 0.5:
            warn(
                f"column {c!r}: {unseen:.0%} of the values in {test.source} never occur in "
                f"{train.source}; was the test file generalized with the release's cut (dpkit generalize)?",
                DpkitWarning,
            )


def fit_predict(train: Dataset, test: Dataset, *, model: str = "tree", schema: Schema | None = None, seed: int | None = 0) -> np.ndarray:
    """Fit ``model`` on ``train`` and return its predictions for ``test`` (labels as strings)."""
    return fit_scores(train, test, model=model, schema=schema, seed=seed)[0]


def fit_scores(train: Dataset, test: Dataset, *, model: str = "tree", schema: Schema | None = None,
               seed: int | None = 0) -> tuple[np.ndarray, list[str], np.ndarray | None]:
    """(predictions, classes, scores): ``model`` fitted on ``train``, applied to ``test``.

    ``scores`` has one column per class (``predict_proba``; a linear SVM's decision function
    for two classes), for ROC AUC; ``None`` when the model gives none.
    """
    missing = [c for c in train.X.columns if c not in test.X.columns]
    if missing:
        raise DataError(f"{test.source}: column(s) {', '.join(map(repr, missing))} of {train.source} not found")
    columns = list(train.X.columns)
    kinds = column_kinds([train.X, test.X], columns, schema)
    check_overlap(train, test, kinds)
    classes = sorted(set(train.y.astype(str).tolist()))
    if len(classes) == 1:
        warn(
            f"{train.source}: the training table has a single class ({classes[0]!r}); predicting it for every record",
            DpkitWarning,
        )
        return np.array([classes[0]] * len(test.y), dtype=object), classes, np.ones((len(test.y), 1))
    train_frame = _to_frame(train, kinds)
    test_frame = _to_frame(Dataset(test.X[columns], test.y, None, test.source), kinds)
    num = [c for c, k in kinds.items() if k == "numeric"]
    impute = bool(num) and bool(train_frame[num].isna().to_numpy().any() or test_frame[num].isna().to_numpy().any())
    pipe = make_model(model, kinds, seed, impute=impute)
    fit_params = {} if train.weight is None else {"model__sample_weight": train.weight}
    with warnings.catch_warnings():
        # LinearSVC's ConvergenceWarning is noise for a utility number; the score shows any harm
        warnings.filterwarnings("ignore", module="sklearn")
        pipe.fit(train_frame, train.y.astype(str), **fit_params)
        pred = pipe.predict(test_frame).astype(object)
        fitted = [str(c) for c in pipe.classes_]
        scores = None
        if hasattr(pipe, "predict_proba"):
            try:
                scores = np.asarray(pipe.predict_proba(test_frame), dtype=float)
            except AttributeError:  # a pipeline whose final step has no predict_proba
                scores = None
        if scores is None and hasattr(pipe, "decision_function") and len(fitted) == 2:
            d = np.asarray(pipe.decision_function(test_frame), dtype=float)
            scores = np.column_stack([-d, d])
    return pred, fitted, scores


def majority_floor(train: Dataset, test: Dataset) -> float:
    """Accuracy of always predicting the (weighted) majority class of ``train`` on ``test``."""
    return floor_report(train, test)["accuracy"]


def floor_report(train: Dataset, test: Dataset, *, positive: Any = None,
                 labels: list[Any] | None = None) -> dict[str, Any]:
    """Every metric of the majority-class predictor (constant scores: ROC AUC 0.5)."""
    from dpkit.evaluate.metrics import class_labels, classification_report, majority_class

    top = majority_class(train.y, train.weight)
    pred = np.array([top] * len(test.y), dtype=object)
    labels = labels if labels is not None else class_labels(test.y, pred)
    return classification_report(test.y, pred, positive=positive, labels=labels,
                                 scores=np.full((len(test.y), len(labels)), 1.0 / max(len(labels), 1)),
                                 score_classes=labels)


def scores_from_columns(df: pd.DataFrame, n: int) -> tuple[np.ndarray, list[str]] | None:
    """The per-class probabilities of a predictions file (``p_<class>`` columns, as ``forest
    predict --proba`` writes them), or None."""
    cols = [c for c in df.columns if str(c).startswith("p_")]
    if not cols or len(df) != n:
        return None
    try:
        values = df[cols].astype(float).to_numpy()
    except (TypeError, ValueError):
        return None
    return values, [str(c)[2:] for c in cols]


def read_predictions(df: pd.DataFrame, target: str, n: int, source: str) -> np.ndarray:
    """Predicted labels from a predictions file, row-aligned with the test table.

    The column used: ``prediction``, else the target's name, else the only column.
    """
    for c in ("prediction", "predicted", target):
        if c in df.columns:
            col = c
            break
    else:
        if len(df.columns) != 1:
            raise DataError(
                f"{source}: cannot tell which column holds the predictions; name it 'prediction' "
                f"or {target!r} (columns: {', '.join(df.columns[:8])})"
            )
        col = df.columns[0]
    if len(df) != n:
        raise DataError(private(
            f"{source}: has {len(df)} prediction rows but the test table has {n} rows; they must align",
            f"{source}: its prediction rows do not align with the test table's rows (not as many)",
        ))
    return df[col].to_numpy(dtype=object)


def dpkit_model_predictor(model_path: str, *, source: str = "<test>") -> Callable[[pd.DataFrame], Any]:
    """A predictor for :func:`score_tables` from a dpkit forest model (``dpkit forest train``):
    ``(labels, (probabilities, classes))``. ``source`` names the data in warnings (e.g. clipped
    values are the test file's, not the model's)."""
    from dpkit.algorithms.forest import model as learn_model

    model = learn_model.load_model(model_path)

    def predictor(frame: pd.DataFrame) -> Any:
        probs = learn_model.predict_proba(model, frame, source=source)
        labels = np.asarray(model.classes, dtype=object)[np.argmax(probs, axis=1)]
        return labels, (probs, [str(c) for c in model.classes])

    return predictor


def score_tables(
    train: pd.DataFrame | None,
    test: pd.DataFrame,
    target: str,
    *,
    model: str = "tree",
    schema: Schema | None = None,
    positive: str | None = None,
    weight_column: str | None = None,
    seed: int | None = 0,
    baseline_train: pd.DataFrame | None = None,
    baseline_test: pd.DataFrame | None = None,
    predictions: np.ndarray | None = None,
    predictor: Callable[[pd.DataFrame], Any] | None = None,
    sources: tuple[str, ...] = ("<train>", "<test>", "<baseline>", "<baseline-test>"),
    proba: tuple[np.ndarray, list[str]] | None = None,
    curve: bool = False,
) -> dict[str, Any]:
    """The whole ``dpkit evaluate classify`` computation on in-memory tables of strings.

    Trains ``model`` on ``train`` and scores it on ``test`` — or scores ``predictions``
    (one per row of ``test``), or the labels ``predictor(features of test)`` returns; with ``baseline_train`` also the same classifier trained on raw
    data and scored on ``baseline_test`` (default ``test``) — the non-private baseline —
    and the majority-class floor. ``proba``: the per-class scores of ``predictions`` (rows of
    ``test``, classes) for ROC AUC; a ``predictor`` may return ``(labels, (scores, classes))``.
    Returns plain data (see :func:`metrics.classification_report`), plus ``baseline_*`` and
    ``floor_*`` keys; with ``curve``, ``roc_curve`` (and ``baseline_roc_curve``) of a binary task
    (:func:`metrics.roc_points`). Warns when 99 % of the predictions are one class. Usable from
    ``run_experiment``.
    """
    from dpkit.evaluate.imbalance import one_class_warning
    from dpkit.evaluate.metrics import class_labels, classification_report, roc_points

    test_ds = load_dataset(test, target, schema=schema, auto_weight=False, source=sources[1])
    train_ds = None
    scores = score_classes = None
    if predictions is not None:
        if proba is not None:
            scores, score_classes = np.asarray(proba[0], dtype=float)[test_ds.rows], list(proba[1])
        predictions = np.asarray(predictions, dtype=object)[test_ds.rows]  # rows dropped from test
    elif predictor is not None:
        got = predictor(test_ds.X)
        if isinstance(got, tuple):  # (labels, (scores, classes))
            predictions, (scores, score_classes) = np.asarray(got[0], dtype=object), got[1]
        else:
            predictions = np.asarray(got, dtype=object)
    else:
        if train is None:
            raise DpkitUsageError("give a training table (train) or predictions (predictions)", param="train")
        train_ds = load_dataset(train, target, schema=schema, weight_column=weight_column, source=sources[0])
        predictions, score_classes, scores = fit_scores(train_ds, test_ds, model=model, schema=schema, seed=seed)
    labels = class_labels(test_ds.y, predictions)
    if positive is not None and positive not in labels:
        raise DpkitUsageError(f"positive {positive!r} is not a class of the test table "
                              f"({', '.join(map(str, labels))})", param="positive")
    out: dict[str, Any] = {"model": model if train_ds is not None else "predictions"}
    out.update(classification_report(test_ds.y, predictions, positive=positive, labels=labels, scores=scores,
                                     score_classes=score_classes))
    warning = one_class_warning(predictions, hint="accuracy is near the majority rate; read balanced_accuracy "
                                "and roc_auc")
    if warning:
        warn(f"{sources[0] if train_ds is not None else sources[1]}: the classifier {warning}",
                      DpkitWarning)
    positive = out["positive"]
    if curve and scores is not None and positive is not None:
        out["roc_curve"] = roc_points(test_ds.y, scores, list(score_classes or labels), positive)
    floor_source = train_ds
    if baseline_train is not None:
        # the raw table has no weights unless it has the same weight column
        raw_weight = weight_column if weight_column in baseline_train.columns else None
        raw_train = load_dataset(baseline_train, target, schema=schema, weight_column=raw_weight, source=sources[2] if len(sources) > 2 else "<baseline>")
        raw_test = test_ds if baseline_test is None else load_dataset(
            baseline_test, target, schema=schema, auto_weight=False, source=sources[3] if len(sources) > 3 else "<baseline-test>"
        )
        raw_pred, raw_classes, raw_scores = fit_scores(raw_train, raw_test, model=model if model in MODELS else "tree",
                                                       schema=schema, seed=seed)
        base = classification_report(raw_test.y, raw_pred, positive=positive,
                                     labels=class_labels(raw_test.y, raw_pred, labels), scores=raw_scores,
                                     score_classes=raw_classes)
        for key in SUMMARY_METRICS:
            out[f"baseline_{key}"] = base[key]
        if curve and raw_scores is not None and positive is not None:
            out["baseline_roc_curve"] = roc_points(raw_test.y, raw_scores, list(raw_classes), positive)
        _floor(out, floor_report(raw_train, raw_test, positive=positive, labels=class_labels(raw_test.y, labels)))
    elif floor_source is not None:
        _floor(out, floor_report(floor_source, test_ds, positive=positive, labels=labels))
    return out


#: the metrics the baseline and floor lines repeat (and ``evaluate sweep --metric`` can plot)
SUMMARY_METRICS = ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "macro_f1", "roc_auc")


def _floor(out: dict[str, Any], floor: dict[str, Any]) -> None:
    for key in ("accuracy", "balanced_accuracy", "macro_f1", "roc_auc"):
        out[f"floor_{key}"] = floor[key]
