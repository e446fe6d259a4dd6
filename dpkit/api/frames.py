"""Any dataframe in, the caller's kind out: the Arrow PyCapsule interface at the library's door.

A library call's ``data`` may be any object that speaks the Arrow PyCapsule stream interface
(``__arrow_c_stream__``: a polars DataFrame, a pyarrow Table or RecordBatchReader, a DuckDB
relation, …) besides a path or a pandas DataFrame. pyarrow imports the stream (the Arrow buffers
are shared, not copied) and the table enters as the pandas DataFrame it converts to, so that a
keyed run on a polars frame draws the noise a pandas frame of the same rows and types draws
(the run's identity is the frame's, :func:`dpkit.io.fingerprint.frame_digest`).

What a call returns that is a table (:meth:`dpkit.Release.generalize`, :meth:`dpkit.Forest.predict`,
:meth:`dpkit.Clustering.assign`, …) comes back as the caller's kind: polars for polars (rows in
the input's order: polars has no index), pandas for everything else; so do the tables of a
:class:`dpkit.Release` (``table``, ``counts``) and a :class:`dpkit.KAnonymousTable` (``table``)
made from polars. A :class:`dpkit.Clustering`'s ``centroids`` stay pandas (a few rows).

Not here: the engines read Arrow only from Parquet files (:mod:`dpkit.io.parquet`); an Arrow
object in memory goes through pandas (one copy of the text columns) before it is encoded.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from typing import Any, TypeVar

from dpkit.errors import DataError

F = TypeVar("F", bound=Callable[..., Any])


def arrow_kind(data: Any) -> str | None:
    """``"polars"`` for a polars object, ``"arrow"`` for any other object with
    ``__arrow_c_stream__``, None for what the library reads itself (a path, a pandas or a Spark
    DataFrame: pandas ≥ 2.2 speaks the interface too, and is read as it is)."""
    import sys

    if isinstance(data, str | os.PathLike):
        return None
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(data, pd.DataFrame):
        return None
    kind = type(data)
    if kind.__module__.startswith("pyspark") or not hasattr(kind, "__arrow_c_stream__"):
        return None
    return "polars" if kind.__module__.split(".")[0] == "polars" else "arrow"


def to_pandas(data: Any) -> Any:
    """The pandas DataFrame of an Arrow stream (:func:`arrow_kind`), its rows in stream order."""
    import pyarrow as pa

    try:
        try:
            table = pa.table(data)
        except pa.ArrowException:
            if arrow_kind(data) != "polars":
                raise
            # polars exports its newest types (string views), which pyarrow < 16 cannot import;
            # its own conversion at the oldest compatibility level gives plain Arrow strings
            import polars as pl

            table = data.to_arrow(compat_level=pl.CompatLevel.oldest())
    except (TypeError, ValueError, NotImplementedError, pa.ArrowException) as exc:
        name = type(data).__name__
        raise DataError(f"<{name}>: could not be read through the Arrow PyCapsule interface "
                        f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                        f"pass a pandas DataFrame or a file", param="data") from None
    return table.to_pandas()


def in_kind(result: Any, kind: str | None) -> Any:
    """``result`` (a pandas DataFrame or Series) as polars when the caller gave polars. A result
    object with a ``_kind`` slot (:class:`dpkit.Release`, :class:`dpkit.KAnonymousTable`) is
    told the caller's kind, and gives its tables in it."""
    if kind != "polars":
        return result
    import pandas as pd
    import polars as pl

    if isinstance(result, pd.DataFrame | pd.Series):
        out = pl.from_pandas(result, include_index=False)
        # an ordered categorical (a release's intervals low to high) keeps its order as an Enum
        frame = result if isinstance(result, pd.DataFrame) else result.to_frame()
        enums = {c: pl.Enum([str(v) for v in t.categories]) for c, t in frame.dtypes.items()
                 if isinstance(t, pd.CategoricalDtype) and t.ordered}
        if not enums:
            return out
        return (out.with_columns(pl.col(c).cast(e) for c, e in enums.items()) if isinstance(out, pl.DataFrame)
                else out.cast(next(iter(enums.values()))))
    if hasattr(result, "_kind"):
        object.__setattr__(result, "_kind", kind)
    return result


def any_frame(*names: str, back: bool = False) -> Callable[[F], F]:
    """Decorate a library call whose ``names`` parameters (default ``data``) may be any Arrow
    stream: each becomes its pandas frame (:func:`to_pandas`) before the call runs, so that its
    ``locals()`` — a keyed run's identity — hold the pandas frame. ``back``: the call returns a
    table, given back in the kind of the first of ``names`` (:func:`in_kind`)."""
    names = names or ("data",)

    def decorate(fn: F) -> F:
        params = list(inspect.signature(fn).parameters)
        positions = {name: params.index(name) for name in names}

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            args = list(args)
            kinds = []
            for name, position in positions.items():
                given = args if len(args) > position else kwargs
                key = position if given is args else name
                kind = arrow_kind(given[key]) if given is args or name in kwargs else None
                if kind is not None:
                    given[key] = to_pandas(given[key])
                kinds.append(kind)
            result = fn(*args, **kwargs)
            return in_kind(result, kinds[0]) if back else result

        return call  # type: ignore[return-value]

    return decorate
