"""Writing a table of ``category`` columns (k-anonymity's output) fast, with the bytes of
:func:`dpkit.io.output.write_csv`.

Every distinct row is formatted once by the csv module (as pandas' ``to_csv`` does) and the
records are written as those lines, a million at a time — no Python string per cell; a table
with many distinct rows goes through Arrow's CSV writer when no value needs quotes. Anything
else (object columns, Parquet) goes through ``write_csv``.
"""

from __future__ import annotations

from typing import Any

WRITE_CHUNK = 1 << 20  # write_categories: the cell ids of this many records at a time, not of the whole table


def write_categories(df: Any, path: str, *, delimiter: str = ",", mode: int = 0o644) -> None:
    """Write ``df`` as ``write_csv`` does, formatting each distinct row once.

    The output's columns are ``category`` columns (codes + values): every distinct row is
    formatted by the csv module (as pandas' ``to_csv`` does) and the records are written as
    those lines, a million at a time — no Python string per cell. Anything else (object
    columns, Parquet, many distinct rows) goes through ``write_csv``.
    """
    import csv
    import io

    import numpy as np
    import pandas as pd

    from dpkit.io.output import atomic_output, is_parquet_path, write_csv

    cols = [df[c] for c in df.columns]
    cards = [len(s.cat.categories) if isinstance(s.dtype, pd.CategoricalDtype) else 0 for s in cols]
    cells = int(np.prod(cards, dtype=object)) if cols else 0
    if is_parquet_path(path) or not len(df) or not all(cards):
        write_csv(df, path, delimiter=delimiter, mode=mode)
        return
    if cells > 1 << 22:  # many distinct rows: Arrow's CSV writer when no value needs quotes
        if not _write_unquoted(df, path, delimiter, mode):
            write_csv(df, path, delimiter=delimiter, mode=mode)
        return
    codes = [s.array.codes for s in cols]
    if any((c < 0).any() for c in codes):
        write_csv(df, path, delimiter=delimiter, mode=mode)
        return
    step = WRITE_CHUNK

    def cell_ids(start: int) -> np.ndarray:
        key = np.zeros(min(step, len(df) - start), dtype=np.int64)
        for c, card in zip(codes, cards, strict=True):
            key *= card
            key += c[start:start + step]
        return key

    seen = np.zeros(cells, dtype=bool)
    for start in range(0, len(df), step):
        seen[cell_ids(start)] = True
    present = np.flatnonzero(seen)
    lines = np.empty(cells, dtype=object)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    values = [np.asarray(s.cat.categories, dtype=object) for s in cols]
    digits = np.array(np.unravel_index(present, cards)).T
    for cell, row in zip(present, digits, strict=True):
        buf.seek(0)
        buf.truncate()
        writer.writerow([v[i] for v, i in zip(values, row, strict=True)])
        lines[cell] = buf.getvalue()
    buf.seek(0)
    buf.truncate()
    writer.writerow(list(df.columns))
    with atomic_output(path, mode=mode) as fh:
        fh.write(buf.getvalue())
        for start in range(0, len(df), step):
            fh.write("".join(lines[cell_ids(start)]))


def _write_unquoted(df: Any, path: str, delimiter: str, mode: int = 0o644) -> bool:
    """Write ``df``'s category columns with Arrow's CSV writer, ``WRITE_CHUNK`` records at a time.

    Only when every value is a string that the csv module would write as it is (no delimiter,
    quote or line break; no lone empty field): then the bytes are those of ``to_csv``. Returns
    False (nothing written) otherwise.
    """
    import csv
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dpkit.io.output import atomic_output

    cols = [df[c] for c in df.columns]
    dictionaries = []
    for s in cols:
        values = list(s.cat.categories)
        if not all(isinstance(v, str) for v in values):
            return False
        if any(delimiter in v or '"' in v or "\n" in v or "\r" in v for v in values):
            return False
        if len(cols) == 1 and "" in values:
            return False  # a lone empty field is written as ""
        dictionaries.append(pa.array(values, type=pa.string()))
    codes = [s.array.codes for s in cols]
    head = io.StringIO()
    csv.writer(head, delimiter=delimiter, lineterminator="\n").writerow(list(df.columns))
    options = pacsv.WriteOptions(include_header=False, delimiter=delimiter, quoting_style="none")
    step = max(1, WRITE_CHUNK // 4)  # ~100 bytes a record: ~25 MB of text per write
    with atomic_output(path, binary=True, mode=mode) as fh:
        fh.write(head.getvalue().encode("utf-8"))
        for start in range(0, len(df), step):
            table = pa.table({f"c{j}": pa.DictionaryArray.from_arrays(c[start:start + step], d)
                              for j, (c, d) in enumerate(zip(codes, dictionaries, strict=True))})
            buf = io.BytesIO()
            pacsv.write_csv(table, buf, write_options=options)
            fh.write(buf.getvalue())
    return True
