"""What a library call accepts as data and as a schema, and how it becomes a frame.

``data`` is one of:

* a path (``str`` or :class:`os.PathLike`): a CSV or Parquet file, ``-`` for stdin, or with
  ``engine="spark"`` a URI or a directory — read with the command line's rules (encoding
  ``utf-8-sig``, the delimiter sniffed among ``,`` ``;`` tab ``|`` when not given, a header row);
* a :class:`~dpkit.io.source.ReadOptions`, the same with every dialect option spelled out
  (the command line builds one from its flags);
* a :class:`pandas.DataFrame`: its values are read as the CSV reader would read their text
  (a missing value is the empty string; whitespace around a category is stripped);
* any object with ``__arrow_c_stream__`` (polars, pyarrow, DuckDB): read as the pandas
  DataFrame pyarrow makes of it, tables given back in the caller's kind (:mod:`dpkit.api.frames`).

Nothing here draws noise or decides anything about privacy: it only reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpkit.defaults import DEFAULT_ENCODING
from dpkit.defaults import LISTED_COLUMNS as LISTED
from dpkit.errors import DataError, DpkitUsageError, ParameterTypeError
from dpkit.io.source import ReadOptions

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.engine.frame import Frame
    from dpkit.schema.parse import Schema

#: what a library call accepts as data (:data:`dpkit.types.DataLike`, whose module sits above this one)
DataLike = Any
#: how a DataFrame is named in messages (a row is then named by its position, from 0)
DATAFRAME = "<DataFrame>"
#: the keywords that say how to read a path (:func:`read_options`)
READING = ("encoding", "delimiter", "header", "column_names")


def check_reading(reading: dict[str, Any], where: str, named: Sequence[str] = ()) -> dict[str, Any]:
    """``reading`` (a method's ``**reading``) when it names only :data:`READING` keywords — for a
    DataFrame too, which ignores them: a misspelt keyword is refused, never silently dropped.
    ``named``: the method's own keywords, so that a misspelt one is named as the closest."""
    from dpkit.validate import keywords

    keywords(reading, READING, where, named=named)
    return reading


def is_dataframe(data: Any) -> bool:
    """True for a pandas DataFrame (without importing pandas when it is not loaded)."""
    import sys

    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(data, pd.DataFrame)


def column_dtypes(data: Any) -> dict[str, Any]:
    """A pandas DataFrame's column dtypes by name; ``{}`` for anything else."""
    return dict(data.dtypes.items()) if is_dataframe(data) else {}


def is_spark_dataframe(data: Any) -> bool:
    return type(data).__module__.startswith("pyspark.sql") and type(data).__name__ == "DataFrame"


def check_columns(df: Any, source: str = DATAFRAME) -> Any:
    """``df`` when its column names are unique, as a file's header must be (names are public);
    a duplicate used to surface as pandas' ``'DataFrame' object has no attribute 'tolist'``."""
    seen: set[Any] = set()
    for name in df.columns:
        if name in seen:
            raise DataError(f"{source}: duplicate column name {name!r}; column names must be unique", param="data")
        seen.add(name)
    return df


def check_rows(df: Any, source: str = DATAFRAME) -> Any:
    """``df`` when it has rows; an empty table is refused, as a file with a header and no data
    rows is (there is nothing to release; saying so reveals only that the input is empty), and
    so are duplicate column names (:func:`check_columns`)."""
    check_columns(df, source)
    if len(df) == 0:
        raise DataError(f"{source}: has no rows (columns: {', '.join(map(str, list(df.columns)[:LISTED]))}"
                        f"{', …' if len(df.columns) > LISTED else ''}): there is nothing to release", param="data")
    return df


def read_options(data: DataLike, *, encoding: str = DEFAULT_ENCODING, delimiter: str | None = None,
                 header: bool = True, column_names: Sequence[str] | None = None) -> ReadOptions:
    """The :class:`ReadOptions` of a path given to a library call, its delimiter sniffed when
    None (once: the warning that names it is given once), as the command line does."""
    from dpkit.io.source import resolve

    if isinstance(data, ReadOptions):
        return resolve(data)
    if not isinstance(data, str | os.PathLike):
        raise ParameterTypeError(
            f"data must be a path, a pandas DataFrame, an Arrow stream (a polars DataFrame, a pyarrow "
            f"Table, a DuckDB relation: __arrow_c_stream__) or (engine='spark') a Spark DataFrame, got "
            f"{type(data).__name__}", param="data")
    if column_names is not None and header:
        raise DpkitUsageError("column_names names the columns of a headerless input; pass header=False",
                              param="column_names")
    names = tuple(column_names) if column_names is not None else None
    return resolve(ReadOptions(os.fspath(data), encoding=encoding, delimiter=delimiter, header=header,
                               column_names=names))


def read_dialect(encoding: str | None = None, delimiter: str | None = None, header: bool | None = True,
            column_names: Sequence[str] | None = None) -> dict[str, Any]:
    """The dialect options a library call was given (None: the reader's default)."""
    given = {"encoding": encoding, "delimiter": delimiter, "header": header, "column_names": column_names}
    return {k: v for k, v in given.items() if v is not None}


def source_path(data: DataLike) -> str | None:
    """The file (or URI) ``data`` names, or None for data in memory."""
    if isinstance(data, ReadOptions):
        return data.path
    if isinstance(data, str | os.PathLike):
        return os.fspath(data)
    return None


def schema_of(schema: Schema | str | os.PathLike | None, *, allow_draft: bool = False) -> tuple[Schema | None, str | None]:
    """(the Schema, the name it is recorded under in reports): a path is loaded and recorded
    as given; a Schema is recorded under the path it was read from."""
    if schema is None:
        return None, None
    from dpkit.schema.parse import Schema, load_schema

    if isinstance(schema, Schema):
        return schema, str(schema.path)
    if isinstance(schema, str | os.PathLike):
        return load_schema(schema, allow_draft=allow_draft), os.fspath(schema)
    raise ParameterTypeError(f"schema must be a Schema or a path, got {type(schema).__name__}", param="schema")


def load(data: DataLike, schema: Schema, columns: Sequence[str], *, engine: str | None = None,
         spark_master: str | None = None, **reading: Any) -> Frame:
    """Read and encode ``columns`` of ``data`` against ``schema``: a frame on ``engine``.

    ``reading``: ``encoding``, ``delimiter``, ``header``, ``column_names`` for a path.
    """
    from dpkit.engine import engine_name
    from dpkit.engine import load as engine_load

    name = engine_name(engine)
    if is_dataframe(data):
        if name == "spark":
            raise DpkitUsageError("engine 'spark' reads files or URIs, not a pandas "
                                  "DataFrame; use engine='numpy'", param="engine")
        from dpkit.data.encode import encode
        from dpkit.engine.numpy_frame import NumpyFrame

        check_rows(data)
        text = as_strings(data, columns, schema)
        table = encode(text, schema, list(columns), source=DATAFRAME, first_line=0)
        return NumpyFrame(table)
    if is_spark_dataframe(data):
        raise DpkitUsageError("a Spark DataFrame as data is not supported yet: write it to Parquet and pass "
                              "the path", param="data")
    options = read_options(data, **reading)
    return engine_load(options, schema, list(columns), engine=name,
                       **({"master": spark_master} if name == "spark" else {}))


def is_naive_datetime(s: pd.Series) -> bool:
    """A column of datetimes without a time zone (``pd.to_datetime``'s), read as ISO text."""
    import pandas as pd

    return bool(pd.api.types.is_datetime64_dtype(s.dtype))


def datetimes_as_text(s: pd.Series) -> Any:
    """A datetime column as the ISO text a CSV holds (``2021-03-04T00:00:00``; NaT: the empty
    field), which :func:`dpkit.schema.dates.parse_array` reads as a date or a timestamp. Without
    it a parsed date column read as missing: numpy turns ``datetime64[ns]`` into integers of
    nanoseconds on the way to ``object``, and ``str`` adds a fraction no date has."""
    import numpy as np

    text = s.dt.strftime("%Y-%m-%dT%H:%M:%S").to_numpy(dtype=object, na_value="")
    return np.asarray(text, dtype=object)


def dates_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its datetime columns as ISO text (:func:`datetimes_as_text`); ``df`` itself
    when it has none."""
    dated = [c for c in df.columns if is_naive_datetime(df[c])]
    if not dated:
        return df
    out = df.copy()
    for c in dated:
        out[c] = datetimes_as_text(df[c])
    return out


def as_text(s: pd.Series) -> Any:
    """A column's values as the text a CSV holds for them, as a category is read: stripped
    strings, a number as Python writes it (``1``, ``2.5``), a missing value (NaN, None) as ``''``."""
    import numpy as np
    import pandas as pd

    values = s.astype(object).to_numpy()
    missing = pd.isna(values)
    text = np.array([v.strip() if isinstance(v, str) else str(v) for v in values], dtype=object)
    text[missing] = ""
    return text


def labels_as_text(df: pd.DataFrame, target: str) -> pd.DataFrame:
    """``df`` with its class column ``target`` as text (:func:`as_text`), as a CSV's is read: a
    release's classes are text, so a DataFrame whose target holds the integers 0 and 1 is scored
    against the classes ``"0"`` and ``"1"``. ``df`` itself when it has no such column or it is text."""
    if target not in df.columns or df[target].dtype == object:
        return df
    out = df.copy()
    out[target] = as_text(df[target])
    return out


def as_strings(df: pd.DataFrame, columns: Sequence[str], schema: Schema) -> pd.DataFrame:
    """The ``columns`` of ``df`` as the CSV reader gives them: categorical columns as stripped
    strings (a missing value is ``''``), numeric columns as they are (numbers or strings; a
    NaN/None as ``''``, the empty field of a CSV).

    A column the schema does not name, or one absent from ``df``, is left for
    :func:`dpkit.data.encode.encode` to report.
    """
    import pandas as pd

    from dpkit.schema.parse import CategoricalColumn

    out: dict[str, Any] = {}
    for c in columns:
        if c not in df.columns:
            continue
        s = df[c]
        col = schema.columns.get(c)
        if is_naive_datetime(s):
            out[c] = datetimes_as_text(s)
            continue
        if isinstance(col, CategoricalColumn) or s.dtype == object or isinstance(s.dtype, pd.StringDtype):
            out[c] = as_text(s)
        else:
            values = s.to_numpy()
            missing = pd.isna(values)
            if missing.any():  # NaN/None is pandas' missing value: the CSV reader's empty field
                values = values.astype(object)
                values[missing] = ""
            out[c] = values
    # every column, in df's order, so that a message about a missing column lists the header
    return pd.DataFrame({c: (out[c] if c in out else df[c].to_numpy()) for c in df.columns},
                        columns=list(df.columns))
