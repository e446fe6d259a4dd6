"""A table as codes of each column's distinct strings: what a string frame reads.

:func:`read_codes` streams a CSV with the columnar reader's Arrow chunks
(:func:`dpkit.io.columnar.csv_batches`, on every core) and keeps, per column, only each
chunk's small dictionary and its indices, numbered against the values seen so far in order of
first appearance (:class:`_FirstSeen`): no Python string per cell. :func:`categorical_frame`
turns the result into pandas ``category`` columns without copying the codes. Anything unusual
(a value to strip, a ragged row, no rows) gives None, and the caller reads the exact way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.io.columnar import _to_numpy, csv_batches

if TYPE_CHECKING:
    from dpkit.io.source import ReadOptions

JOIN_BLOCKS = 64  # read_codes numbers and joins each column's chunk codes 64 chunks at a time


def categorical_frame(got: Codes) -> Any:
    """:class:`Codes` as a DataFrame of pandas ``category`` columns (the codes, not copied)."""
    import pandas as pd

    out = {}
    for name in got.columns:
        out[name] = pd.Categorical.from_codes(got.codes[name], dtype=pd.CategoricalDtype(got.values[name]),
                                              validate=False)
    return pd.DataFrame(out, columns=got.columns, copy=False)


@dataclass
class Codes:
    """A table as codes: each column's distinct strings in order of first appearance (the
    numbering of ``pandas.factorize``) and each row's index into them, in the smallest type."""

    columns: list[str]
    codes: dict[str, np.ndarray]
    values: dict[str, list[str]]
    n_rows: int


def read_codes(options: ReadOptions, header: list[str], columns: Sequence[str] | None = None) -> Codes | None:
    """Every column (or ``columns``, in header order) as :class:`Codes` of its (stripped)
    strings, or None for the exact path (a value to strip, a ragged row, no rows, …).

    Streamed (:func:`csv_batches`, on every core): Arrow parses a chunk at a time into
    ``dictionary<int32, string>`` columns, and only each chunk's (small) dictionary and its
    indices are kept; every :data:`JOIN_BLOCKS` chunks, the dictionaries are numbered against
    the column's distinct values so far by one Arrow ``dictionary_encode`` (new values in
    order of first appearance, the order ``unify_dictionaries`` gives) and the chunks' codes
    joined into one array. No Python object is made per cell, nor per distinct value of a
    chunk, so memory is the codes (1-2 bytes per cell) plus a few chunks, and time does not
    grow with a column's distinct values (10M rows' fnlwgt: ~5M Python look-ups before).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = [f"f{i}" for i in range(len(header))]
    wanted = set(header if columns is None else columns)
    read = [n for n, h in zip(names, header, strict=True) if h in wanted]  # Arrow converts only these

    def split(batch: Any) -> list[tuple[Any, np.ndarray]] | None:
        """Each column's dictionary and indices (on a worker thread); None: a value to strip."""
        out = []
        for n in read:
            col = batch.column(n)
            if isinstance(col, pa.ChunkedArray):
                col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
            if not pa.types.is_dictionary(col.type):  # a table of no rows
                col = col.dictionary_encode()
            if _unstripped(col.dictionary):
                return None
            out.append((col.dictionary, _to_numpy(col.indices).astype(_codes_dtype(len(col.dictionary)))))
        return out

    parse = pacsv.ParseOptions(delimiter=options.delimiter or ",", quote_char='"', double_quote=True,
                               escape_char=False, newlines_in_values=False, ignore_empty_lines=True)
    convert = pacsv.ConvertOptions(include_columns=read, column_types={n: pa.dictionary(pa.int32(), pa.string())
                                                                       for n in read},
                                   strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=False)
    enc = options.encoding.lower().replace("_", "-")
    utf8 = enc in ("utf-8-sig", "utf8-sig", "utf-8", "utf8", "ascii", "us-ascii")
    seen = [_FirstSeen() for _ in read]
    try:
        for batch in csv_batches((options.path, None), names, options.header, "utf8" if utf8 else options.encoding,
                                 parse, convert, split):
            if batch is None:
                return None  # whitespace to strip (values could merge): the exact path
            for (dictionary, indices), column in zip(batch, seen, strict=True):
                column.add(dictionary, indices)
    except (pa.ArrowException, UnicodeError, ValueError, OSError, LookupError):
        return None
    kept_header = [h for h in header if h in wanted]
    codes, values = {}, {}
    for name, column in zip(kept_header, seen, strict=True):
        codes[name], values[name] = column.finish()
    n_rows = len(next(iter(codes.values()))) if codes else 0
    if n_rows == 0:
        return None
    return Codes(kept_header, codes, values, n_rows)


# a field's first or last character outside printable ASCII: it may be whitespace to strip
_MAY_STRIP = "^[^!-~]|[^!-~]$"


def _unstripped(dictionary: Any) -> bool:
    """Does a chunk's dictionary hold a value with whitespace to strip (``str.strip``)? Only
    the values whose first or last character is not printable ASCII are checked in Python."""
    import pyarrow.compute as pc

    if len(dictionary) == 0:
        return False
    flagged = pc.match_substring_regex(dictionary, _MAY_STRIP)
    if not pc.any(flagged).as_py():
        return False
    return any(v != v.strip() for v in dictionary.filter(flagged).to_pylist())


class _FirstSeen:
    """One column's distinct strings in order of first appearance and its rows' codes, built
    chunk by chunk in file order (:func:`read_codes`)."""

    def __init__(self) -> None:
        import pyarrow as pa

        self.known = pa.nulls(0, pa.string())  # the distinct values so far, in first-seen order
        self.pending: list[tuple[Any, np.ndarray]] = []  # chunks not numbered yet: (dictionary, indices)
        self.kept: list[np.ndarray] = []  # runs of chunks' codes, joined

    def add(self, dictionary: Any, indices: np.ndarray) -> None:
        self.pending.append((dictionary, indices))
        if len(self.pending) >= JOIN_BLOCKS:
            self._number()

    def _number(self) -> None:
        """Number the pending chunks' values: the known values first (keeping their codes), then
        each chunk's dictionary in file order, so a new value's code follows its first row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self.pending:
            return
        before = len(self.known)
        merged = pc.dictionary_encode(pa.concat_arrays([self.known, *(d for d, _ in self.pending)]))
        self.known = merged.dictionary
        numbered = _to_numpy(merged.indices)
        dtype = _codes_dtype(len(self.known))
        parts, pos = [], before
        for dictionary, indices in self.pending:
            lut = numbered[pos : pos + len(dictionary)].astype(dtype)
            pos += len(dictionary)
            parts.append(lut[indices])
        self.pending = []
        self.kept.append(np.concatenate(parts, dtype=dtype) if len(parts) != 1 else parts[0])

    def finish(self) -> tuple[np.ndarray, list[str]]:
        """(every row's code, the distinct values): the joined runs are released."""
        self._number()
        dtype = _codes_dtype(len(self.known))
        codes = np.concatenate(self.kept, dtype=dtype) if self.kept else np.zeros(0, dtype=dtype)
        self.kept = []
        return codes, self.known.to_pylist()


def _codes_dtype(n_categories: int) -> np.dtype:
    """The integer type pandas keeps ``category`` codes in for ``n_categories`` (no cast later)."""
    for dt in (np.int8, np.int16, np.int32):
        if n_categories < np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)
