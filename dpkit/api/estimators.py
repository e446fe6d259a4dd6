"""scikit-learn estimators over dpkit's private algorithms.

They follow scikit-learn's conventions (parameters only in ``__init__``, stored as given and
untouched by :meth:`fit`; ``get_params``/``set_params`` by those names, so ``clone`` round-trips;
``fit`` returns ``self``; learned state ends in ``_``), so they fit in a ``Pipeline``, a grid
search or ``cross_val_score``. Privacy has one consequence scikit-learn does not know about:
**every fit spends ε on its training data**. ``cross_val_score(..., cv=5)`` spends 4·ε on each
record (5·ε booked, docs/library.md); under a ``ledger`` (or ``$DPKIT_LEDGER``) each fit is
booked against the data set registered as its ``X``, and a fit on rows an earlier fit used
warns, with or without a ledger (:mod:`dpkit.api.fits`).

The public domains never come from the data: give a ``schema``, or ``bounds`` (numeric
columns), ``categories`` (categorical columns) and ``classes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin

from dpkit.api.fits import booking, note_fit
from dpkit.errors import DpkitUsageError
from dpkit.kmeans.dpqt import DPQTKMeans as _DPQT
from dpkit.learn.dprf import DiffPRFs as _DiffPRFs


def _defaults(cls: type) -> dict[str, Any]:
    """The defaults of an algorithm's ``__init__``: the one place they are written."""
    import inspect

    return {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


FOREST_DEFAULTS = _defaults(_DiffPRFs)
DPQT_DEFAULTS = _defaults(_DPQT)


def _frame(X: Any, prefix: str = "x") -> Any:
    """``X`` as a DataFrame: a DataFrame keeps its column names, an array gets x0, x1, ..."""
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        return X.reset_index(drop=True)
    arr = np.asarray(X, dtype=object)
    if arr.ndim != 2:
        raise DpkitUsageError(f"X must be 2-dimensional, got shape {arr.shape}", param="X")
    return pd.DataFrame(arr, columns=[f"{prefix}{j}" for j in range(arr.shape[1])])


def _schema_from(columns: list[str], *, target: str | None, classes: Any, bounds: Any, categories: Any) -> Any:
    """A schema for ``columns`` from the public ``bounds`` ({name: (lo, hi)} or a list in
    column order), ``categories`` ({name: [values]}) and ``classes``; refused when a column's
    domain is not given (it would have to be read from the data)."""
    import yaml

    from dpkit.data.schema import parse_schema

    if bounds is not None and not isinstance(bounds, dict):
        pairs = list(bounds)
        if len(pairs) != len(columns):
            raise DpkitUsageError(f"bounds has {len(pairs)} (lo, hi) pairs for {len(columns)} columns", param="bounds")
        bounds = dict(zip(columns, pairs, strict=True))
    bounds, categories = dict(bounds or {}), dict(categories or {})
    doc: dict[str, Any] = {"columns": {}}
    for c in columns:
        if c in bounds:
            lo, hi = bounds[c]
            doc["columns"][c] = {"type": "numeric", "bounds": [float(lo), float(hi)]}
        elif c in categories:
            doc["columns"][c] = {"type": "categorical", "values": [str(v) for v in categories[c]]}
        else:
            raise DpkitUsageError(
                f"column {c!r} has no public domain: give it in bounds= (numeric) or categories=, or give a "
                "schema (domains are never read from the data)", param="bounds")
    if target is not None:
        if classes is None:
            raise DpkitUsageError("classes is required without a schema (the public class labels; never read "
                                  "from the data)", param="classes")
        doc["columns"][target] = {"type": "categorical", "values": [str(v) for v in classes]}
        doc["target"] = target
    return parse_schema(yaml.safe_dump(doc, sort_keys=False), "<estimator>")


class DiffPRFsClassifier(ClassifierMixin, BaseEstimator):
    """A differentially private random forest (DiffPRFs, Mu, Ding, Song & Lu 2016) for scikit-learn.

    Each :meth:`fit` is one ε-DP release of its training data (docs/forest.md): it spends
    ``epsilon`` on ``X, y`` every time it is called — a cross-validation with 5 folds spends
    4·ε on each record. With ``ledger`` every fit is booked against the data set registered as
    ``X`` (a fold of it included), and a fit on rows an earlier fit used warns
    (:class:`dpkit.PrivacyLeakWarning`), with or without a ledger.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy budget of one fit.
    n_estimators : int, default=25
        Number of trees.
    max_depth : int, default=5
        Maximum depth of every tree.
    schema : Schema or path, optional
        The public domains of X's columns and of the target (named by the schema's target, or
        ``target_name``). Without it, ``bounds``, ``categories`` and ``classes`` give them.
    bounds : dict or list of (lo, hi), optional
        Public bounds of the numeric columns ({name: (lo, hi)}, or one pair per column).
    categories : dict, optional
        Public values of the categorical columns ({name: [values]}).
    classes : list, optional
        The public class labels (required without a schema).
    target_name : str, optional
        The target's column name in the schema (default: the schema's target, else ``"y"``).
    features_per_node, utility, sampling, size_share, leaf_factor :
        As :class:`dpkit.learn.dprf.DiffPRFs`.
    random_state : int or str, optional
        A secret key ``0x…`` (reproducible, still ε-DP) or an integer (reproducible, not private).
    ledger : Ledger or path, optional
        The privacy ledger that books each fit against the data set registered as ``X``
        (default: ``$DPKIT_LEDGER`` when set).

    Attributes
    ----------
    classes_ : ndarray
        The class labels, in the order of :meth:`predict_proba`'s columns.
    forest_ : dpkit.Forest
        The trained forest (its ``report`` is the fit's privacy report).
    report_ : dict
        The privacy report of the last fit.
    feature_names_in_ : ndarray
        The columns of X seen in fit.
    """

    def __init__(self, epsilon: float = 1.0, n_estimators: int = FOREST_DEFAULTS["n_trees"],
                 max_depth: int = FOREST_DEFAULTS["max_depth"], schema: Any = None, bounds: Any = None,
                 categories: Any = None, classes: Any = None, target_name: str | None = None,
                 features_per_node: int | str = FOREST_DEFAULTS["features_per_node"],
                 utility: str = FOREST_DEFAULTS["utility"], sampling: str = FOREST_DEFAULTS["sampling"],
                 size_share: float = FOREST_DEFAULTS["size_share"], leaf_factor: float = FOREST_DEFAULTS["leaf_factor"],
                 random_state: int | str | None = None, ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.schema = schema
        self.bounds = bounds
        self.categories = categories
        self.classes = classes
        self.target_name = target_name
        self.features_per_node = features_per_node
        self.utility = utility
        self.sampling = sampling
        self.size_share = size_share
        self.leaf_factor = leaf_factor
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> DiffPRFsClassifier:
        """Train on ``X, y``, spending ``epsilon`` (one DP release of this training data)."""
        from dpkit.api.forest import forest
        from dpkit.api.inputs import schema_of

        df = _frame(X)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(df):
            raise DpkitUsageError(f"y must be 1-dimensional with one label per row of X ({len(df)})", param="y")
        columns = [str(c) for c in df.columns]
        df.columns = columns
        if self.schema is not None:
            schema, _ = schema_of(self.schema)
            target = self.target_name or schema.target or "y"
        else:
            target = self.target_name or "y"
            schema = _schema_from(columns, target=target, classes=self.classes, bounds=self.bounds,
                                  categories=self.categories)
        if target in columns:
            raise DpkitUsageError(f"X has a column named like the target {target!r}; pass target_name=", param="X")
        data = df.assign(**{target: y})
        self.forest_ = forest(
            data, schema=schema, epsilon=self.epsilon, target=target, trees=self.n_estimators,
            depth=self.max_depth, columns=columns, seed=self.random_state, ledger=booking(self.ledger, X),
            features_per_node=self.features_per_node, utility=self.utility, sampling=self.sampling,
            size_share=self.size_share, leaf_factor=self.leaf_factor,
        )
        labels = list(self.classes) if self.classes is not None else list(self.forest_.classes)
        by_text = {str(c): c for c in labels}
        self.classes_ = np.asarray([by_text.get(c, c) for c in self.forest_.classes])
        self.report_ = self.forest_.report
        note_fit(X, self.report_["privacy"]["epsilon_spent"])
        self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.n_features_in_ = len(columns)
        return self

    def _check(self, X: Any) -> Any:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "forest_")
        df = _frame(X)
        if len(df.columns) != self.n_features_in_:
            raise DpkitUsageError(f"X has {len(df.columns)} columns; the forest was fitted on {self.n_features_in_}",
                                  param="X")
        df.columns = list(self.feature_names_in_)
        return df

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, one column per class of :attr:`classes_`. Spends nothing."""
        df = self._check(X)
        return self.forest_.predict_proba(df).to_numpy()

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of every row. Spends nothing."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DPQTKMeans(ClusterMixin, BaseEstimator):
    """Differentially private k-means by a private quadtree (DPQTk-means, Zhang & Cheng) for scikit-learn.

    Each :meth:`fit` spends ``epsilon`` on ``X`` (docs/cluster.md); the bounds are public and
    required (points outside are clipped).

    Parameters
    ----------
    n_clusters : int, default=8
    epsilon : float, default=1.0
    bounds : list of (lo, hi)
        One public (lo, hi) per column of X.
    gamma, max_height, threshold, allocation, split, n_estimate :
        As :class:`dpkit.kmeans.dpqt.DPQTKMeans` (None: its default).
    random_state : int or str, optional
        A secret key ``0x…`` (reproducible, still ε-DP) or an integer (reproducible, not private).
    ledger : Ledger or path, optional

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray
        The nearest centre of every training row (post-processing: they are the training
        rows' own assignments — private to the data owner, like ``dpkit cluster --assign``).
    report_ : dict
    """

    def __init__(self, n_clusters: int = 8, epsilon: float = 1.0, bounds: Any = None,
                 gamma: float = DPQT_DEFAULTS["gamma"], max_height: int | None = None, threshold: float | None = None,
                 allocation: str = DPQT_DEFAULTS["allocation"], split: str = DPQT_DEFAULTS["split"],
                 n_estimate: int | None = None, random_state: int | str | None = None, ledger: Any = None) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.gamma = gamma
        self.max_height = max_height
        self.threshold = threshold
        self.allocation = allocation
        self.split = split
        self.n_estimate = n_estimate
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any = None) -> DPQTKMeans:
        """Cluster ``X``, spending ``epsilon`` (one DP release of it)."""
        from dpkit.api.cluster import cluster

        df = _frame(X).astype(float)
        columns = [str(c) for c in df.columns]
        df.columns = columns
        if self.bounds is None:
            raise DpkitUsageError("bounds is required: one public (lo, hi) per column (never read from the data)",
                                  param="bounds")
        options = {k: getattr(self, k) for k in ("gamma", "max_height", "threshold", "allocation", "split",
                                                 "n_estimate") if getattr(self, k) is not None}
        self.clustering_ = cluster(df, columns=columns, k=self.n_clusters, epsilon=self.epsilon,
                                   bounds=list(self.bounds), algorithm="dpqt", seed=self.random_state,
                                   ledger=booking(self.ledger, X), **options)
        self.cluster_centers_ = self.clustering_.centroids[columns].to_numpy(dtype=float)
        self.report_ = self.clustering_.report
        note_fit(X, self.report_["privacy"]["epsilon_spent"])
        self.n_features_in_ = len(columns)
        self.labels_ = self.predict(df.to_numpy())
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The index of the nearest centre of every row. Spends nothing."""
        from sklearn.utils.validation import check_is_fitted

        from dpkit.data.counting import nearest_centre

        check_is_fitted(self, "cluster_centers_")
        points = np.asarray(_frame(X).to_numpy(dtype=float))
        if points.shape[1] != self.n_features_in_:
            raise DpkitUsageError(f"X has {points.shape[1]} columns; fitted on {self.n_features_in_}", param="X")
        return nearest_centre(points, self.cluster_centers_)
