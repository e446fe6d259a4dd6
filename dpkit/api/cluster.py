"""``dpkit.cluster``: differentially private k-means centroids (DPQTk-means and two baselines).

One private run around one of :mod:`dpkit.algorithms.cluster`'s estimators — DPQTk-means (Zhang & Cheng:
a private quadtree over public bounds, then weighted k-means on its noisy buckets), DPk-means
(Blum et al.'s noisy Lloyd) or EUGk-means (Su et al.'s uniform grid) — returning a
:class:`Clustering`. The bounds are public knowledge: given, or taken from a schema; with neither, a share of ε
learns them under DP (DP quantiles on a public grid, docs/domain.md); reading them from the
data (``allow_data_bounds``) makes the run not private, and every output says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from dpkit.api.card import CardOptions
from dpkit.api.frames import any_frame
from dpkit.api.spec import REQUIRED, Param, spec, with_doc
from dpkit.engine.inputs import (
    DATAFRAME,
    as_strings,
    check_reading,
    check_rows,
    is_dataframe,
    read_dialect,
    read_options,
    schema_of,
    source_path,
)
from dpkit.errors import DataError, DpkitUsageError, PrivacyLeakWarning, warn
from dpkit.types import ClusterOptions, DataLike, LedgerLike, Reading, SchemaLike, SeedLike, later
from dpkit.validate import renamed

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from dpkit.schema.parse import Schema
else:  # the same names for typing.get_type_hints, imported when it evaluates them
    np = later("numpy")
    pd = later("pandas")
    Schema = later("dpkit.schema.parse", "Schema")

ALGORITHMS = ("dpqt", "dpkmeans", "eug")
#: appended to the header of every output's marker column when the release is not private
NOT_PRIVATE_SUFFIX = "_not_private"
#: the guarantee of a run whose bounds were read from the data
DATA_BOUNDS = "none: domain read from data"
#: where the bounds came from when a share of the run's ε learned them
LEARNED = "learned under DP (domain_share of epsilon)"
#: the share of ε that learns the bounds when none are given (docs/domain-reference.md, "cluster with no
#: bounds"; publish and forest learn a whole schema with dpkit.api.domain.DOMAIN_SHARE)
BOUNDS_SHARE = 0.1
#: γ of the learned bounds' prior, nats per grid step (dpkit.privacy.mechanisms.quantiles.bounds_on_grid).
#: Higher than publish's 0.25: a quadtree spends a level on every doubling of a loose box,
#: a taxonomy interval only a split (tuned on s1, docs/results/round5.md)
BOUND_PRIOR = 1.0


@dataclass
class Clustering:
    """The result of :func:`cluster`: the centroids (the DP release), the noisy buckets of
    ``dpqt``/``eug`` (:attr:`histogram`, also part of the release) and the report."""

    centroids: pd.DataFrame
    report: dict[str, Any]
    columns: list[str]
    histogram: pd.DataFrame | None = None
    label: str = "cluster"
    schema: Schema | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        from dpkit.api.display import _names, privacy_line, text

        params = self.report.get("parameters", {})
        return text(f"<dpkit.Clustering {self.report.get('algorithm', '')}: k={len(self.centroids)} on "
                    f"{len(self.columns)} columns>",
                    [privacy_line(self.report), f"columns: {_names(self.columns)}",
                     f"bounds: {params.get('bounds_source', '?')}"])

    def card(self, path: str | os.PathLike[str] | None = None, **options: Unpack[CardOptions]) -> str:
        """The release card of this run (:func:`dpkit.report_card`, docs/report.md): one HTML
        page, returned, and written to ``path`` when given. ``options``: ``test`` and
        ``target`` (the owner's test rows), ``baseline``, ``ledger``, ``dataset``, ``schema``."""
        from dpkit.api.card import report_card

        return report_card(self, path, **options)

    def _repr_html_(self) -> str:
        from dpkit.api.card import report_card

        return report_card(self, embed=True)

    def _centres(self) -> np.ndarray:
        """The centroids as an ``(k, d)`` array, in :attr:`columns` order (a date column's ISO
        coordinate as its day number)."""
        import numpy as np

        from dpkit.schema.dates import to_number

        cols = []
        for c in self.columns:
            time = getattr(self._schema().columns.get(c), "time", None)
            v = self.centroids[c]
            cols.append([to_number(str(x), time) for x in v] if time is not None else v.to_numpy(dtype=float))
        return np.asarray(cols, dtype=float).T.reshape(len(self.centroids), len(self.columns))

    @property
    def centres(self) -> np.ndarray:
        """Deprecated (removed in dpkit 0.8): ``centroids[columns].to_numpy()`` — one name,
        :attr:`centroids`, for the release (an estimator's array is ``cluster_centers_``)."""
        from dpkit.validate import deprecated

        deprecated("Clustering.centres", "Clustering.centroids[clustering.columns].to_numpy()")
        return self._centres()

    @any_frame(back=True)
    def assign(self, data: DataLike, **reading: Unpack[Reading]) -> pd.DataFrame:
        """Every row of ``data`` with the index of its nearest centroid (column
        :attr:`label`); rows with a missing value get an empty label. Post-processing of the
        release, spending nothing — but the result holds ``data``'s rows: it is as private
        as they are."""
        from dpkit.algorithms.cluster.assign import Assigner
        from dpkit.io.source import first_line
        from dpkit.io.table import read_table

        check_reading(reading, "assign")
        if is_dataframe(data):
            df, source, first = as_strings(data, self.columns, self._schema()), DATAFRAME, 0
        else:
            opts = read_options(data, **reading)
            df, source, first = read_table(opts), opts.name, first_line(opts)
        return Assigner(self._schema(), self.columns, self._centres(), self.label, source, first)(df)

    def _schema(self) -> Schema:
        import numpy as np

        if self.schema is not None:
            return self.schema
        return points_schema(self.columns, [-np.inf] * len(self.columns), [np.inf] * len(self.columns), "<centroids>")

    def write(self, path: str | os.PathLike, *, delimiter: str = ",") -> None:
        """Write the centroids (CSV or Parquet by extension, atomically)."""
        from dpkit.io.output import write_csv

        write_csv(self.centroids, os.fspath(path), delimiter=delimiter)

    def write_report(self, path: str | os.PathLike) -> None:
        from dpkit.report import write_report

        write_report(self.report, os.fspath(path))


def points_schema(columns: list[str], lows: Any, highs: Any, source: str, data_schema: Any = None,
                  declared: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None) -> Schema:
    """The numeric schema of the points: the bounds, and the missing tokens and policy of the
    data's own schema when one was given. With learned bounds (``declared``: the declared
    integer columns and tokens), or a column of the data's schema that says ``unparsable:
    missing``, a value that is not a number is missing and its row dropped.
    ``keep`` is ``drop`` here: a point has no missing coordinate, so such a row is dropped."""
    from dpkit.schema.parse import NumericColumn, Schema

    if declared is not None:
        return Schema(
            columns={c: NumericColumn(c, float(lo), float(hi), c in declared[0] or c in declared[2],
                                      unparsable="missing", time="date" if c in declared[2] else None)
                     for c, lo, hi in zip(columns, lows, highs, strict=True)},
            path=source, missing_tokens=declared[1], missing_policy="drop")

    def column(c: str, lo: float, hi: float) -> NumericColumn:
        # a date column of the data's schema stays a date (read from ISO text as days); a learned
        # column's unparsable: missing stays too (a stray value drops its row, never refuses the run)
        own = getattr(data_schema, "columns", {}).get(c)
        time = getattr(own, "time", None)
        unparsable = getattr(own, "unparsable", "error")
        if time is not None:
            return NumericColumn(c, float(lo), float(hi), True, time=time, unparsable=unparsable)
        return NumericColumn(c, float(lo), float(hi), unparsable=unparsable)

    policy = getattr(data_schema, "missing_policy", "error")
    return Schema(
        columns={c: column(c, lo, hi) for c, lo, hi in zip(columns, lows, highs, strict=True)},
        path=source,
        missing_tokens=tuple(getattr(data_schema, "missing_tokens", ()) or ()),
        missing_policy="drop" if policy == "keep" else policy,
    )


def resolve_bounds(columns: list[str] | None, bounds: Any, schema: Schema | None, schema_name: str | None,
                   allow_data_bounds: bool) -> tuple[list[str], Any, str]:
    """(columns, (lows, highs) or None, where the bounds come from): ``bounds`` first, then the
    schema's numeric columns; None with ``allow_data_bounds`` (read from the data: not private)
    or, with neither, to be learned in the run (source :data:`LEARNED`)."""
    from dpkit.algorithms.cluster.common import check_bounds, parse_bounds
    from dpkit.schema.parse import NumericColumn

    if columns:
        columns = list(columns)
    elif schema is not None:
        columns = [n for n, c in schema.columns.items() if isinstance(c, NumericColumn) and n != schema.target]
    else:
        raise DpkitUsageError("columns is required (or give a schema to use its numeric columns)", param="columns")
    if not columns:
        raise DpkitUsageError("no columns to cluster on: name them", param="columns")
    if len(set(columns)) != len(columns):
        raise DpkitUsageError(f"columns names a column twice: {','.join(columns)}", param="columns")
    if bounds is not None:
        lows, highs = parse_bounds(bounds)
        if len(lows) != len(columns):
            raise DpkitUsageError(f"bounds has {len(lows)} lo:hi pair(s) but columns names {len(columns)} column(s)",
                                  param="bounds")
        return columns, check_bounds(lows, highs), "--bounds"
    if schema is not None:
        lows, highs = [], []
        for c in columns:
            col = schema.column(c)
            if not isinstance(col, NumericColumn):
                raise DpkitUsageError(f"column {c!r} is {col.kind} in {schema_name}; clustering needs numeric columns",
                                      param="columns")
            lows.append(col.lo)
            highs.append(col.hi)
        return columns, check_bounds(lows, highs), str(schema_name)
    if allow_data_bounds:
        return columns, None, "data"
    return columns, None, LEARNED


#: cluster()'s parameters, declared once (:mod:`dpkit.api.spec`; ``**options``: the algorithm's)
SPEC = spec(
    "cluster",
    "data n_clusters epsilon columns bounds schema algorithm allow_data_bounds domain_share integer missing date "
    "random_state ledger engine spark_master output report histogram assign config output_delimiter encoding "
    "delimiter header column_names",
    n_clusters=Param("int\nThe number of clusters k (``k`` before 0.5, deprecated).", default=REQUIRED,
                     interval=(0, None), flag="--clusters"),
    columns=Param("list of str, optional\nThe numeric columns (default: the schema's numeric columns but its target)."),
    bounds=Param('"lo:hi,lo:hi" or list of (lo, hi), optional\nThe public bounds of each column, in ``columns`` '
                 "order (points outside are clipped)."),
    schema=Param("Schema or path, optional\nBounds of numeric columns when ``bounds`` is not given, and the "
                 "missing-value tokens."),
    algorithm=Param('str, {"dpqt", "dpkmeans", "eug"}\nDPQTk-means (a private quadtree, then k-means on its '
                    "buckets), or a baseline.", default="dpqt", choices=("dpqt", "dpkmeans", "eug")),
    allow_data_bounds=Param("bool\nWithout bounds, read them from the data: NOT private; the report, the "
                            "ledger and every\noutput say so (headers end in ``_not_private``).", default=False),
    domain_share=with_doc("domain_share", "float, optional\nWith neither bounds nor a schema (nor "
                          "``allow_data_bounds``), the share of ε (default\n0.1) that learns the bounds under "
                          "pure ε-DP — one exponential mechanism per column on a\npublic grid (docs/domain.md); "
                          "the rest runs the algorithm. The report lists the domain\nsteps and the learned bounds."),
    integer=with_doc("integer", 'list of str or "a,b", optional\nWhen the bounds are learned (no bounds, no '
                     "schema): the columns of whole numbers (their\nbounds on the integer grid), declared (public)."),
    missing=with_doc("missing", 'str or list of str, optional\nWhen the bounds are learned: the missing-value '
                     "tokens, declared (public). Either way a value\nthat is not a number is read as missing and "
                     "its row dropped, never refused (a refusal\none record can cause would reveal it; "
                     'docs/domain-reference.md, "Types and missing tokens").'),
    date=with_doc("date", 'list of str or "a,b", optional\nWhen the bounds are learned: the columns of ISO dates '
                  "(``YYYY-MM-DD``), declared\n(public). Each is clustered as its day number (days since "
                  "1970-01-01), its bounds learned\non the calendar grid (docs/domain-reference.md, \"Dates\"); a "
                  "value that is not a date is missing\nand its row dropped. The centroids give its coordinate as "
                  "an ISO date (the report keeps\nday numbers). With a schema, its ``type: date`` columns are read "
                  "the same way."),
    output=Param("path, optional\nAlso write the centroids (CSV) atomically, inside the run.", flag="--output"),
    report=Param("path, optional\nAlso write the report (JSON), atomically, inside the run."),
    histogram=Param("path, optional\nAlso write the noisy buckets (dpqt, eug)."),
    assign=Param("path, optional\nAlso write every input row with its nearest centroid (the private rows: for "
                 "the data\nowner's own use)."),
)


@any_frame()
@renamed("cluster")
@SPEC.document
def cluster(
    data: DataLike,
    *,
    n_clusters: int,
    epsilon: float,
    columns: list[str] | None = None,
    bounds: str | Sequence[tuple[float, float]] | None = None,
    schema: SchemaLike | None = None,
    algorithm: str = "dpqt",
    allow_data_bounds: bool = False,
    domain_share: float | None = None,
    integer: str | list[str] | None = None,
    missing: str | list[str] | None = None,
    date: str | list[str] | None = None,
    random_state: SeedLike = None,
    ledger: LedgerLike = None,
    engine: str | None = None,
    spark_master: str | None = None,
    output: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    histogram: str | os.PathLike | None = None,
    assign: str | os.PathLike | None = None,
    config: str | None = None,
    output_delimiter: str = ",",
    encoding: str | None = None,
    delimiter: str | None = None,
    header: bool = True,
    column_names: list[str] | None = None,
    **options: Unpack[ClusterOptions],
) -> Clustering:
    """ε-differentially private k-means centroids of numeric columns.

    Parameters
    ----------
    {parameters}
    **options
        The algorithm's options (``dpkit.algorithms.cluster``: dpqt's ``gamma``, ``max_height``,
        ``threshold``, ``allocation``, ``split``, ``n_estimate``; dpkmeans' ``iterations``;
        eug's ``n_estimate``), defaults in the estimators.

    Returns
    -------
    Clustering
    """
    call = dict(locals())  # the arguments, before any import: a keyed run's identity
    import numpy as np

    from dpkit.algorithms.cluster import make_model
    from dpkit.engine import engine_name
    from dpkit.run import PrivateRun

    k = _check_arguments(n_clusters, algorithm, options, histogram)
    out, rep, hist, assign_out = outs = _outputs(output, report, histogram, assign)
    data_schema, schema_name = schema_of(schema)
    named = bool(columns)
    columns, resolved, source = resolve_bounds(columns, bounds, data_schema, schema_name, allow_data_bounds)
    spark = engine_name(engine) == "spark"
    share = _learn_share(source, domain_share)
    declared = _declared(columns, share, integer, missing, date)
    spark_uri = spark and "://" in str(assign_out or "")  # Spark checks it when it writes
    run = PrivateRun.from_call("cluster", algorithm, call, schema_name=schema_name, schema=data_schema,
                               outputs=[o for o in outs if not (spark_uri and o == assign_out)])
    lows, highs = resolved if resolved is not None else ([-np.inf] * len(columns), [np.inf] * len(columns))
    schema_pts = points_schema(columns, lows, highs, source, data_schema, declared)
    reading = read_dialect(encoding, delimiter, header, column_names)
    frame, points, raw, first = _read(data, columns, schema_pts, resolved is None, assign_out, reading, named,
                                      spark, spark_master)
    guarantee = None
    if resolved is None and share is None:
        resolved, guarantee = _data_bounds(points, frame, columns, run), DATA_BOUNDS
    model = make_model(algorithm, k, run.epsilon, resolved, options) if share is None else None
    # a plain integer seed is as non-private as data bounds: its outputs are marked the same way
    mark = NOT_PRIVATE_SUFFIX if guarantee or not run.private else ""
    label = "cluster" + mark
    with run:
        if share is not None:
            resolved, schema_pts, frame, points, left = _in_learned_bounds(run, share, frame, points, columns,
                                                                           source, data_schema, declared)
            model = make_model(algorithm, k, left, resolved, options)
        model.fit(points if points is not None else frame, accountant=run.accountant, rng=run.rng, columns=columns)
        centres = np.asarray(model.cluster_centers_, dtype=float)
        result = _result(model, centres, algorithm, columns, schema_pts, label, mark)
        _write(result, out, hist)
        if assign_out:  # post-processing of the release, for the data owner: holds the private rows
            _assign(result, centres, data, reading, frame, raw, first, assign_out, source_path(data), spark,
                    output_delimiter)
        params = _parameters(model, algorithm, k, columns, resolved, source, data_bounds=bool(guarantee), share=share)
        release = _release(model, algorithm, centres, not_private=[o for o in (out, hist, assign_out) if o] if mark
                           else None)
        result.report = run.report(params, release, guarantee=guarantee)
        if rep is not None:
            result.write_report(rep)
    return result


def _in_learned_bounds(run: Any, share: float, frame: Any, points: Any, columns: list[str], source: str,
                       data_schema: Any, declared: Any) -> tuple[Any, Any, Any, Any, float]:
    """The bounds learned in the run from their share of ε (the budget plan: the bounds' share, the
    algorithm what is left of it), and what follows from them: (bounds, the points' schema, the
    frame, the points clipped to the box, the algorithm's ε)."""
    import numpy as np

    from dpkit.privacy.plan import BudgetPlan

    plan = BudgetPlan(run.epsilon, {"domain": share}, rest="algorithm")
    resolved = _learn_bounds(frame if points is None else points, columns, plan["domain"], run,
                             declared[0] if declared else (), declared[2] if declared else ())
    schema_pts = points_schema(columns, *resolved, source, data_schema, declared)
    if points is None:  # Spark: the cached points clipped to the learned box (no second read)
        frame = frame.clipped(schema_pts)
    else:  # the counts' sensitivity assumes every point lies in the box
        points = np.clip(points, *resolved)
    return resolved, schema_pts, frame, points, plan.left(plan["domain"])


def _check_arguments(n_clusters: Any, algorithm: str, options: dict[str, Any], histogram: Any) -> int:
    """k, once ``cluster``'s own arguments are checked (before anything is read or spent)."""
    from dpkit.algorithms.cluster import OPTIONS
    from dpkit.algorithms.cluster.common import check_k
    from dpkit.validate import keywords

    if n_clusters is None:
        raise DpkitUsageError("n_clusters (the number of clusters) is required", param="n_clusters")
    k = check_k(n_clusters, "n_clusters")
    if algorithm not in ALGORITHMS:
        raise DpkitUsageError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}",
                              param="algorithm")
    keywords(options, list(dict.fromkeys(o for opts in OPTIONS.values() for o in opts)), "cluster",
             named=_NAMED)
    if histogram is not None and algorithm == "dpkmeans":
        raise DpkitUsageError("histogram needs algorithm dpqt or eug (dpkmeans releases no buckets)",
                              param="histogram")
    return k


def _outputs(*paths: Any) -> list[str | None]:
    """The output paths as strings (:func:`dpkit.api.pipeline.output_paths`); at most one on stdout."""
    from dpkit.api.pipeline import output_paths

    outs = output_paths(*paths)
    if sum(o == "-" for o in outs) > 1:
        raise DpkitUsageError("only one output can go to stdout ('-')")
    return outs


def _read(data: Any, columns: list[str], schema: Schema, need_points: bool, assign_out: str | None,
          reading: dict[str, Any], named: bool, spark: bool, spark_master: str | None) -> tuple[Any, Any, Any, Any]:
    """(frame, points, raw rows, first line) of the input: on Spark a frame of cached points
    (the assign output's location checked before any ε is spent), on numpy the points."""
    if not spark:
        return _load_numpy(data, columns, schema, need_points, bool(assign_out), reading, named)
    if assign_out:
        from dpkit.engine.spark.session import session
        from dpkit.engine.spark.write import check_output

        check_output(session(spark_master), assign_out)  # before any ε is spent
    from dpkit.engine import load

    return load(read_options(data, **reading), schema, columns, engine="spark", master=spark_master), None, None, None


def _data_bounds(points: Any, frame: Any, columns: list[str], run: Any) -> Any:
    """The bounds read from the data (``allow_data_bounds``): NOT private — the run is marked so
    and a warning says it."""
    from dpkit.algorithms.cluster.common import data_bounds

    if points is not None:
        resolved = data_bounds(points)
    else:
        from dpkit.engine.spark.rows import extremes

        # the same min and max as the numpy engine's (one Spark aggregation): NOT private
        resolved = data_bounds(extremes(frame, columns))
    run.not_private.append("--allow-data-bounds (domain read from data)")
    warn("the bounds were read from the data (allow_data_bounds), so the release is NOT "
         "differentially private (the report says so); give public bounds instead", PrivacyLeakWarning)
    return resolved


def _result(model: Any, centres: Any, algorithm: str, columns: list[str], schema: Schema, label: str,
            mark: str) -> Clustering:
    """The clustering of a fitted model: its centroids (dates as ISO dates) numbered under
    ``label``, and the noisy buckets of dpqt/eug."""
    import numpy as np
    import pandas as pd

    # allow_data_bounds: every output is marked in its header (a CSV stays a CSV) and
    # listed in the report's release.not_private_outputs (docs/cluster.md)
    table = _as_dates(pd.DataFrame(centres, columns=columns), schema)
    table.insert(0, label, np.arange(len(centres)))
    buckets = _histogram(model, columns, mark) if algorithm in ("dpqt", "eug") else None
    return Clustering(table, {}, columns, buckets, label, schema)


def _write(result: Clustering, out: str | None, hist: str | None) -> None:
    from dpkit.io.output import write_csv

    if out is not None:
        write_csv(result.centroids, out)
    if hist is not None:
        write_csv(result.histogram, hist)


def _assign(result: Clustering, centres: Any, data: Any, reading: dict[str, Any], frame: Any, raw: Any, first: Any,
            assign_out: str, path: str | None, spark: bool, delimiter: str) -> None:
    """Write each input row with its nearest centroid's label (rows dropped for a missing value
    get an empty label)."""
    from dpkit.algorithms.cluster.assign import Assigner
    from dpkit.run import private_rows_mode

    if spark:
        from dpkit.engine.spark.rows import label_rows

        label_rows(frame, read_options(data, **reading), Assigner(result.schema, result.columns, centres,
                                                                  result.label, frame.source, None),
                   result.label, assign_out, delimiter=delimiter, mode=private_rows_mode(path))
        return
    from dpkit.io.output import write_csv

    assigned = Assigner(result.schema, result.columns, centres, result.label, raw[1], first)(raw[0])
    write_csv(assigned, assign_out, delimiter=delimiter, mode=private_rows_mode(path))


def _learn_share(source: str, domain_share: Any) -> float | None:
    """The share of ε that learns the bounds (None: they are given, or read from the data)."""
    from dpkit.api.domain import check_share

    if source != LEARNED:
        if domain_share is not None:
            raise DpkitUsageError("domain_share applies only when the bounds are learned (no bounds and no schema)",
                                  param="domain_share")
        return None
    return check_share(BOUNDS_SHARE if domain_share is None else domain_share)


def _declared(columns: list[str], share: float | None, integer: Any, missing: Any, date: Any = None
              ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """(integer columns, missing tokens, date columns) declared for learned bounds; None when the
    bounds are given (then none may be)."""
    from dpkit.domain.metadata import declared_tokens
    from dpkit.schema.names import names

    if share is None:
        for name, value in (("integer", integer), ("missing", missing), ("date", date)):
            if value is not None:
                raise DpkitUsageError(f"{name} applies only when the bounds are learned (no bounds and no schema)",
                                      param=name)
        return None
    tokens = declared_tokens("none" if missing is None else missing) or ()
    return tuple(names(integer, "integer", columns)), tokens, tuple(names(date, "date", columns))


def _as_dates(table: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """The centroids with each date/timestamp column's coordinate as ISO text (post-processing)."""
    from dpkit.schema.dates import format_time

    for c in table.columns:
        time = getattr(schema.columns.get(c), "time", None)
        if time is not None:
            table[c] = [format_time(float(x), time) for x in table[c]]
    return table


def _learn_bounds(data: Any, columns: list[str], epsilon: float, run: Any,
                  integer: tuple[str, ...] = (), date: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """Learn the bounds inside ``run`` (``epsilon`` of it) by the domain discovery every run
    without a schema uses (:func:`dpkit.domain.discover.discover`: numeric columns, equal
    shares of ε, bounds only — pure ε), with cluster's firmer prior. ``data``: the points (an
    ``(n, d)`` array) or, on Spark, their frame (each column's exact value counts: one
    aggregation each, the same profile as the array's)."""
    import numpy as np

    from dpkit.domain.discover import DomainOptions, discover
    from dpkit.domain.metadata import ColumnMeta
    from dpkit.privacy.mechanisms.quantiles import Profile

    if isinstance(data, np.ndarray):
        profiles = {c: Profile.of(data[:, j]) for j, c in enumerate(columns)}
    else:
        answers = data.many([("value_counts", c, [], ()) for c in columns])
        profiles = {c: Profile.of(np.asarray(v, dtype=np.float64), np.asarray(n, dtype=np.int64).reshape(-1))
                    for c, (v, n) in zip(columns, answers, strict=True)}
    metas = [ColumnMeta(c, "date", integer=True, given=True, declared=("type",)) if c in date
             else ColumnMeta(c, "numeric", integer=c in integer) for c in columns]
    found = discover(metas, {}, profiles, target=None,
                     tokens=(),
                     epsilon=epsilon, delta=0.0, rng=run.rng, accountant=run.accountant,
                     options=DomainOptions(bound_prior=BOUND_PRIOR))
    lo = np.array([found.schema.columns[c].lo for c in columns])
    hi = np.array([found.schema.columns[c].hi for c in columns])
    return lo, hi


def _load_numpy(data: Any, columns: list[str], schema: Schema, need_points: bool, need_rows: bool,
                reading: dict[str, Any], named: bool = True) -> tuple[Any, Any, Any, Any]:
    """(frame, points, (raw rows, source) or None, first line) on the numpy engine.

    The points are an ``(n, d)`` float array only where they are needed as one (data-derived
    bounds); otherwise the loaded columns as a numpy frame, which the models count from without
    a copy (at 100M rows the array took 1.6 GB). The raw strings are read only for ``assign``
    (and stdin, which can be read once)."""
    import numpy as np

    from dpkit.data.encode import encode
    from dpkit.engine.numpy_frame import NumpyFrame
    from dpkit.io.source import first_line
    from dpkit.io.table import column_names as header_of
    from dpkit.io.table import load, read_table

    if is_dataframe(data):
        df, source, first = as_strings(check_rows(data), columns, schema), DATAFRAME, 0
        names = list(df.columns)
    else:
        opts = read_options(data, **reading)
        df = read_table(opts) if need_rows or opts.path == "-" else None
        names = list(df.columns) if df is not None else header_of(opts)
        source, first = opts.name, first_line(opts)
    absent = [c for c in columns if c not in names]
    if absent and named:  # columns a schema named: the encoder's message (a different data set?)
        head = ", ".join(map(str, names[:8])) + (", ..." if len(names) > 8 else "")
        hint = " — the header is one column: wrong delimiter?" if len(names) == 1 else ""
        raise DataError(f"{source}: column(s) {', '.join(map(repr, absent))} to cluster on not found in the header "
                        f"({head}){hint}", param="columns")
    table = encode(df, schema, columns, source=source, first_line=first) if df is not None else load(opts, schema,
                                                                                                        columns)
    raw = (df, source) if df is not None else None
    if not need_points:
        return NumpyFrame(table), None, raw, first
    points = np.stack([np.asarray(table.columns[c], dtype=float) for c in columns], axis=1)
    return None, points, raw, first


def _histogram(model: Any, columns: list[str], mark: str) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    b = model.buckets_
    hist = {}
    for j, c in enumerate(columns):
        hist[f"{c}_lo"] = b.lows[:, j]
        hist[f"{c}_hi"] = b.highs[:, j]
    hist["count" + mark] = np.clip(b.counts, 0, None)
    return pd.DataFrame(hist)


def _parameters(model: Any, algorithm: str, k: int, columns: list[str], bounds: Any, source: str, *,
                data_bounds: bool = False, share: float | None = None) -> dict[str, Any]:
    """The report's ``parameters``: the values the run used (bounds read from the data are not
    reported)."""
    params: dict[str, Any] = {
        "columns": columns, "k": k, "bounds": [[float(a), float(b)] for a, b in zip(*bounds, strict=True)],
        "bounds_source": source, "algorithm": algorithm,
    }
    if algorithm == "dpqt":
        params.update({n: getattr(model, n) for n in ("gamma", "max_height", "threshold", "allocation", "split",
                                                       "n_estimate")})
    elif algorithm == "eug":
        params["n_estimate"] = model.n_estimate
    else:
        params["iterations"] = model.iterations
    if data_bounds:
        params["bounds"] = "read from the data (not reported)"
    if share is not None:
        params["domain_share"] = share
    return params


def _release(model: Any, algorithm: str, centres: Any, *, not_private: list[str] | None = None) -> dict[str, Any]:
    """The report's ``release``; ``not_private``: the outputs marked not private (data bounds or
    a plain seed)."""
    release: dict[str, Any] = {"centroids": centres.tolist()}
    if algorithm in ("dpqt", "eug"):
        release["n_estimate"] = int(model.n_estimate_)
        release["buckets"] = len(model.buckets_.counts)
    if algorithm == "dpqt":
        release.update({
            "height": int(model.height_), "split": model.split_,
            "level_epsilons": model.level_epsilons_.tolist(),
            "thresholds": model.threshold_.tolist(),
            "epsilon_parts": model.epsilons_,
        })
    elif algorithm == "eug":
        release["grid"] = int(model.grid_)
    else:
        release["iteration_epsilons"] = model.iteration_epsilons_.tolist()
    if model.note_:
        release["note"] = model.note_
    if not_private is not None:
        release["not_private_outputs"] = not_private
    return release


#: cluster()'s named parameters (for the closest-keyword hint of an unknown one)
_NAMED = tuple(p for p in __import__("inspect").signature(cluster).parameters if p != "options")
