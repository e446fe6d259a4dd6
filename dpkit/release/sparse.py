"""The released table: a noisy contingency table over (cut × class), kept sparse.

Every cell of the (cut × class) table gets DLap(ε₂) noise, empty cells included
(docs/algorithms.md §1), through :func:`dpkit.privacy.mechanisms.sparse_discrete_laplace`, which
samples the empty cells that come out positive instead of visiting Π|cut_j|·|C| cells
(Cormode et al., ICDT 2012). Negative counts become 0 (post-processing): only positive
cells are kept. Turning cells into rows of labels is post-processing too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpkit.engine.frame import Frame
from dpkit.engine.keys import Col
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.mechanisms import sparse_discrete_laplace
from dpkit.release.cut import Cut

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class NoisyTable:
    """The DP release: positive cells ``(k, d+1)`` (predictors then class) and their counts."""

    cut: Cut
    class_labels: list[str]
    cells: np.ndarray
    counts: np.ndarray

    @property
    def n_records(self) -> int:
        """Number of released records (a noisy total, safe to publish)."""
        return int(self.counts.sum())

    def to_frame(self, *, counts: bool = False, columns: list[str] | None = None) -> pd.DataFrame:
        """Rows of generalized labels: one per released record, or one per cell with ``count``.

        ``columns`` orders the output (default: predictors then the target).
        """
        import pandas as pd

        names = self.cut.columns + [self.cut.target]
        labels = [np.asarray(v, dtype=object) for v in self.cut.labels().values()]
        labels.append(np.asarray(self.class_labels, dtype=object))
        cells = self.cells if counts else np.repeat(self.cells, self.counts, axis=0)
        data = {n: lab[cells[:, j]] for j, (n, lab) in enumerate(zip(names, labels, strict=True))}
        df = pd.DataFrame(data, columns=names)
        if columns is not None:
            df = df[[c for c in columns if c in df.columns]]
        if counts:
            df["count"] = self.counts
        return df


def _csv_field(value: str) -> str:
    if any(ch in value for ch in ',"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_release(table: NoisyTable, path: str, *, counts: bool = False, columns: list[str] | None = None) -> None:
    """Write the release as CSV (atomically; ``-`` = stdout), like :meth:`NoisyTable.to_frame`.

    Each cell's line is formatted once and repeated by its count: much faster than a
    DataFrame with one row per released record.
    """
    from dpkit.data.table import atomic_output

    names = table.cut.columns + [table.cut.target]
    labels = list(table.cut.labels().values()) + [table.class_labels]
    order = [names.index(c) for c in (columns or names) if c in names]
    quoted = [[_csv_field(v) for v in labels[j]] for j in range(len(names))]
    header = ",".join(_csv_field(names[j]) for j in order) + (",count" if counts else "")
    lines = [",".join(quoted[j][int(cell[j])] for j in order) for cell in table.cells]
    if counts:
        lines = [f"{line},{int(c)}" for line, c in zip(lines, table.counts, strict=True)]
        body = lines
    else:
        body = np.repeat(np.asarray(lines, dtype=object), table.counts).tolist()
    with atomic_output(path) as fh:
        fh.write(header + "\n")
        if body:
            fh.write("\n".join(body) + "\n")


def release_table(
    cut: Cut,
    frame: Frame,
    target: str,
    class_labels: list[str],
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str = "noisy counts",
) -> NoisyTable:
    """Noise the (cut × class) contingency table of the records with DLap(ε), sparsely."""
    shape = cut.shape() + [len(class_labels)]
    cells, counts = frame.cells([*cut.keys(), Col(target)], shape)
    out_cells, out_counts = sparse_discrete_laplace(
        cells, counts, shape, epsilon=epsilon, rng=rng, accountant=accountant, step=step
    )
    return NoisyTable(cut, list(class_labels), out_cells, out_counts)
