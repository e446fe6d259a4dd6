"""Utility evaluation as library calls (``dpkit evaluate ...``): read the files, score them.

These read the raw data: they are for the data owner, not a private release, and spend no ε.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpkit.errors import DataError, DpkitUsageError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def numeric_columns(df: pd.DataFrame, columns: list[str], name: str) -> np.ndarray:
    """The columns of ``df`` as an (n, d) float array; one-line errors naming file/line/column."""
    import numpy as np
    import pandas as pd

    from dpkit.console import private

    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataError(f"{name}: column(s) {', '.join(map(repr, missing))} not in the header ({', '.join(df.columns)})")
    out = np.empty((len(df), len(columns)))
    for j, c in enumerate(columns):
        v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(private(f"{name}:{i + 2}: column {c!r} has {df[c].iloc[i]!r}, not a finite number",
                                    f"{name}: column {c!r} has a value that is not a finite number"))
        out[:, j] = v
    return out


def evaluate_clustering(data: Any, centroids: str, *, columns: list[str] | None = None,
                        labels: str | None = None, compare: str | None = None, reference: bool = True,
                        **reading: Any) -> dict[str, Any]:
    """NICV of ``centroids`` on ``data`` (and of non-private k-means with the same k, their ratio),
    the F-measure against the ``labels`` column, and RCP against the ``compare`` centroids
    (DPQT paper, §6.1; :func:`dpkit.evaluate.clustering.evaluate_centroids`).

    Centroid files are read as ``dpkit cluster`` writes them (UTF-8, commas); ``reading``
    (``encoding``, ``delimiter``, …) describes ``data`` only, so a TSV or Latin-1 data file still
    pairs with dpkit's own output. ``columns`` default to the centroids' columns but ``cluster``.
    """
    from dpkit.api.inputs import read_options
    from dpkit.data.table import read_csv, read_table
    from dpkit.evaluate.clustering import evaluate_centroids

    cdf = read_csv(centroids)
    # the label column is "cluster", or "cluster_not_private" for a run that was not private
    cols = list(columns) if columns else [c for c in cdf.columns if c not in ("cluster", "cluster_not_private")]
    if not cols:
        raise DpkitUsageError("no columns to evaluate: name them", param="columns")
    opts = read_options(data, **reading)
    df = read_table(opts)
    points = numeric_columns(df, cols, opts.name)
    cents = numeric_columns(cdf, cols, centroids)
    other = numeric_columns(read_csv(compare), cols, compare) if compare else None
    if labels is not None and labels not in df.columns:
        raise DpkitUsageError(f"labels: column {labels!r} is not in {opts.name} (columns: {', '.join(df.columns)})",
                              param="labels")
    return evaluate_centroids(points, cents, labels=df[labels].to_numpy() if labels else None, other=other,
                              reference=reference)
