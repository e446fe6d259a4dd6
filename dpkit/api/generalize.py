"""``dpkit.generalize``: map other records onto a released generalization (spends nothing).

A `publish` release's cut, or the levels a `kanon-select --generalize` run chose, applied to
new data — a test split, records to score — so that they match the released table's columns.
This reads only the data given and the public report: it is not a release of the training
data and spends no ε.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dpkit.api.frames import any_frame
from dpkit.console import owner_records
from dpkit.engine.inputs import read_dialect, read_options, schema_of, source_path
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn
from dpkit.types import DataLike, SchemaLike, later

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.schema.parse import Schema
else:  # the same names for typing.get_type_hints, imported when it evaluates them
    pd = later("pandas")
    Schema = later("dpkit.schema.parse", "Schema")


class ReleaseLike(Protocol):
    """What ``generalize`` reads of a :class:`~dpkit.api.publish.Release`: its report and
    schema. A protocol rather than the class, because ``publish`` imports this module
    (``Release.generalize``): naming the class here would tie the two modules in a circle."""

    report: dict[str, Any]
    schema: Any

@any_frame(back=True)
@owner_records()
def generalize(
    data: DataLike,
    cut: ReleaseLike | Mapping[str, Any] | str | os.PathLike[str],
    *,
    schema: SchemaLike | None = None,
    output: str | os.PathLike | None = None,
    output_delimiter: str = ",",
    engine: str | None = None,
    spark_master: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    header: bool = True,
    column_names: list[str] | None = None,
) -> pd.DataFrame | None:
    """``data`` with every predictor replaced by the released cut's node or interval holding it.

    Parameters
    ----------
    data : path, ReadOptions or pandas.DataFrame
        The records to map (read as :func:`dpkit.publish` reads its data).
    cut : Release, dict or path
        A :class:`~dpkit.api.publish.Release`, or a report (dict or JSON file) of ``publish`` or
        of ``kanon_select(..., generalize=True)``.
    schema : Schema or path, optional
        Default: the Release's schema, or the schema the report names.
    output : path, optional
        Also write the rows (CSV, or Parquet by extension; atomically; ``-`` is stdout). On the
        Spark engine the rows are written by Spark and nothing is returned.

    Returns
    -------
    pandas.DataFrame or None
        Every input row, in input order (a DataFrame's index is kept). The class column is kept
        as it is when ``data`` has it. A missing value becomes the cut's node or bucket holding
        it (``missing_policy: keep``), the column's one value when its cut is at the root, else
        ``(missing)``; a category the schema does not list becomes the node holding its
        ``other:`` leaf, else it is missing; so is a number or date that does not parse; a
        number outside the bounds becomes the interval it is clipped into. Nothing is dropped
        or refused: one warning says what was read as missing (counts for the data owner,
        :func:`dpkit.set_verbosity`).
    """
    from dpkit.engine import engine_name
    from dpkit.run import check_output_paths

    report, where, given_schema = _report_of(cut)
    if schema is None:
        schema = given_schema
    spark = engine_name(engine) == "spark"
    out = None if output is None else os.fspath(output)
    # a URI output (hdfs://, s3a://) is Spark's to check when it writes
    check_output_paths([source_path(data), where, _path(schema)], [None if spark and out and "://" in out else out])
    release = report.get("release") or {}
    params = report.get("parameters") or {}
    reading = read_dialect(encoding, delimiter, header, column_names)
    if report.get("command") == "kanon-select" and params.get("generalize"):
        if spark:
            # apply_release works on the raw strings of a whole table: not built for Spark yet
            raise DpkitUsageError("a kanon-select report is applied on the numpy engine only for now "
                                  "(docs/spark.md)", param="engine")
        return _kanon(report, where, schema, data, out, output_delimiter, reading)
    if report.get("command") != "publish" or "cut" not in release:
        raise DataError(
            f"{where}: not a `dpkit publish` report (no release.cut), nor a kanon-select one made with generalize"
        )
    schema_obj = _schema(schema, params, where)
    from dpkit.algorithms.publish.cut import Cut
    from dpkit.algorithms.publish.generalized import Generalizer, reading_schema
    from dpkit.data.unknown import mapping_warning

    target = release.get("target") or params.get("target") or schema_obj.target
    released = Cut.from_json(schema_obj, target, release["cut"], source=where)
    # every row comes out: a missing value, a category the schema does not list, a number that
    # does not parse are the column's missing value (the cut's node or bucket holding it, the
    # root of a cut at its root, else "(missing)"), never dropped or refused
    lenient = reading_schema(schema_obj)
    if spark:
        if out is None:
            raise DpkitUsageError("output is required on the Spark engine (the rows are written by Spark)",
                                  param="output")
        _spark(read_options(data, **reading), lenient, released, release, target, out, output_delimiter,
               spark_master)
        return None
    order = [c for c in release.get("columns", released.columns + [target])
             if c in released.attributes or c == target]
    table, unknown, wanted, index = _read(data, reading, schema_obj, lenient, order, released, target)
    rows, unheld = Generalizer.of(released, lenient, wanted).labelled(table.columns, index=index)
    if index is not None and target in wanted:
        rows[target] = _target_in_dtype(rows[target], data[target])
    policy = schema_obj.missing_policy
    message = mapping_warning(table.source, table.n_rows, unknown, unheld, policy)
    if message:
        warn(message, DpkitWarning)
    if out is not None:
        from dpkit.io.output import write_csv

        write_csv(rows, out, delimiter=output_delimiter)
    return rows


def _encode(strings: pd.DataFrame, schema: Schema, lenient: Schema, wanted: list[str], source: str,
            first_line: int) -> tuple[Any, dict[str, Any]]:
    """(the records encoded against the lenient reading schema, the values ``schema`` does not read)."""
    from dpkit.data.encode import encode
    from dpkit.data.unknown import unknown_values

    unknown = unknown_values(strings, schema, wanted, first_line)
    return encode(strings, lenient, wanted, source=source, first_line=first_line), unknown


def _read(data: Any, reading: dict[str, Any], schema: Schema, lenient: Schema, order: list[str], released: Any,
          target: str) -> tuple[Any, Any, list[str], Any]:
    """(the encoded table, its unknown values, the columns read, the caller's index or None) of
    the rows to map: a DataFrame's rows all kept in order (its index lines them up), a file's
    loaded."""
    from dpkit.engine.inputs import DATAFRAME, as_strings, check_columns, is_dataframe

    if not is_dataframe(data):
        return (*_load(read_options(data, **reading), schema, lenient, order, released, target), None)
    check_columns(data)
    wanted = [c for c in order if c in released.attributes or (c == target and c in data.columns)]
    table, unknown = _encode(as_strings(data, wanted, lenient), schema, lenient, wanted, DATAFRAME, 0)
    return table, unknown, wanted, data.index


def _load(opts: Any, schema: Schema, lenient: Schema, order: list[str], cut: Any,
          target: str) -> tuple[Any, dict[str, Any], list[str]]:
    """A file's records encoded for :class:`~dpkit.algorithms.publish.generalized.Generalizer`, the values
    the schema does not read, and the columns read. The fast columnar reader first, with the
    schema as it is (missing values kept); only when it meets a value the schema does not read
    is the file read again as strings, to encode every value leniently and count those values
    for the warning."""
    import warnings

    from dpkit.algorithms.publish.generalized import reading_schema
    from dpkit.io.source import first_line
    from dpkit.io.table import column_names as header_of
    from dpkit.io.table import load, read_table

    header_names = header_of(opts)
    wanted = [c for c in order if c in cut.attributes or (c == target and c in header_names)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = load(opts, reading_schema(schema, lenient=False), wanted)
        except DataError:
            table = None
    if table is not None:
        for w in caught:  # the fast read's own warnings (clipped values), said once
            warn(w.message, w.category)
        return table, {}, wanted
    strings = read_table(opts)
    table, unknown = _encode(strings, schema, lenient, wanted, opts.name, first_line(opts))
    return table, unknown, wanted


def _target_in_dtype(generalized: Any, given: Any) -> Any:
    """The generalized target column in the dtype of the caller's (an int, bool or float target
    stays one, so ``rows.y == 1`` compares what it says); a row whose class the release does not
    hold (its missing label) is NA, in the dtype's nullable form. Any other dtype: unchanged."""
    import pandas as pd

    if given.dtype.kind not in "biuf":
        return generalized
    same = generalized.to_numpy(dtype=object) == given.map(str).to_numpy(dtype=object)
    if same.all():
        return pd.Series(given.to_numpy(), index=generalized.index, name=generalized.name, dtype=given.dtype)
    nullable = {"b": "boolean", "i": "Int64", "u": "UInt64", "f": "Float64"}[given.dtype.kind]
    return pd.Series(given.to_numpy(), index=generalized.index, name=generalized.name).astype(nullable).where(same)


def _report_of(cut: Any) -> tuple[dict[str, Any], str, Any]:
    """(the report, its name in messages, the schema it came with, if any)."""
    from dpkit.report import read_report

    if hasattr(cut, "report") and hasattr(cut, "schema"):  # a Release (not imported: it imports this)
        return cut.report, "<release>", cut.schema
    if isinstance(cut, dict):
        return cut, "<report>", None
    if isinstance(cut, str | os.PathLike):
        return read_report(cut), os.fspath(cut), None
    raise DpkitUsageError(f"cut must be a Release, a report dict or a report path, got {type(cut).__name__}",
                          param="cut")


def _path(schema: Any) -> str | None:
    return os.fspath(schema) if isinstance(schema, str | os.PathLike) else None


def _schema(schema: Any, params: dict[str, Any], where: str) -> Schema:
    """The schema given, else the one the report names (which must be found from here)."""
    if schema is not None:
        return schema_of(schema, allow_draft=True)[0]  # type: ignore[return-value]
    return schema_of(_named_schema(params, where), allow_draft=True)[0]  # type: ignore[return-value]


def _named_schema(params: dict[str, Any], where: str) -> str:
    """The schema a report names, found from here: relative to the report's directory
    (``schema_from_report``, written by :func:`dpkit.report.write_report`), else as named
    (absolute, or relative to the current directory)."""
    named = params.get("schema")
    if not named:
        raise DataError(f"{where}: the report names no schema; pass the schema", param="schema")
    beside = params.get("schema_from_report")
    if beside and where not in ("<report>", "<release>", "-"):
        candidate = os.path.join(os.path.dirname(os.path.abspath(where)), beside)
        if os.path.isfile(candidate):
            return candidate
    if not Path(named).is_file():
        raise DataError(f"{where}: the schema it names, {named}, is not found from here or beside the report; "
                        "pass the schema", param="schema")
    return str(named)


def _spark(opts: Any, schema: Schema, cut: Any, release: dict, target: str, output: str, delimiter: str,
           master: str | None) -> None:
    """The generalized rows computed on the executors and written by Spark (docs/spark.md)."""
    from dpkit.algorithms.publish.generalized import Generalizer
    from dpkit.engine.spark.read import load_spark, raw_input
    from dpkit.engine.spark.session import session
    from dpkit.engine.spark.write import check_output, write_rows

    if opts.path == "-":
        raise DpkitUsageError("the Spark engine reads files or URIs, not stdin ('-')", param="engine")
    spark = session(master)
    check_output(spark, output)
    header = raw_input(spark, opts)[1]
    order = [c for c in release.get("columns", cut.columns + [target]) if c in cut.attributes or c == target]
    wanted = [c for c in order if c in cut.attributes or (c == target and c in header)]
    frame = load_spark(opts, schema, wanted, spark=spark)
    labeller = Generalizer.of(cut, schema, wanted)

    def render(batch: Any) -> Any:
        return labeller({c: batch.column(i).to_numpy(zero_copy_only=False) for i, c in enumerate(wanted)})

    df = frame.df.select(*[frame.fields[c] for c in wanted])
    write_rows(spark, df, render, wanted, output, delimiter=delimiter)


def _kanon(report: dict, where: str, schema: Any, data: Any, output: str | None, delimiter: str,
           reading: dict[str, Any]) -> pd.DataFrame:
    """A `kanon-select --generalize` report: its kept columns at their chosen levels."""
    from dpkit.algorithms.kanon.apply import apply_release
    from dpkit.engine.inputs import DATAFRAME, is_dataframe
    from dpkit.io.output import write_csv
    from dpkit.io.table import read_table

    params = report.get("parameters") or {}
    if schema is None:
        schema = _named_schema(params, where)
    schema_obj = schema_of(schema, allow_draft=True)[0]
    if is_dataframe(data):
        df, src = data, DATAFRAME
    else:
        opts = read_options(data, **reading)
        df, src = read_table(opts), opts.name
    carry = [*(params.get("keep") or []), *([params["sensitive"]] if params.get("sensitive") else [])]
    out = apply_release(df, report.get("release") or {}, schema_obj, params.get("target"), source=src, carry=carry)
    if is_dataframe(data):
        out.index = data.index  # every row is kept, in order
    if output is not None:
        write_csv(out, output, delimiter=delimiter)
    return out
