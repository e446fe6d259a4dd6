"""Schema files from other tools and drafts from data: ``dpkit taxonomy import`` and ``infer``.

:func:`import_schema` converts ARX hierarchy CSVs or DiffGen brace-format taxonomies;
:func:`draft_schema` drafts a schema from a table (NOT private: it reads the domains from the
data, so the result carries ``draft: true`` and the private commands refuse it until a person
has replaced every value with public knowledge). The private way to learn a schema is
:func:`dpkit.api.domain.infer_schema`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from dpkit.api.frames import any_frame
from dpkit.defaults import DEFAULT_ENCODING, MAX_CATEGORIES
from dpkit.errors import (
    DataError,
    DpkitUsageError,
    DpkitWarning,
    PrivacyLeakWarning,
    SchemaError,
    warn,
)
from dpkit.schema.parse import Schema
from dpkit.types import DataLike, LearnOptions, later
from dpkit.validate import renamed

if TYPE_CHECKING:
    from dpkit.api.domain import LearnedSchema
    from dpkit.io.source import ReadOptions
else:  # for typing.get_type_hints, imported when it evaluates them
    LearnedSchema = later("dpkit.api.domain", "LearnedSchema")
    ReadOptions = later("dpkit.io.source", "ReadOptions")


@dataclass
class SchemaText:
    """A schema as the YAML text to write (with its header comments) and as parsed."""

    text: str
    schema: Schema
    #: the format the sources were read as ("arx", "diffgen") or "draft"
    kind: str

    @property
    def summary(self) -> str:
        from dpkit.schema.importers import schema_summary

        return schema_summary(self.schema)

    def write(self, path: str) -> None:
        """Write :attr:`text` to ``path`` atomically (``-``: stdout)."""
        from dpkit.io.output import atomic_output

        with atomic_output(path) as fh:
            fh.write(self.text)


def _parse_renames(rename: dict[str, str] | list[str] | tuple[str, ...] | None) -> dict[str, str]:
    if rename is None or isinstance(rename, dict):
        return dict(rename or {})
    out = {}
    for v in rename:
        old, sep, new = v.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise DpkitUsageError(f"rename takes OLD=NEW, got {v!r}", param="rename")
        out[old.strip()] = new.strip()
    return out


def import_schema(
    sources: list[str] | tuple[str, ...],
    *,
    format: str = "auto",  # noqa: A002 (the command line's --format)
    target: str | None = None,
    rename: dict[str, str] | list[str] | tuple[str, ...] | None = None,
    ignore: list[str] | tuple[str, ...] = (),
    numeric: str = "intervals",
    data: str | os.PathLike[str] | ReadOptions | None = None,
    hierarchy_delimiter: str = ";",
    encoding: str = DEFAULT_ENCODING,
    delimiter: str | None = None,
    output_name: str = "<schema>",
) -> SchemaText:
    """Convert ARX hierarchies (``format="arx"``) or DiffGen taxonomies (``"diffgen"``) to a schema.

    ``auto`` reads folders and ``.csv`` files as ARX, anything else as DiffGen. With ``data``,
    the columns of that table that no hierarchy covers are drafted from it (NOT private) and
    the schema is marked ``draft: true``; so is a schema whose numeric bounds came from ARX
    values. The text is checked like any schema before it is returned.
    """
    from dpkit.schema import importers
    from dpkit.schema.parse import parse_schema

    for s in sources:
        if not Path(s).exists():
            raise DataError(f"{s}: file not found")  # exit 1, as a missing input everywhere
    if len(hierarchy_delimiter) != 1:
        raise DpkitUsageError(f"hierarchy_delimiter must be one character, got {hierarchy_delimiter!r}",
                              param="hierarchy_delimiter")
    fmt = format
    if fmt == "auto":
        fmt = "arx" if all(Path(s).is_dir() or s.lower().endswith(".csv") for s in sources) else "diffgen"
    review: list[str] = []
    columns: dict[str, Any]
    if fmt == "arx":
        columns = importers.import_arx(sources, delimiter=hierarchy_delimiter, encoding=encoding, numeric=numeric)
        review = importers.arx_bounds_to_review(columns)
    else:
        columns = _import_diffgen(sources, encoding)
    renames = _parse_renames(rename)
    if target is None:
        target = importers.guess_target(columns, renames)
    header = [f"Imported by `dpkit taxonomy import --format {fmt}` from {', '.join(sources)}."]
    extra, missing, order = None, None, None
    if data:
        from dpkit.engine.inputs import read_options
        from dpkit.io.table import read_table

        df = read_table(read_options(data, encoding=encoding, delimiter=delimiter))
        drafted = importers.draft_uncovered(columns, df, rename=renames, target=target, source=data)
        if drafted.absent:
            warn(f"{data}: imported column(s) not in its header: {', '.join(drafted.absent)} "
                          "(rename them?)", DpkitWarning)
        if drafted.columns:
            header.append(f"Columns {', '.join(drafted.columns)}: DRAFTED FROM {data} — NOT PRIVATE; review them.")
        extra, missing, order = drafted.columns, drafted.missing, drafted.order
    schema_data, _ = importers.build_schema(
        columns, target=target, rename=renames, ignore=list(ignore), extra=extra, missing=missing, order=order,
    )
    if review:
        header.append(f"Columns {', '.join(review)}: bounds from the ARX hierarchy's values — review them.")
        warn(
            f"numeric bounds of {', '.join(map(repr, review))} were set from the ARX hierarchy's values, "
            "which are often generated from the data: the schema is marked 'draft: true'; replace them "
            "with public bounds, then delete the draft line",
            PrivacyLeakWarning,
        )
    if extra or review:  # domains drafted from the data: the schema is a draft until reviewed
        schema_data = {"draft": True, **schema_data}
    text = importers.dump_schema(schema_data, header)
    return SchemaText(text, parse_schema(text, output_name), fmt)  # what is written must load


def _import_diffgen(sources: list[str] | tuple[str, ...], encoding: str) -> dict[str, Any]:
    """The columns of DiffGen taxonomy files, one text file per source; an attribute in two
    sources is refused."""
    from dpkit.schema import importers

    columns: dict[str, Any] = {}
    for s in sources:
        p = Path(s)
        if p.is_dir():
            raise DpkitUsageError(f"{s}: a folder; the diffgen format is one text file per source")
        try:
            text = p.read_text(encoding=encoding)
        except UnicodeDecodeError as exc:
            raise SchemaError(f"{s}: not valid {encoding} (byte {exc.start}); give its encoding",
                              param="encoding") from None
        for name, spec in importers.import_diffgen(text, s).items():
            if name in columns:
                raise SchemaError(f"{s}: attribute {name!r} is also in an earlier source")
            columns[name] = spec
    return columns


def draft_schema(
    data: DataLike,
    *,
    target: str | None = None,
    max_categories: int = MAX_CATEGORIES,
    missing: str | None = "auto",
    encoding: str = DEFAULT_ENCODING,
    delimiter: str | None = None,
    output_name: str = "<schema>",
    ignore: str | list[str] | None = None,
    keep: str | list[str] | None = None,
) -> SchemaText:
    """A NON-private draft schema read from ``data`` (``draft: true``), for a person to review.

    Numeric columns get bounds rounded outward, text columns a flat list of their values,
    identifier-like columns (more than ``max_categories`` values) ``ignore``; ``missing`` is
    the missing token (``"auto"`` picks a common one if present; None declares none); ``ignore``:
    columns declared ``ignore`` (a list or "a,b"); ``keep``: columns named like an identifier
    (``id``, ``*_id``, ``CustomerId``, ``RowNumber``, …: drafted ``ignore`` with a REVIEW comment)
    to draft as any other. Numeric bounds come from the 1–99 % quantiles (widened to the extremes
    unless those are outliers), rounded, with the
    data's min and max in the column's comment.
    """
    from dpkit.engine.inputs import read_options
    from dpkit.io.table import read_table
    from dpkit.schema.draft import DRAFT_HEADER, draft_from_data
    from dpkit.schema.importers import dump_schema
    from dpkit.schema.parse import parse_schema

    opts = read_options(data, encoding=encoding, delimiter=delimiter)
    name = opts.name
    df = read_table(opts)
    from dpkit.schema.names import names

    ignored = names(ignore, "ignore", [str(c) for c in df.columns])
    if target is not None and target in ignored:
        raise DpkitUsageError(f"ignore: the target {target!r} cannot be ignored", param="ignore")
    kept = names(keep, "keep", [str(c) for c in df.columns])
    drafted = draft_from_data(df.drop(columns=ignored), target=target, max_categories=max_categories, missing=missing,
                           source=name, keep=[c for c in kept if c not in ignored])
    if ignored:  # in the data's column order
        cols = drafted["columns"]
        drafted["columns"] = {str(c): ({"type": "ignore", "_comment": "declared ignore"} if c in ignored else cols[c])
                              for c in df.columns}
    text = dump_schema(drafted, [*DRAFT_HEADER, f"Source: {name}"])
    return SchemaText(text, parse_schema(text, output_name), "draft")


def validate_schema(schema: str | Path, data: str | os.PathLike[str] | ReadOptions | None = None, *,
                    encoding: str = DEFAULT_ENCODING, delimiter: str | None = None, engine: str | None = None,
                    spark_master: str | None = None) -> dict[str, Any]:
    """Check a schema file and, given ``data``, that it covers every value (``dpkit taxonomy
    validate``).

    Returns the result as the CLI's ``--json`` prints it, with ``"message"``: the one line the
    command says. Raises :class:`~dpkit.errors.SchemaError` for a bad schema and
    :class:`~dpkit.errors.DataError` when the data holds values outside it; warns about values
    outside the numeric bounds and unused columns. Values, line numbers and counts of the data
    are exact only under the private-detail rule (:func:`dpkit.console.private`: a terminal or
    ``-v``), so a cron log keeps none.
    """
    from dpkit.console import private
    from dpkit.io.source import resolve
    from dpkit.schema.importers import schema_summary
    from dpkit.schema.parse import load_schema

    schema_path = str(schema)
    sch = load_schema(schema_path, allow_draft=True)
    if sch.draft:
        warn(f"{schema_path}: is a draft (draft: true) read from the data; publish, forest and cluster "
                      "refuse it until its domains are public and the 'draft' line is deleted", PrivacyLeakWarning)
    summary = f"ok: {schema_path} — {schema_summary(sch)}"
    result: dict[str, Any] = {"ok": True, "schema": schema_path, "draft": bool(sch.draft),
                              "columns": len(sch.columns), "target": sch.target, "summary": schema_summary(sch)}
    if data is None:
        result["message"] = summary
        return result
    from dpkit.io.source import ReadOptions

    opts = data if isinstance(data, ReadOptions) else resolve(ReadOptions(str(data), encoding=encoding,
                                                                          delimiter=delimiter))
    name = "<stdin>" if opts.path == "-" else opts.path
    cov, names = _coverage(opts, name, sch, engine, spark_master)
    if cov.missing_columns:
        raise DataError(
            f"{name}: column(s) {', '.join(map(repr, cov.missing_columns))} of {schema_path} are not in the header "
            f"({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}); check delimiter= or that the schema is "
            "for this data set", param="delimiter")
    if cov.uncovered:
        empty = any(v == "" for vals in cov.uncovered.values() for v, _ in vals)
        hint = ("declare a missing token (missing: ...) for empty values" if empty and sch.missing is None
                else f"add them to {schema_path} or fix the data")
        listing = private(_listing(cov), f"in column(s) {', '.join(map(repr, cov.uncovered))}")
        raise DataError(f"{name}: values not covered by {schema_path}: {listing}; {hint}")
    if cov.missing_rows and sch.missing_policy == "error":
        line, col = cov.missing_first or (0, "?")
        raise DataError(f"{private(f'{name}:{line}', name)}: column {col!r} is missing ({sch.missing!r}) and "
                        f"missing_policy is error; set missing_policy: drop in {schema_path} to drop such rows")
    extra = _warn_bounds_and_unused(cov, sch, name, names, schema_path)
    tail = "all values covered"
    if cov.missing_rows:
        dropped = (f"row(s) with the missing token {sch.missing!r} are kept, as (missing)"  # missing_policy: keep
                   if sch.missing_policy == "keep" else
                   f"row(s) with the missing token {sch.missing!r} are dropped on load")
        tail += f" ({private(f'{cov.missing_rows} {dropped}', dropped)})"
    # whether rows hold the missing token, not how many (an exact count of the data)
    result.update(data=name, covered=True, rows_with_missing=bool(cov.missing_rows),
                  columns_out_of_bounds=sorted(cov.out_of_bounds), unused_columns=[str(c) for c in extra],
                  message=f"{summary}; {name}: {tail}")
    return result


def _coverage(opts: Any, name: str, sch: Schema, engine: str | None, spark_master: str | None) -> tuple[Any, list[str]]:
    """(the data's Coverage of ``sch``, its column names), on either engine."""
    from dpkit.data.coverage import check_coverage
    from dpkit.engine import engine_name
    from dpkit.io.source import first_line
    from dpkit.io.table import read_table

    if engine_name(engine) == "spark":
        from dpkit.engine.spark.rows import coverage
        from dpkit.engine.spark.session import session

        if opts.path == "-":
            raise DpkitUsageError("engine spark reads files or URIs, not stdin ('-')", param="engine")
        # the same Coverage as check_coverage's, from one Spark job (aggregates only)
        return coverage(session(spark_master), opts, sch, first_line=first_line(opts))
    df = read_table(opts)
    return check_coverage(df, sch, source=name, first_line=first_line(opts)), [str(c) for c in df.columns]


def _warn_bounds_and_unused(cov: Any, sch: Schema, name: str, names: list[str], schema_path: str) -> list[str]:
    """Warn of values outside the numeric bounds (counts for the owner only) and of columns the
    schema never uses; those columns."""
    from dpkit.console import private

    for col, (below, above) in cov.out_of_bounds.items():
        c = sch.columns[col]
        bounds = f"the public bounds [{c.lo:g}, {c.hi:g}]; loading clips them"
        warn(private(f"{name}: column {col!r} has {below} value(s) below and {above} above {bounds}",
                     f"{name}: column {col!r} has values outside {bounds}"), DpkitWarning)
    extra = [c for c in names if c not in sch.columns]
    if extra:
        warn(f"{name}: column(s) not in {schema_path} are never used: {', '.join(map(str, extra))}", DpkitWarning)
    return extra


def _listing(cov: Any) -> str:
    """The first uncovered values of each column, with their lines (the owner's detail)."""
    parts = []
    for col, values in cov.uncovered.items():
        shown = ", ".join(f"{v!r} (line {line})" for v, line in values)
        more = cov.uncovered_distinct[col] - len(values)
        parts.append(f"{col}: {shown}{f' and {more} more' if more > 0 else ''}")
    return "; ".join(parts)


@any_frame()
@renamed("learn_schema")
def learn_schema(data: DataLike, *, output: str, epsilon: float, delta: float | None = None,
                 report: str | None = None, bounds: dict[str, str] | None = None, missing: str | None = "auto",
                 levels: int | None = None, **options: Unpack[LearnOptions]) -> tuple[LearnedSchema, str]:
    """``dpkit taxonomy infer --epsilon``: :func:`dpkit.api.domain.infer_schema` writing the schema to
    ``output`` (``-``: none; the caller prints :attr:`LearnedSchema.yaml`) and its report to
    ``report`` (default: beside the output, ``.report.json`` for ``.yaml``).

    ``data``: a path or :class:`~dpkit.io.source.ReadOptions` (not stdin: the run reads it twice).
    ``bounds``: ``{column: "LO:HI"}``, public. ``missing="none"`` declares no missing token.
    Returns the :class:`~dpkit.api.domain.LearnedSchema` and the report's path.
    """
    from dpkit.algorithms.cluster.common import parse_bounds
    from dpkit.api.domain import check_delta, infer_schema
    from dpkit.io.source import ReadOptions

    if delta is None:
        raise DpkitUsageError("epsilon= learns the schema under (epsilon, delta)-DP: give delta= too (e.g. 1e-6)",
                              param="delta")
    d = check_delta(delta)
    # unresolved: the run sniffs the dialect (on either engine), so its key sees a library call's arguments
    opts = data if isinstance(data, ReadOptions) else ReadOptions(str(data))
    if opts.path == "-":
        raise DpkitUsageError("the private mode reads a file, not stdin ('-')")
    if report is None:
        if output == "-":
            raise DpkitUsageError("the schema goes to stdout (no output file), so the report needs a file: "
                                  "give report='FILE'", param="report")
        report = output[: -len(Path(output).suffix)] if Path(output).suffix.lower() in (".yaml", ".yml") else output
        report += ".report.json"
    public_bounds = {}
    for c, text in (bounds or {}).items():
        (lo, *more), (hi, *_) = parse_bounds(text)  # the one LO:HI parser (cluster's --bounds)
        if more:
            raise DpkitUsageError(f"bounds takes one LO:HI per column, got {c}={text!r}", param="bounds")
        public_bounds[c] = (lo, hi)
    learned = infer_schema(
        opts.path, epsilon=epsilon, delta=d, missing=None if str(missing).lower() == "none" else missing,
        bounds=public_bounds or None, levels=0 if levels is None else levels, encoding=opts.encoding,
        delimiter=opts.delimiter, output=output if output != "-" else None, report=report, **options,
    )
    return learned, report
