"""What an estimator's fit spends: the ledger it books on, and what its rows have spent so far.

Every :meth:`fit` of a dpkit estimator is one ε-DP release of its training rows. Two things
follow, and both live here so that each estimator's ``fit`` calls them in one line:

* :func:`booking`: the fit books on the ledger (``ledger=``, else ``$DPKIT_LEDGER``) against the
  data set registered with the rows it is fitted on — ``X`` as given, without ``y`` (a fold
  ``X[train]`` of a registered ``X`` is recognised by its rows, :meth:`dpkit.Ledger.register`).
* :func:`note_fit`: this process keeps, per training row, the ε the estimator fits have spent on
  it; a fit on rows that an earlier fit used warns (:class:`dpkit.PrivacyLeakWarning`) with the
  ε those records have now spent in all — with or without a ledger. By sequential composition
  a record's privacy loss is the sum of the ε of every fit that saw it; fits on disjoint rows
  compose in parallel (each record pays only for the fits it is in).

The rows are recognised by 64-bit hashes of their values (:func:`dpkit.io.fingerprint.row_hashes`),
kept in this process only: two records with the same values count as one row here.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

from dpkit.errors import PrivacyLeakWarning

#: per column signature: (sorted distinct row hashes, (ε, δ) the fits of this process spent on each)
_SPENT: dict[str, tuple[np.ndarray, np.ndarray]] = {}
_LOCK = threading.Lock()


def booking(ledger: Any, X: Any) -> Any:
    """``ledger=`` for the private function an estimator's fit calls: book against ``X``."""
    from dpkit.io.fingerprint import in_memory
    from dpkit.run import Booking

    return Booking(ledger, X if in_memory(X) else np.asarray(X))  # a list of rows: as an array


def note_fit(X: Any, epsilon: float, delta: float = 0.0) -> float:
    """Count ``epsilon`` (and ``delta``) spent on every row of ``X``; warn when some rows were fitted before.

    Returns the largest ε any row of ``X`` has now spent in this process's fits (this one's
    included). Called once the fit has spent (its report is built). The warning adds up δ as
    well (basic composition: the δ of the fits a record is in add up, as their ε do), and names
    it when any of those fits spent one.
    """
    from dpkit.io.fingerprint import as_frame, row_hashes

    rows = row_hashes(as_frame(X))
    assert rows is not None  # in memory: as_frame gave a DataFrame
    signature, hashes = rows
    with _LOCK:
        keys, spent = _SPENT.get(signature, (np.empty(0, np.uint64), np.empty((0, 2))))
        pos = np.searchsorted(keys, hashes)
        known = pos < len(keys)
        known[known] = keys[pos[known]] == hashes[known]
        before = spent[pos[known]]
        merged = np.union1d(keys, hashes)
        total = np.zeros((len(merged), 2))
        total[np.searchsorted(merged, keys)] = spent
        total[np.searchsorted(merged, hashes)] += (float(epsilon), float(delta))
        _SPENT[signature] = (merged, total)
    most = float(before[:, 0].max()) + float(epsilon) if len(before) else float(epsilon)
    if len(before):
        most_delta = float(before[:, 1].max()) + float(delta)
        spent_now = f"epsilon={float(epsilon):g}" + (f", delta={float(delta):g}" if delta else "")
        in_all = f"epsilon={most:g}" + (f" and delta={most_delta:g}" if most_delta else "")
        warnings.warn(
            f"this fit spent {spent_now} on rows that earlier fits in this session already used: "
            f"those records have now spent up to {in_all} in all (sequential composition: every fit is "
            "a release of its training rows; a k-fold cross-validation spends (k-1)*epsilon on each record)",
            PrivacyLeakWarning, stacklevel=_user_level())
    return most


#: the packages between the user's line and a fit: dpkit's own, and scikit-learn's model
#: selection (``cross_val_score`` → ``fit``) with the joblib that runs it
_INSIDE = ("dpkit", "sklearn", "joblib")


def _user_level() -> int:
    """The ``stacklevel`` of the first frame outside dpkit, scikit-learn and joblib: the
    warning points at the notebook line that called ``fit`` or ``cross_val_score``."""
    import sys

    frame, level = sys._getframe(1), 1  # the frame that calls warnings.warn (note_fit) is level 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in _INSIDE:
        frame, level = frame.f_back, level + 1
    return level


def forget_fits() -> None:
    """Forget what this process's fits spent (tests; a new session)."""
    with _LOCK:
        _SPENT.clear()
