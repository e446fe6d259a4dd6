"""Parquet input: the file opened, its columns, encoded a batch at a time, or read as strings.

:func:`load_parquet` has Arrow decode a batch at a time and encodes it with the columnar
encoder (:mod:`dpkit.io.columnar`, a thread per core; errors name the row);
:func:`read_parquet_strings` gives what the CSV reader gives, a DataFrame of strings (nulls as
''); :func:`write_parquet` writes an output table (:mod:`dpkit.io.output`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.data.encoded import EncodedTable
from dpkit.errors import DataError
from dpkit.io.columnar import _Encoder, in_order
from dpkit.schema.parse import CategoricalColumn, Schema

if TYPE_CHECKING:
    from dpkit.io.source import ReadOptions


PARQUET_BATCH_ROWS = 1 << 18  # rows per Parquet batch: a few batches per thread at any size


def _open_parquet(options: ReadOptions, dictionary: Sequence[str] = ()) -> Any:
    """The Parquet file; ``dictionary`` columns are read as Arrow dictionaries (a string column
    stored dictionary-encoded, as most writers store categories, is then never expanded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if options.path == "-":
            from dpkit.io.source import read_raw

            return pq.ParquetFile(pa.BufferReader(read_raw("-")), read_dictionary=list(dictionary) or None)
        return pq.ParquetFile(options.path, read_dictionary=list(dictionary) or None)
    except FileNotFoundError:
        raise DataError(f"{options.path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{options.path}: is a directory, expected a data file") from None
    except PermissionError:
        raise DataError(f"{options.path}: permission denied") from None
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{options.name}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None


def parquet_columns(options: ReadOptions) -> list[str]:
    """The column names of a Parquet file."""
    return list(_open_parquet(options).schema_arrow.names)


def _is_text(t: Any) -> bool:
    """A Parquet string column as pyarrow types it: pandas 3 writes ``large_string``."""
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t)


def load_parquet(options: ReadOptions, schema: Schema, wanted: Sequence[str]) -> EncodedTable:
    """Encode ``wanted`` columns of a Parquet file, a batch at a time; errors name the row."""
    import pyarrow as pa

    pf = _open_parquet(options)
    name = options.name
    header = list(pf.schema_arrow.names)
    fields = pf.schema_arrow
    strings = [c for c in wanted if (isinstance(schema.columns.get(c), CategoricalColumn)
                                     or getattr(schema.columns.get(c), "time", None) is not None)
               and fields.get_field_index(c) >= 0 and _is_text(fields.field(fields.get_field_index(c)).type)]
    if strings:  # opened again (the footer only) to read the categorical strings as dictionaries
        pf = _open_parquet(options, strings)
    _check_columns(name, header, schema, wanted)
    cols = [schema.columns[c] for c in wanted]
    encoder = _Encoder(schema, wanted, cols, list(schema.missing_tokens))
    try:
        # batches decoded by Arrow and encoded on a thread per core, kept in file order
        batches = pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(wanted))
        for block in in_order(lambda batch: encoder.encode([batch.column(c) for c in wanted], strict=True),
                              batches):
            if not encoder.keep(block):
                break
    except pa.ArrowException as exc:
        raise DataError(f"{name}: cannot read Parquet data ({str(exc).splitlines()[0]})") from None
    if encoder.bad is not None:
        c, r, v = encoder.bad
        col = schema.columns[c]
        if v is None:
            raise DataError(f"{name}: row {r + 1}: column {c!r} is empty (null); declare a missing token "
                            f"(missing: ...) in {schema.path} to drop such rows")
        if isinstance(col, CategoricalColumn):
            raise DataError(f"{name}: row {r + 1}: column {c!r} has a value not in the taxonomy of "
                            f"{schema.path} ({v!r}); add it to the schema or fix the data")
        if col.time is not None:
            from dpkit.schema.dates import expected

            raise DataError(f"{name}: row {r + 1}: {col.time} column {c!r} has {v!r}, not {expected(col.time)}")
        raise DataError(f"{name}: row {r + 1}: numeric column {c!r} has {v!r}, not a finite number")
    if encoder.dropped and schema.missing_policy == "error":
        if any(getattr(schema.columns[c], "unparsable", None) == "missing"
               or getattr(schema.columns[c], "unlisted", None) == "missing" for c in wanted):
            # a token refuses, a stray value drops its row: the exact path tells them apart
            from dpkit.data.encode import encode

            return encode(read_parquet_strings(options), schema, wanted, source=name, first_line=1)
        r, c = encoder.first_missing or (0, wanted[0])
        raise DataError(f"{name}: row {r + 1}: column {c!r} is missing; set missing_policy: drop in "
                        f"{schema.path} to drop such rows")
    table = encoder.finish(name, error_on_missing=False)
    if table is None:
        raise DataError(f"{name}: has no data rows")
    return table


def read_parquet_strings(options: ReadOptions) -> Any:
    """A Parquet file as a DataFrame of strings (what the CSV reader gives), nulls as ''."""
    import pyarrow as pa
    import pyarrow.compute as pc

    pf = _open_parquet(options)
    try:
        table = pf.read()
    except pa.ArrowException as exc:
        raise DataError(f"{options.name}: cannot read Parquet data ({str(exc).splitlines()[0]})") from None
    if table.num_rows == 0:
        raise DataError(f"{options.name}: has no data rows")
    out = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_floating(field.type):
            # 39.0 -> "39" as a CSV writer of integers would have it
            values = column.to_numpy(zero_copy_only=False)
            strs = np.array([("" if np.isnan(v) else (str(int(v)) if float(v).is_integer() else repr(float(v))))
                             for v in values], dtype=object)
            out[field.name] = strs
            continue
        s = pc.fill_null(pc.cast(column, pa.string()), "")
        out[field.name] = np.asarray(s.to_pylist(), dtype=object)
    import pandas as pd

    return pd.DataFrame(out, columns=list(table.schema.names))


def _check_columns(name: str, header: list[str], schema: Schema, wanted: Sequence[str]) -> None:
    from dpkit.errors import DpkitUsageError

    absent = [c for c in wanted if c not in header]
    if absent:
        hint = " — is the schema for a different data set?" if 2 * len(absent) >= len(wanted) else ""
        raise DataError(
            f"{name}: column(s) {', '.join(map(repr, absent))} from schema {schema.path} not found "
            f"in the file ({', '.join(header[:8])}{', ...' if len(header) > 8 else ''}){hint}"
        )
    for c in wanted:
        if schema.column(c).kind == "ignore":
            raise DpkitUsageError(f"column {c!r} is declared 'ignore' in {schema.path}")


def write_parquet(df: Any, fh: Any) -> None:
    """Write a DataFrame as Parquet (strings stay strings) to a binary file object."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpkit.io.pandas_compat import text_as_object

    # text as pandas 2 types it (string columns), and no pandas metadata, which records the pandas
    # version that wrote the file: a keyed run writes the same bytes on pandas 2 and 3
    table = pa.Table.from_pandas(text_as_object(df), preserve_index=False)
    pq.write_table(table.replace_schema_metadata(None), fh)
