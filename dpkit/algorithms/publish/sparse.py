"""The released table: a noisy contingency table over (cut × class), kept sparse.

Every cell of the (cut × class) table gets DLap(ε₂) noise, empty cells included
(docs/algorithms.md §1), through :func:`dpkit.privacy.mechanisms.sparse_discrete_laplace`, which
samples the empty cells that come out positive instead of visiting Π|cut_j|·|C| cells
(Cormode et al., ICDT 2012). Negative counts become 0 (post-processing): only positive
cells are kept. Turning cells into rows of labels is post-processing too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.algorithms.publish.cut import Cut
from dpkit.engine.frame import Frame
from dpkit.engine.keys import Col
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.mechanisms import sparse_discrete_laplace

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


def _csv_field(value: str, delimiter: str = ",") -> str:
    if any(ch in value for ch in (delimiter, '"', "\n", "\r")):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_release(table: NoisyTable, path: str, *, counts: bool = False, columns: list[str] | None = None,
                  delimiter: str = ",") -> None:
    """Write the release as CSV (atomically; ``-`` = stdout), like :meth:`NoisyTable.to_frame`.

    Each cell's line is formatted once and repeated by its count: much faster than a
    DataFrame with one row per released record. A ``.parquet``/``.pq`` path is written as
    Parquet (dictionary-encoded columns).
    """
    from dpkit.io.output import atomic_output, is_parquet_path

    names = table.cut.columns + [table.cut.target]
    labels = list(table.cut.labels().values()) + [table.class_labels]
    order = [names.index(c) for c in (columns or names) if c in names]
    if is_parquet_path(path):
        _write_release_parquet(table, path, names, labels, order, counts)
        return
    d = delimiter
    quoted = [[_csv_field(v, d).encode() for v in labels[j]] for j in range(len(names))]
    header = d.join(_csv_field(names[j], d) for j in order) + (f"{d}count" if counts else "")
    sep = d.encode()
    lines = [sep.join(quoted[j][cell[j]] for j in order) for cell in np.asarray(table.cells).tolist()]
    if counts:
        lines = [b"%s%s%d\n" % (line, sep, int(c)) for line, c in zip(lines, table.counts, strict=True)]
        reps = [1] * len(lines)
    else:
        lines = [line + b"\n" for line in lines]
        reps = np.asarray(table.counts, dtype=np.int64).tolist()
    with atomic_output(path, binary=True) as fh:
        fh.write((header + "\n").encode())
        # each line is repeated into pieces of at most _WRITE_BYTES, handed to the kernel in
        # groups (os.writev): no piece is copied again, and the small pieces reuse the same
        # memory (large fresh buffers cost page faults; docs/decisions/0012-io-performance.md)
        parts: list[bytes] = []
        size = 0
        for row, c in zip(lines, reps, strict=True):
            per = max(1, _WRITE_BYTES // len(row))
            while c > 0:
                m = min(c, per)
                parts.append(row * m)
                size += len(row) * m
                c -= m
                if size >= _WRITE_BYTES or len(parts) >= _WRITE_PIECES:
                    _write_pieces(fh, parts, size)
                    parts, size = [], 0
        if parts:
            _write_pieces(fh, parts, size)


def _write_pieces(fh: Any, parts: list[bytes], size: int) -> None:
    """Write ``parts`` (``size`` bytes in all) in order: one ``writev`` on a file, else one write."""
    import io
    import os

    if not isinstance(fh, io.BufferedWriter):  # standard output (dpkit.io.stdout.FullWriter)
        fh.write(b"".join(parts))
        return
    fh.flush()
    fd = fh.fileno()
    done = os.writev(fd, parts)
    if done < size:  # a short write (a full disk raises on the next one): write the rest
        rest = memoryview(b"".join(parts))[done:]
        while rest:
            rest = rest[os.write(fd, rest):]


#: bytes of release CSV formatted before they are written (bounds memory at any count)
_WRITE_BYTES = 1 << 18
#: pieces per writev call (below every system's IOV_MAX, 1024 on Linux)
_WRITE_PIECES = 1000
#: rows per Parquet row group of the release (pyarrow's default: the same file as one write)
_ROW_GROUP = 1 << 20


def _write_release_parquet(table: NoisyTable, path: str, names: list[str], labels: list[list[str]],
                           order: list[int], counts: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpkit.io.output import atomic_output

    cells = np.asarray(table.cells, dtype=np.int64).reshape(-1, len(names))
    reps = np.asarray(table.counts, dtype=np.int64)
    dictionaries = {j: pa.array(labels[j], pa.string()) for j in order}
    fields = [names[j] for j in order] + (["count"] if counts else [])

    def group(rows: np.ndarray) -> Any:
        """The release rows ``rows`` (indices into the cells) as one Arrow table."""
        arrays = [pa.DictionaryArray.from_arrays(cells[rows, j].astype(np.int32), dictionaries[j]) for j in order]
        if counts:
            arrays.append(pa.array(reps[rows]))
        return pa.Table.from_arrays(arrays, names=fields)

    n_rows = len(reps) if counts else int(reps.sum())
    # one record per row: the rows of a row group are made at a time, not all n of them
    # (row groups of pyarrow's default size, so the file is the one a single write gives)
    ends = np.cumsum(reps) if not counts else None
    with atomic_output(path, binary=True) as fh:
        writer = None
        for start in range(0, max(n_rows, 1), _ROW_GROUP):
            stop = min(start + _ROW_GROUP, n_rows)
            if counts:
                rows = np.arange(start, stop)
            else:
                assert ends is not None
                rows = np.searchsorted(ends, np.arange(start, stop), side="right")
            t = group(rows)
            if writer is None:
                writer = pq.ParquetWriter(fh, t.schema)
            writer.write_table(t)
        if writer is not None:
            writer.close()


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
    check_release_size(shape, epsilon)
    cells, counts = frame.cells([*cut.keys(), Col(target)], shape)
    # dimensions of size 1 (attributes still at their root) hold only coordinate 0: the
    # mechanism noises the same cells, in the same order, without them (no 64-dimension limit)
    keep = [j for j, s in enumerate(shape) if s > 1] or [len(shape) - 1]
    out_cells, out_counts = sparse_discrete_laplace(
        cells[:, keep], counts, [shape[j] for j in keep], epsilon=epsilon, rng=rng, accountant=accountant, step=step
    )
    full = np.zeros((out_cells.shape[0], len(shape)), dtype=np.int64, order="F")  # column by column
    full[:, keep] = out_cells
    return NoisyTable(cut, list(class_labels), full, out_counts)


#: the most noise cells a release may hold (the mechanism's own refusal, checked here first
#: in log space so that an astronomically large cut is refused instead of overflowing)
MAX_RELEASED_CELLS = 5e7


def check_release_size(shape: list[int], epsilon: float) -> None:
    """Refuse, before the counts are noised, a (cut × class) table the release cannot hold:
    more than 5·10⁷ expected noise cells, or more than 2⁶² cells in all (int64 cell index)."""
    from dpkit.errors import DpkitUsageError
    from dpkit.privacy.mechanisms import positive_noise_probability

    log_total = math.fsum(math.log(s) for s in shape)
    p = positive_noise_probability(epsilon)
    log_expected = log_total + (math.log(p) if p > 0 else -math.inf)
    if log_expected > math.log(MAX_RELEASED_CELLS) or log_total >= 62 * math.log(2):
        size = f"10^{log_total / math.log(10):.1f}"
        raise DpkitUsageError(
            f"the released table would have {size} cells (limit: 5e7 expected noise cells, 2^62 cells "
            f"in all); use fewer levels, the automatic depth (levels auto) or a larger epsilon"
        )


def postprocess(table: NoisyTable, *, threshold: int | list[int], total: float | None) -> NoisyTable:
    """Suppress cells whose noisy count is below ``threshold`` and scale the rest to ``total``.

    ``threshold``: one for every cell, or one per class (:func:`dpkit.algorithms.publish.depth.class_thresholds`).

    Pure post-processing of the noisy table (free in ε; no randomness): ``threshold`` and
    ``total`` are public (:func:`dpkit.algorithms.publish.depth.suppression_threshold`, the noisy Ñ).
    Scaled counts are rounded to the nearest integer; cells that round to 0 are dropped. If
    nothing reaches the threshold the largest noisy cell is kept, so a release is never empty.
    """
    counts = table.counts
    if isinstance(threshold, list):
        per_class = np.maximum(np.asarray(threshold, dtype=np.int64), 1)
        keep = counts >= per_class[table.cells[:, -1]] if counts.size else np.zeros(0, dtype=bool)
    else:
        keep = counts >= max(int(threshold), 1)
    if counts.size and not keep.any():
        keep = counts == counts.max()
    cells, kept = table.cells[keep], counts[keep].astype(np.int64)
    if total is not None and kept.size and total > 0:
        scaled = np.rint(kept * (float(total) / float(kept.sum()))).astype(np.int64)
        nz = scaled > 0
        if nz.any():
            cells, kept = cells[nz], scaled[nz]
    return NoisyTable(table.cut, table.class_labels, cells, kept)
