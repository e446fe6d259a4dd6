"""scikit-learn estimators over dpkit's private algorithms.

They follow scikit-learn's conventions (parameters only in ``__init__``, keyword-only but for
the first, stored as given and untouched by :meth:`fit`; ``get_params``/``set_params`` by those
names, so ``clone`` round-trips; ``fit`` returns ``self``; learned state ends in ``_``; input
checked as ``check_array`` checks it), so they fit in a ``Pipeline``, a grid search or
``cross_val_score``. Privacy has one consequence scikit-learn does not know about:
**every fit spends ε on its training data**. ``cross_val_score(..., cv=5)`` spends 4·ε on each
record (5·ε booked, docs/library.md); under a ``ledger`` (or ``$DPKIT_LEDGER``) each fit is
booked against the data set registered as its ``X``, and a fit on rows an earlier fit used
warns, with or without a ledger (:mod:`dpkit.api.fits`).

The public domains never come silently from the data: give a ``schema``; or ``bounds``
(numeric columns), ``categories`` (categorical columns) and ``classes``; or ``delta`` (and
``domain_share``), and a share of ε learns them under (ε, δ)-DP in the fit, as
:func:`dpkit.forest` does without a schema. :class:`DPQTKMeans` without ``bounds`` learns them
with a share of ε (pure ε-DP), as :func:`dpkit.cluster` does.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin

from dpkit.algorithms.cluster.dpqt import DPQTKMeans as _DPQT
from dpkit.algorithms.forest.dprf import DiffPRFs as _DiffPRFs
from dpkit.api.fits import booking, note_fit
from dpkit.errors import DataError, DpkitUsageError, ParameterTypeError
from dpkit.types import LedgerLike, SchemaLike, SeedLike

#: public bounds of numeric columns: {name: (lo, hi)}, or one (lo, hi) per column of X in order
Bounds = Mapping[str, tuple[float, float]] | Sequence[tuple[float, float]]


def _defaults(cls: type) -> dict[str, Any]:
    """The defaults of an algorithm's ``__init__``: the one place they are written."""
    import inspect

    return {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


FOREST_DEFAULTS = _defaults(_DiffPRFs)
DPQT_DEFAULTS = _defaults(_DPQT)


def _frame(X: Any, prefix: str = "x") -> Any:
    """``X`` as a DataFrame: a DataFrame keeps its column names, an array gets x0, x1, ...
    Checked as scikit-learn's ``check_array`` checks (:func:`_check_X`)."""
    import pandas as pd

    _check_X(X)
    if isinstance(X, pd.DataFrame):
        return X.reset_index(drop=True)
    arr = np.asarray(X, dtype=object)
    return pd.DataFrame(arr, columns=[f"{prefix}{j}" for j in range(arr.shape[1])])


def _check_X(X: Any) -> None:
    """Refuse what scikit-learn's ``check_array`` refuses, with its words (a sparse matrix, complex
    numbers, a shape that is not 2-D, no sample or no feature, NaN or infinity in numeric
    input), each one clear error: a :class:`ParameterTypeError` for a type, a
    :class:`DataError` (a ValueError) for a value. A DataFrame's missing values are left to the
    schema's missing tokens (:func:`dpkit.forest` reads a DataFrame as it reads a CSV)."""
    import pandas as pd

    if hasattr(X, "tocsr") or type(X).__module__.startswith("scipy.sparse"):
        raise ParameterTypeError("X is a sparse matrix: sparse input is not supported; pass a dense array or "
                                 "a DataFrame", param="X")
    frame = isinstance(X, pd.DataFrame)
    arr = X.to_numpy() if frame else np.asarray(X)
    if np.iscomplexobj(arr) or (arr.dtype == object and any(isinstance(v, complex) for v in arr.ravel()[:1000])):
        raise DataError("Complex data not supported: X holds complex numbers", param="X")
    if arr.ndim != 2:
        raise DataError(f"Expected 2D array, got {arr.ndim}D array instead (shape {arr.shape}). Reshape your data "
                        "either using X.reshape(-1, 1) if it has a single feature or X.reshape(1, -1) if it "
                        "holds a single sample", param="X")
    if arr.shape[1] == 0:
        raise DataError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.",
                        param="X")
    if arr.shape[0] == 0:
        raise DataError(f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required.",
                        param="X")
    if arr.dtype.kind in "fiub" or (frame and arr.dtype.kind != "O"):
        numbers = arr.astype(float, copy=False)
        if np.isinf(numbers).any() or (not frame and np.isnan(numbers).any()):
            raise DataError("Input X contains NaN or infinity: drop those rows, or give the values as a "
                            "DataFrame with the schema's missing token", param="X")


def _numeric(df: Any) -> Any:
    """The frame as floats; a value that is no number and no text is a :class:`ParameterTypeError`,
    a text that is no number a :class:`DataError`, each naming its column."""
    try:
        return df.astype(float)
    except (TypeError, ValueError):
        for c in df.columns:
            try:
                df[c].astype(float)
            except TypeError as exc:
                raise ParameterTypeError(f"X column {c!r}: {exc}", param="X") from None
            except ValueError:
                raise DataError(f"X column {c!r} is not numeric: k-means clusters numbers", param="X") from None
        raise


def _points(frame: Any, dates: Sequence[str]) -> np.ndarray:
    """The frame as an (n, d) float array: numbers as :func:`_numeric` reads them, each column of
    ``dates`` as day numbers (:func:`dpkit.schema.dates.parse_array`, as :func:`dpkit.cluster`
    reads a date column); a value there that is not a date is a :class:`DataError` naming it."""
    from dpkit.engine.inputs import datetimes_as_text, is_naive_datetime
    from dpkit.schema.dates import parse_array

    out = _numeric(frame[[c for c in frame.columns if c not in dates]]).reindex(columns=frame.columns)
    for c in dates:
        s = frame[c]
        days = parse_array(datetimes_as_text(s) if is_naive_datetime(s) else s, "date")
        bad = np.flatnonzero(np.isnan(days))
        if len(bad):
            # the value is not quoted: X is the private data, and a message may travel
            raise DataError(f"X column {c!r} is declared a date but holds a value that is not an ISO date "
                            "(YYYY-MM-DD): DPQTKMeans does not accept missing values; drop or fix those rows",
                            param="X")
        out[c] = days
    return out.to_numpy(dtype=float)


def _series_name(y: Any) -> str | None:
    """The name of ``y`` when it is a named pandas Series (its text), else None."""
    import pandas as pd

    if isinstance(y, pd.Series) and y.name is not None and str(y.name).strip():
        return str(y.name)
    return None


def _check_y(y: Any) -> np.ndarray:
    """``y`` as scikit-learn's classifiers take it: given, of class labels (not continuous), a
    column vector raveled with a ``DataConversionWarning``."""
    import pandas as pd
    from sklearn.exceptions import DataConversionWarning
    from sklearn.utils.multiclass import type_of_target

    if y is None:
        raise DpkitUsageError("DiffPRFsClassifier requires y to be passed, but the target y is None", param="y")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected: it is raveled",
                      DataConversionWarning, stacklevel=3)
        arr = arr.ravel()
    if arr.ndim == 1 and len(arr) and np.asarray(pd.isna(arr)).any():
        # as scikit-learn's "Input y contains NaN"; before anything is spent (np.unique raised a
        # raw TypeError on None after the fit had spent and booked its epsilon)
        raise DataError("Input y contains NaN or None: every row needs its class; drop the rows without one "
                        "(keep = y.notna())", param="y")
    if arr.ndim == 1 and arr.dtype.kind in "fc" and type_of_target(arr) == "continuous":
        raise DataError("Unknown label type: continuous. y holds continuous values; a classifier needs class "
                        "labels", param="y")
    return arr


def _check_fit(df: Any, y: Any | None = None) -> None:
    """A private fit needs records to hide among, and a classifier two classes."""
    if len(df) < 2:
        raise DataError(f"X has 1 sample (n_samples = {len(df)}): a private fit needs many records", param="X")
    if y is not None:
        classes = np.unique(np.asarray(y).astype(str))
        if len(classes) < 2:
            raise DataError(f"y has 1 class ({str(classes[0])!r}): a classifier needs at least two", param="y")


def _schema_from(columns: list[str], *, target: str | None, classes: Any, bounds: Any, categories: Any) -> Any:
    """A schema for ``columns`` from the public ``bounds`` ({name: (lo, hi)} or a list in
    column order), ``categories`` ({name: [values]}) and ``classes``; refused when a column's
    domain is not given (it would have to be read from the data)."""
    import yaml

    from dpkit.schema.parse import parse_schema

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
    n_estimators : int or "auto", default="auto"
        Number of trees; "auto" chooses it from noisy class counts with 5 % of ε
        (:func:`dpkit.algorithms.forest.dprf.plan_shape`; DiffPRFs' paper used 25).
    max_depth : int or "auto", default="auto"
        Maximum depth of every tree; "auto" as ``n_estimators`` (the paper used 5).
    schema : Schema or path, default=None
        The public domains of X's columns and of the target (named by the schema's target, or
        ``target``). Columns of X the schema declares ``ignore`` are left out.
    bounds : dict or list of (lo, hi), default=None
        Without a schema: public bounds of the numeric columns ({name: (lo, hi)}, or one pair
        per column).
    categories : dict, default=None
        Without a schema: public values of the categorical columns ({name: [values]}).
    classes : list, default=None
        The public class labels (required with ``bounds``/``categories``; with ``delta``, taken
        as public so that no ε is spent on them).
    delta : float, default=None
        Without a schema nor ``bounds``/``categories``: the domain of X and y is learned in each
        fit under (ε·``domain_share``, δ)-DP (docs/domain.md), as :func:`dpkit.forest` does; the
        forest gets the rest of ε. E.g. 1e-6; at most 1e-3. A DataFrame's missing values (NaN)
        are then values of their columns (docs/forest.md, "Missing values"): no row is dropped.
    domain_share : float, default=None
        With ``delta``: the share of ε that learns the domain (None: 0.2).
    target : str, default=None
        The target's column name, as :func:`dpkit.forest`'s ``target`` (default: the schema's
        target, else the name of ``y`` when it is a named Series that names no column of ``X``,
        else ``"y"``).
    target_name : str, default="deprecated"
        The name of ``target`` up to 0.5: deprecated, removed in 0.8 (a fit with it warns, as
        scikit-learn's renamed parameters do).
    features_per_node : int, "sqrt" or "all", default="sqrt"
        Attributes drawn at each node (:class:`dpkit.algorithms.forest.dprf.DiffPRFs`).
    utility : {"balanced", "max", "info-gain", "gini"}, default="balanced"
        The split utility.
    sampling : {"disjoint", "none"}, default="disjoint"
        "disjoint": every record goes to one tree (parallel composition).
    size_share : float, default=0.5
        The share of a leaf's ε that counts its records.
    leaf_factor : float, default=1.0
        Multiplies the leaf threshold √2·|C|/ε_c.
    random_state : int or str, default=None
        A secret key ``0x…`` (reproducible, still ε-DP) or an integer (reproducible, not
        private). None: a fresh key from the operating system.
    ledger : Ledger or path, default=None
        The privacy ledger that books each fit against the data set registered as ``X``
        (None: ``$DPKIT_LEDGER`` when set).

    Attributes
    ----------
    classes_ : ndarray
        The class labels, in the order of :meth:`predict_proba`'s columns.
    forest_ : dpkit.Forest
        The trained forest (its ``report`` is the fit's privacy report).
    report_ : dict
        The privacy report of the last fit.
    n_features_in_ : int
        The number of columns of X seen in fit.
    feature_names_in_ : ndarray
        The columns of X seen in fit.

    Examples
    --------
    >>> import numpy as np, dpkit
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(2000, 2))
    >>> y = (X[:, 0] > 5).astype(int)
    >>> clf = dpkit.DiffPRFsClassifier(epsilon=5.0, bounds=[(0, 10), (0, 10)], classes=[0, 1],
    ...                                random_state="0x5d1c8f0b6e3a47c29b8e1f4a7d2c6b90").fit(X, y)
    >>> clf.predict(X[:3]).shape
    (3,)
    """

    def __init__(self, epsilon: float = 1.0, *, n_estimators: int | str = FOREST_DEFAULTS["n_trees"],
                 max_depth: int | str = FOREST_DEFAULTS["max_depth"], schema: SchemaLike | None = None,
                 bounds: Bounds | None = None, categories: Mapping[str, Sequence[object]] | None = None,
                 classes: ArrayLike | None = None, delta: float | None = None,
                 domain_share: float | None = None, target: str | None = None,
                 features_per_node: int | str = FOREST_DEFAULTS["features_per_node"],
                 utility: str = FOREST_DEFAULTS["utility"], sampling: str = FOREST_DEFAULTS["sampling"],
                 size_share: float = FOREST_DEFAULTS["size_share"], leaf_factor: float = FOREST_DEFAULTS["leaf_factor"],
                 random_state: SeedLike = None, ledger: LedgerLike = None,
                 target_name: str | None = "deprecated") -> None:
        self.epsilon = epsilon
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.schema = schema
        self.bounds = bounds
        self.categories = categories
        self.classes = classes
        self.delta = delta
        self.domain_share = domain_share
        self.target = target
        self.features_per_node = features_per_node
        self.utility = utility
        self.sampling = sampling
        self.size_share = size_share
        self.leaf_factor = leaf_factor
        self.random_state = random_state
        self.ledger = ledger
        self.target_name = target_name

    def _target(self) -> str | None:
        """``target``, or the deprecated ``target_name`` with its warning (at the caller's line)."""
        if self.target_name == "deprecated":
            return self.target
        if self.target is not None:
            raise ParameterTypeError("DiffPRFsClassifier got both target_name (deprecated) and target; give target "
                                     "only", param="target")
        from dpkit.validate import deprecated

        deprecated("target_name=", "target=", "DiffPRFsClassifier")
        return self.target_name

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # categorical columns are text, read as dpkit.forest reads a CSV
        tags.input_tags.categorical = True
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike) -> DiffPRFsClassifier:
        """Train on ``X, y``, spending ``epsilon`` (one DP release of this training data).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : DiffPRFsClassifier
        """
        from dpkit.api.forest import forest
        from dpkit.engine.inputs import schema_of

        df = _frame(X)
        named = _series_name(y)
        y = _check_y(y)
        if y.ndim != 1 or len(y) != len(df):
            raise DataError(f"y must be 1-dimensional with one label per row of X ({len(df)}), got shape {y.shape}",
                            param="y")
        _check_fit(df, y)
        columns = [str(c) for c in df.columns]
        df.columns = columns
        learn: dict[str, Any] = {}
        # the target's name: target=, else a named Series' name (as scikit-learn users pass
        # df["income"]), unless X has a column so named; else "y"
        given_target = self._target()
        fallback = named if named is not None and named not in columns else "y"
        if self.schema is not None:
            schema, _ = schema_of(self.schema)
            target = given_target or schema.target or fallback
            # the schema says which columns are of no use, as dpkit.forest reads it
            ignored = {c for c in columns if c in schema.columns and schema.columns[c].kind == "ignore"}
            features = [c for c in columns if c not in ignored]
        elif self.delta is not None:
            if self.bounds is not None or self.categories is not None:
                raise DpkitUsageError("bounds and categories give the domain: leave delta out (delta learns it)",
                                      param="delta")
            # every column of X: those the learning leaves out (no value above its threshold) are
            # then left out of the forest, with the warning that names them
            target, schema, features = given_target or fallback, None, None
            learn = {"delta": self.delta, "domain_share": self.domain_share,
                     "values": {target: [str(c) for c in self.classes]} if self.classes is not None else None}
        else:
            target = given_target or fallback
            features = columns
            schema = _schema_from(columns, target=target, classes=self.classes, bounds=self.bounds,
                                  categories=self.categories)
        if target in columns:
            raise DpkitUsageError(f"X has a column named like the target {target!r}; pass target=", param="X")
        data = df.assign(**{target: y.astype(str) if learn else y})
        self.forest_ = forest(
            data, schema=schema, epsilon=self.epsilon, target=target, n_estimators=self.n_estimators,
            max_depth=self.max_depth, columns=features, random_state=self.random_state, ledger=booking(self.ledger, X),
            features_per_node=self.features_per_node, utility=self.utility, sampling=self.sampling,
            size_share=self.size_share, leaf_factor=self.leaf_factor, **learn,
        )
        labels = list(self.classes) if self.classes is not None else list(np.unique(y))
        by_text = {str(c): c for c in labels}
        self.classes_ = np.asarray([by_text.get(c, c) for c in self.forest_.classes])
        self.report_ = self.forest_.report
        note_fit(X, self.report_["privacy"]["epsilon_spent"], self.report_["privacy"].get("delta_spent", 0.0))
        self._columns = columns
        if hasattr(X, "columns"):  # scikit-learn's rule: only a DataFrame's columns are feature names
            self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.n_features_in_ = len(columns)
        return self

    def _check(self, X: Any) -> Any:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "forest_")
        df = _frame(X)
        if len(df.columns) != self.n_features_in_:
            raise DataError(f"X has {len(df.columns)} features, but DiffPRFsClassifier is expecting "
                            f"{self.n_features_in_} features as input", param="X")
        df.columns = list(self._columns)
        return df

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities, one column per class of :attr:`classes_`. Spends nothing."""
        df = self._check(X)
        return self.forest_.predict_proba(df).to_numpy()

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The most probable class of every row. Spends nothing."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DPQTKMeans(ClusterMixin, BaseEstimator):
    """Differentially private k-means by a private quadtree (DPQTk-means, Zhang & Cheng) for scikit-learn.

    Each :meth:`fit` spends ``epsilon`` on ``X`` (docs/cluster.md). The bounds are public: given,
    or learned in the fit with ``domain_share`` of ε (pure ε-DP, one exponential mechanism per
    column on a public grid), as :func:`dpkit.cluster` does; points outside are clipped.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters k.
    epsilon : float, default=1.0
        The privacy budget of one fit.
    bounds : list of (lo, hi), default=None
        One public (lo, hi) per column of X. None: learned in each fit (``domain_share``).
    domain_share : float, default=None
        Without ``bounds``: the share of ε that learns them (None: 0.1).
    date : str or list of str, default=None
        Without ``bounds``: the columns of X (a DataFrame's names; x0, x1, … for an array) that
        hold ISO dates (``YYYY-MM-DD`` text, or naive datetimes), declared (public), as
        :func:`dpkit.cluster`'s ``date``: each is clustered as its day number (days since
        1970-01-01), its bounds learned on the calendar grid. ``cluster_centers_`` and
        :meth:`predict` use day numbers; ``clustering_.centroids`` gives them as ISO dates. A
        value that is not a date is refused before anything is spent, as NaN is.
    gamma : float, default=0.3
        The quadtree's budget decay across levels.
    max_height : int, default=None
        The quadtree's height (None: chosen from a noisy count).
    threshold : float, default=None
        A node's split threshold (None: chosen from a noisy count).
    allocation : {"uniform", ...}, default="uniform"
        How ε is split across the levels (:class:`dpkit.algorithms.cluster.dpqt.DPQTKMeans`).
    split : str, default="auto"
        How a node splits (:class:`dpkit.algorithms.cluster.dpqt.DPQTKMeans`).
    n_estimate : int, default=None
        A public estimate of the number of rows (None: a noisy count).
    random_state : int or str, default=None
        A secret key ``0x…`` (reproducible, still ε-DP) or an integer (reproducible, not
        private). None: a fresh key from the operating system.
    ledger : Ledger or path, default=None
        The privacy ledger that books each fit against the data set registered as ``X``
        (None: ``$DPKIT_LEDGER`` when set).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The private centroids.
    labels_ : ndarray of shape (n_samples,)
        The nearest centre of every training row (post-processing: they are the training
        rows' own assignments — private to the data owner, like ``dpkit cluster --assign``).
    report_ : dict
        The privacy report of the last fit.
    n_features_in_ : int
        The number of columns of X seen in fit.

    Examples
    --------
    >>> import numpy as np, dpkit
    >>> X = np.random.default_rng(0).normal(size=(5000, 2))
    >>> km = dpkit.DPQTKMeans(3, epsilon=1.0, random_state="0x5d1c8f0b6e3a47c29b8e1f4a7d2c6b90").fit(X)
    >>> km.cluster_centers_.shape
    (3, 2)
    """

    def __init__(self, n_clusters: int = 8, *, epsilon: float = 1.0, bounds: Sequence[tuple[float, float]] | None = None,
                 domain_share: float | None = None, date: str | Sequence[str] | None = None,
                 gamma: float = DPQT_DEFAULTS["gamma"],
                 max_height: int | None = None, threshold: float | None = None,
                 allocation: str = DPQT_DEFAULTS["allocation"], split: str = DPQT_DEFAULTS["split"],
                 n_estimate: int | None = None, random_state: SeedLike = None, ledger: LedgerLike = None) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.domain_share = domain_share
        self.date = date
        self.gamma = gamma
        self.max_height = max_height
        self.threshold = threshold
        self.allocation = allocation
        self.split = split
        self.n_estimate = n_estimate
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: ArrayLike, y: object = None) -> DPQTKMeans:
        """Cluster ``X``, spending ``epsilon`` (one DP release of it).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), numeric
        y : ignored

        Returns
        -------
        self : DPQTKMeans
        """
        from dpkit.api.cluster import cluster
        from dpkit.data.counting import nearest_centre
        from dpkit.domain.metadata import names

        frame = _frame(X)
        frame.columns = columns = [str(c) for c in frame.columns]
        if self.date is not None and self.bounds is not None:  # as dpkit.cluster refuses it
            raise DpkitUsageError("date applies only when the bounds are learned (bounds=None)", param="date")
        dates = names(self.date, "date", columns)
        points = _points(frame, dates)
        _check_fit(points)
        if np.isnan(points).any():
            # as for an array (_check_X), and before anything is spent: the fit used to drop
            # those rows, spend (and book) its ε, then fail on labels_ (predict refuses NaN)
            raise DataError("Input X contains NaN: DPQTKMeans does not accept missing values, as scikit-learn's "
                            "KMeans; drop those rows (X.dropna()) or impute them", param="X")
        # the numbers as floats, the dates as given (ISO text or datetimes: cluster reads both)
        df = _numeric(frame[[c for c in columns if c not in dates]]).assign(**{c: frame[c] for c in dates})[columns]
        options = {k: getattr(self, k) for k in ("gamma", "max_height", "threshold", "allocation", "split",
                                                 "n_estimate") if getattr(self, k) is not None}
        self.clustering_ = cluster(df, columns=columns, n_clusters=self.n_clusters, epsilon=self.epsilon,
                                   bounds=None if self.bounds is None else list(self.bounds),
                                   domain_share=self.domain_share, date=dates or None, algorithm="dpqt",
                                   random_state=self.random_state, ledger=booking(self.ledger, X), **options)
        self.cluster_centers_ = self.clustering_._centres()
        self.report_ = self.clustering_.report
        note_fit(X, self.report_["privacy"]["epsilon_spent"], self.report_["privacy"].get("delta_spent", 0.0))
        self.n_features_in_ = len(columns)
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.dates_ = dates
        self.labels_ = nearest_centre(points, self.cluster_centers_)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The index of the nearest centre of every row. Spends nothing."""
        from sklearn.utils.validation import check_is_fitted

        from dpkit.data.counting import nearest_centre

        check_is_fitted(self, "cluster_centers_")
        frame = _frame(X)
        frame.columns = [str(c) for c in frame.columns]
        points = _points(frame, [c for c in getattr(self, "dates_", []) if c in frame.columns])
        if points.shape[1] != self.n_features_in_:
            raise DataError(f"X has {points.shape[1]} features, but DPQTKMeans is expecting {self.n_features_in_} "
                            "features as input", param="X")
        return nearest_centre(points, self.cluster_centers_)
