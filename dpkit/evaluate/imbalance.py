"""The one-class warning shared by ``forest predict`` and ``evaluate classify``.

A model or a release that predicts one class for (almost) every row looks fine by accuracy on
an imbalanced target (it scores the majority rate) and is useless. Both commands say so, once,
on stderr. The share is computed from the predictions the user already holds, so the warning
is post-processing and costs no budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: the share of one class among the predictions at and above which the warning is given
ONE_CLASS_SHARE = 0.99
#: fewer predictions say nothing about the model: a notebook's ``predict(test.iloc[[7]])``
#: is one class by nature and used to warn "100.0 % of rows"
MIN_ROWS = 20


def one_class_warning(predictions: Sequence[Any], *, hint: str | None = None) -> str | None:
    """The warning for ``predictions`` when ≥ 99 % of them are one class, else ``None`` (also
    for fewer than :data:`MIN_ROWS` predictions).

    ``hint`` is appended as what to try (the CLI passes e.g. "try --decision balanced").
    Example: ``predicts 'no' for 99.6 % of rows; try --decision balanced``.
    """
    values = np.asarray(predictions, dtype=object)
    if values.size < MIN_ROWS:
        return None
    labels, counts = np.unique(values.astype(str), return_counts=True)
    top = int(np.argmax(counts))
    share = counts[top] / values.size
    if share < ONE_CLASS_SHARE:
        return None
    message = f"predicts {str(labels[top])!r} for {100 * share:.1f} % of rows"
    return f"{message}; {hint}" if hint else message
