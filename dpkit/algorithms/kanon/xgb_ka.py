"""XGB-KA's feature ranking: XGBoost "gain" importance (Wang & Wan, §2(2) and Algorithm 1).

The paper ranks the candidate quasi-identifiers by the *average gain* of the splits that use
them (its importance formula: a feature's gains summed over the trees and averaged),
i.e. XGBoost's ``importance_type="gain"``, of a model predicting the class from all the
candidates; docs/algorithms.md §4.

Categorical columns: dpkit uses XGBoost's native categorical support
(``enable_categorical=True`` with pandas ``category`` columns, ``tree_method="hist"``)
rather than one-hot columns. A split then partitions a feature's categories as a set, and
the average gain is reported per original feature directly — with one-hot columns each
split is one category against the rest, a feature's gain is spread over many dummy
columns and must be recombined (total gain / number of splits), and a high-cardinality
feature such as Adult's native-country turns into dozens of columns. Integer codes
(the other shortcut) would impose an arbitrary order on the categories and change the
ranking. Numeric columns are given as numbers.

Determinism: one thread (``n_jobs=1``) and a fixed ``random_state``; no row or column
subsampling, so the same data and seed give the same ranking.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_TREES = 100
DEFAULT_DEPTH = 6


def xgboost_gains(
    X: pd.DataFrame,
    y: np.ndarray,
    n_classes: int,
    *,
    random_state: int = 0,
    n_estimators: int = DEFAULT_TREES,
    max_depth: int = DEFAULT_DEPTH,
    n_jobs: int = 1,
) -> dict[str, float]:
    """Average split gain of every column of ``X`` in an XGBoost model of ``y``.

    ``X`` columns are ``category`` (native categorical splits) or numeric dtype; ``y`` are
    class codes in ``[0, n_classes)``. A feature no tree splits on has gain 0.
    """
    import pandas as pd
    import xgboost as xgb

    names = list(X.columns)
    if not names:
        return {}
    # XGBoost refuses some characters ('[', ']', '<') in feature names: use positional names
    frame = pd.DataFrame({f"f{i}": X[c] for i, c in enumerate(names)}, index=X.index)
    model = xgb.XGBClassifier(
        n_estimators=n_estimators,
        max_depth=max_depth,
        tree_method="hist",
        enable_categorical=True,
        max_cat_to_onehot=1,  # always partition-based categorical splits
        n_jobs=n_jobs,
        random_state=int(random_state) % (2**31),
        importance_type="gain",
        objective="binary:logistic" if n_classes == 2 else "multi:softprob",
        verbosity=0,
    )
    with signals_after_xgboost():
        model.fit(frame, np.asarray(y, dtype=np.int64))
    score = model.get_booster().get_score(importance_type="gain")
    return {c: float(score.get(f"f{i}", 0.0)) for i, c in enumerate(names)}


@contextlib.contextmanager
def signals_after_xgboost() -> Iterator[None]:
    """Note SIGINT and SIGTERM while XGBoost runs, and deliver the first right after it.

    XGBoost reads its training data through Python callbacks called from C (ctypes). A
    KeyboardInterrupt raised inside one cannot propagate: Python prints it as "Exception ignored
    … Traceback" and XGBoost then fails with an error of its own, so Ctrl-C during the ranking
    read as a crash. Here the handlers only note the signal (whichever thread it reached, Python
    runs them in the main thread); after the fit the usual handlers are back and get it
    (``signal.raise_signal``): Ctrl-C ends the run as anywhere else, one fit later at most.
    Main thread only: elsewhere Python delivers no signal to Python code.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, frame: object) -> None:
        noted.append(signum)

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        if noted:
            signal.raise_signal(noted[0])
