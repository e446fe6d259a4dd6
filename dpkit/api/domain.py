"""``dpkit.infer_schema``: a schema whose domains are learned under (ε, δ)-DP (docs/domain.md).

Two entry points:

* :func:`infer_schema` — one private run of its own (a :class:`~dpkit.run.PrivateRun`: ε, δ and
  seed checks, the accountant, the ledger, the report), on a path (CSV or Parquet, read as the
  CLI reads it) or a pandas DataFrame. Returns a :class:`LearnedSchema`: a
  :class:`~dpkit.schema.parse.Schema` the private commands accept, with ``.yaml`` (the text, with a
  provenance/spend header) and ``.report`` (the run's report). ``dpkit taxonomy infer --epsilon``
  is this function.
* :func:`learn_schema` — the same discovery *inside* another run (its accountant and generator):
  what ``publish``/``forest train``/``cluster`` without ``--schema`` call with their domain share.

docs/domain.md: the mechanisms, what is learned and what is taken as public, the defaults.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, NamedTuple

from dpkit import validate
from dpkit.api.frames import any_frame
from dpkit.api.spec import REQUIRED, Param, spec, with_doc
from dpkit.defaults import DEFAULT_ENCODING
from dpkit.errors import DpkitUsageError, DpkitWarning, warn
from dpkit.schema.parse import Column, Schema  # noqa: F401  (Column: the fields LearnedSchema inherits name it)
from dpkit.types import DataLike, LedgerLike, SeedLike
from dpkit.validate import renamed

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from dpkit.domain.discover import Discovery, DomainOptions
    from dpkit.domain.metadata import ColumnMeta, Metadata
    from dpkit.privacy.accountant import Accountant

#: the largest δ accepted (:data:`dpkit.validate.MAX_DELTA`)
MAX_DELTA = validate.MAX_DELTA
#: the share of ``publish``'s and ``forest train``'s ε that learns the domain when they run
#: without a schema (docs/domain-reference.md, "Defaults, and why": 0.1 refused every run on Adult at 5 %
#: positives, its minority class under the threshold)
DOMAIN_SHARE = 0.2

Names = str | Iterable[str] | None


#: δ and shares of ε are checked by :mod:`dpkit.validate` (one rule each, for every front end)
check_delta = validate.delta
check_share = validate.share


@dataclass(frozen=True)
class LearnedSchema(Schema):
    """A :class:`Schema` learned under DP, with its YAML text and the report of its run."""

    yaml: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """``15 columns (9 categorical, 5 numeric, 1 ignored), target income``."""
        from dpkit.schema.importers import schema_summary

        return schema_summary(self)

    def _domains(self) -> dict[str, list[str]]:
        from dpkit.api.display import _g
        from dpkit.schema.parse import CategoricalColumn, NumericColumn

        out: dict[str, list[str]] = {}
        for name, col in self.columns.items():
            if isinstance(col, NumericColumn):
                out[name] = [f"numeric [{_g(col.lo)}, {_g(col.hi)}]"]
            elif isinstance(col, CategoricalColumn):
                out[name] = [str(v) for v in col.leaves]
            else:
                out[name] = [col.kind]
        return out

    def __repr__(self) -> str:
        from dpkit.api.display import _names, privacy_line, text

        kinds: dict[str, list[str]] = {}
        for name, col in self.columns.items():
            kinds.setdefault(col.kind, []).append(name)
        return text(f"<dpkit.LearnedSchema: {len(self.columns)} columns, target {self.target!r}>",
                    [privacy_line(self.report), *(f"{k} ({len(v)}): {_names(v)}" for k, v in kinds.items())])

    def _repr_html_(self) -> str:
        from dpkit.api.display import card, privacy_line

        facts = {"learned by": "domain discovery under (ε, δ)-DP (docs/domain.md)",
                 "privacy": privacy_line(self.report), "columns": len(self.columns), "target": self.target,
                 "missing tokens": ", ".join(map(repr, self.missing_tokens)) or "none"}
        return card("dpkit LearnedSchema", facts, self.report, self._domains(), domains_title="Domain of each column")
    #: a noisy record count (post-processing of the category counts), None without categories
    noisy_records: int | None = None

    def write(self, path: str) -> None:
        """Write :attr:`yaml` to ``path`` atomically (``-``: stdout)."""
        from dpkit.io.output import atomic_output

        with atomic_output(path) as fh:
            fh.write(self.yaml)


@dataclass
class Learned:
    """What :func:`learn_schema` returns: the schema, the account of each column, the metadata."""

    schema: Schema
    discovery: Discovery
    metadata: Metadata
    #: (ε, δ) the accountant booked for the learning (a step that did not run spent nothing);
    #: None: unknown, the header then states the ε and δ it is given
    spent: tuple[float, float] | None = None

    @property
    def metas(self) -> list[ColumnMeta]:
        return self.metadata.metas

    @property
    def tokens(self) -> tuple[str, ...]:
        """The schema's missing tokens: the metadata's, and any public token partition
        selection released (:attr:`Discovery.released_tokens`)."""
        return self.schema.missing_tokens

    def yaml(self, *, source: str, epsilon: float, delta: float, seeded_plain: bool = False) -> str:
        """The schema as YAML with the provenance header (what was declared, what was learned).
        The header's spend is what the accountant booked (:attr:`spent`), not the plan ``epsilon``
        and ``delta``: a step that did not run (every type declared, bounds given) spent nothing."""
        from dpkit.domain.render import header, render
        from dpkit.version import __version__

        if self.spent is not None:
            epsilon, delta = self.spent

        lines = header(source=source, epsilon=epsilon, delta=delta, metadata=self.metadata,
                       target=self.schema.target, discovery=self.discovery, version=__version__,
                       seeded_plain=seeded_plain)
        return render(self.discovery, lines, self.metas)

    def metadata_report(self) -> dict[str, Any]:
        """Per column, what was declared and what was learned, with its spend (the report's
        ``parameters.metadata``; public: the declarations and DP outcomes only)."""
        from dpkit.domain.render import metadata_report

        return metadata_report(self.metadata, self.discovery)


def read_strings(data: DataLike, *, encoding: str = DEFAULT_ENCODING, delimiter: str | None = None) -> tuple[pd.DataFrame, str]:
    """``data`` as a DataFrame of stripped strings and its name in messages.

    A path is read by the CLI's rules (:class:`~dpkit.io.source.ReadOptions`, CSV or Parquet,
    the delimiter sniffed when None); a DataFrame's numbers become their ``str`` and NaN/None
    the empty string (declare it with ``missing=`` or let ``"auto"`` find it).
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        out = pd.DataFrame({str(c): [("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v).strip())
                                     for v in data[c].tolist()] for c in data.columns}, dtype=object)
        return out, "<DataFrame>"
    if not isinstance(data, str):
        raise DpkitUsageError(f"data must be a path or a pandas DataFrame, got {type(data).__name__}")
    from dpkit.io.source import ReadOptions, resolve
    from dpkit.io.table import read_table

    opts = resolve(ReadOptions(data, encoding=encoding, delimiter=delimiter))
    return read_table(opts), opts.name


@contextlib.contextmanager
def _strings(data: Any, reading: dict[str, Any], engine: str | None,
             spark_master: str | None) -> Iterator[tuple[Any, str, int]]:
    """The table for :func:`learn_schema`, its name in messages and the line of its first row:
    a string frame (:mod:`dpkit.engine.string_frame`) — on numpy read by the columnar reader
    (each column's codes and distinct strings, never a string per cell), on Spark read where
    the data lives (its cached batches are dropped on exit).

    A path or :class:`~dpkit.io.source.ReadOptions` is read by the rules of every load
    (:func:`dpkit.engine.inputs.read_options`: the options' encoding, header and column names, else
    ``reading``'s), so a run without a schema reads its input exactly as a run with one."""
    from dpkit.engine import engine_name
    from dpkit.engine.inputs import DATAFRAME, check_rows, is_dataframe, read_options
    from dpkit.engine.string_frame import NumpyStringFrame, load_strings

    spark = engine_name(engine) == "spark"
    if is_dataframe(data):
        if spark:
            raise DpkitUsageError("engine 'spark' reads files or URIs, not a pandas DataFrame; use engine='numpy'",
                                  param="engine")
        df = read_strings(check_rows(data))[0]
        yield NumpyStringFrame.of(df, [str(c) for c in df.columns], DATAFRAME), DATAFRAME, 0
        return
    from dpkit.io.source import first_line

    options = read_options(data, **{k: v for k, v in reading.items() if v is not None})
    if not spark:  # the columnar reader: codes and the distinct strings, no string per cell
        yield load_strings(options, None), options.name, first_line(options)
        return
    from dpkit.engine.spark.strings import load_spark_strings

    frame = load_spark_strings(options, None, master=spark_master)
    try:
        yield frame, options.name, first_line(options)
    finally:
        frame.unpersist()


def learn_schema(
    data: DataLike,
    *,
    target: str | None,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    numeric: Names = None,
    categorical: Names = None,
    integer: Names = None,
    date: Names = None,
    ignore: Names = None,
    keep: Names = None,
    missing: str | Sequence[str] | None = "auto",
    values: Mapping[str, Sequence[str]] | None = None,
    bounds: Mapping[str, Sequence[float]] | None = None,
    options: DomainOptions | None = None,
    source: str = "<data>",
    structural_missing: bool = False,
    vocabulary: str | os.PathLike[str] | None | bool = None,
    keep_ids: Names = None,
) -> Learned:
    """Learn the schema of ``data`` inside a run.

    ``data``: a DataFrame of strings (e.g. from :func:`read_strings`) or a string frame of either
    engine (:mod:`dpkit.engine.string_frame`; the Spark engine's from ``load_spark_strings``):
    either way the exact counts come from one ``Frame.many`` scan (:mod:`dpkit.domain.profile`).
    Spends ``epsilon`` and ``delta`` from ``accountant`` (which must have the δ budget) with
    ``rng``; nothing is spent when a declaration is refused. The metadata (types, whole-number
    flags, missing tokens) is declared (``numeric``/``categorical``/``integer``/``date``/``ignore``,
    ``missing``: tokens, or ``"auto"`` to learn them) or learned under DP with
    ``options.meta_share`` of ``epsilon`` (:mod:`dpkit.domain.metadata`); ``values`` (column → its
    public value list) and ``bounds`` (column → public (lo, hi)) are taken as given: nothing is
    spent on them (with ``bounds`` and split levels, only the split points are learned).
    A date column (``date``, or learned) is read as days since 1970: bounds learned on the
    calendar grid, a value that is not a date read as missing (docs/domain-reference.md, "Dates").
    ``keep``: the only predictors to learn (every other column but the target is ignored and
    spends nothing: a forest's ``columns``; they are learned even when named like an
    identifier). ``keep_ids``: columns named like an identifier to learn all the same (the public
    ``keep=``: :func:`dpkit.schema.names.looks_like_id` leaves the others out, with one warning
    naming them). ``structural_missing``: every numeric or date
    column whose missing values were not established gets its missing child all the same, by a
    public rule (``missing: structural``: :func:`dpkit.domain.metadata.structural_missing`; a
    run without a schema, :class:`DomainPlan`). ``vocabulary``: a YAML file of public value lists
    added to the package's (:mod:`dpkit.domain.vocabulary`: yes/no, 0/1, months, …), whose values
    are public candidates of every learned categorical column, listed by a pure-ε rule; None: the
    package's only; False: none (every value through partition selection, as before 0.7).
    """
    from dpkit.domain.discover import DomainOptions, discover
    from dpkit.domain.metadata import (
        MISSING_CANDIDATES,
        Declarations,
        declared_tokens,
        learn_metadata,
    )
    from dpkit.domain.metadata import structural_missing as structural
    from dpkit.domain.vocabulary import load as load_vocabulary
    from dpkit.engine.inputs import is_dataframe

    if is_dataframe(data):
        from dpkit.engine.string_frame import NumpyStringFrame

        data = NumpyStringFrame.of(data, [str(c) for c in data.columns], source)
    header = [str(c) for c in data.header]
    keep_ids, ignore, numeric, categorical, integer, date = _kept(header, target, keep, keep_ids, ignore, numeric,
                                                                  categorical, integer, date)
    opts = options or DomainOptions()
    before = (accountant.spent, accountant.delta_spent)  # the header states what this step spent
    declared = Declarations(numeric=numeric, categorical=categorical, integer=integer, date=date, ignore=ignore,
                            missing=declared_tokens(missing), values=values, bounds=bounds, keep=keep_ids or None)
    # a column the run ignores (declared, left out by keep, or an ID by its name) is never
    # summarized: an ID column's distinct values were as many Python strings as rows
    summaries = _summaries(data, header, target, declared)
    # the target keeps the share of ε it would have with every type declared: the metadata's ε
    # comes out of the predictors' shares (a small table's rarest class must still clear its
    # threshold; docs/domain-reference.md, "Types and missing tokens"). Public: the declarations only.
    target_eps, predictors_eps = _target_share(list(summaries), target, declared, epsilon, opts)
    meta = learn_metadata(summaries, target=target, declared=declared, epsilon=opts.meta_share * predictors_eps,
                          delta=delta, rng=rng, accountant=accountant)
    _warn_named_ids(meta.metas)
    if structural_missing:  # a public rule on the learned kinds: nothing read or spent
        meta.metas = structural(meta.metas)
    metas, tokens = meta.metas, meta.tokens
    vocab = None if vocabulary is False else load_vocabulary(None if vocabulary in (None, True) else vocabulary)  # type: ignore[arg-type]
    cats, nums = _profiles(summaries, metas, tokens, vocab)
    disc = discover(metas, cats, nums, target=target, tokens=tokens, epsilon=epsilon - meta.epsilon, delta=delta - meta.delta,
                    rng=rng, accountant=accountant, options=opts,
                    target_epsilon=target_eps if meta.epsilon > 0 else None,
                    # tokens learned, not declared: a released token of the public list is missing
                    candidates=() if meta.tokens_declared else MISSING_CANDIDATES, vocabulary=vocab)
    return Learned(disc.schema, disc, meta,
                   spent=(max(accountant.spent - before[0], 0.0), max(accountant.delta_spent - before[1], 0.0)))


def _kept(header: list[str], target: str | None, keep: Names, keep_ids: Names, ignore: Names, *declared: Names,
          ) -> tuple[Any, ...]:
    """(keep_ids, ignore, numeric, categorical, integer, date) checked against the header; with
    ``keep`` (a forest's predictors) every other column but the target is ignored and the kept
    ones are learned even when named like an identifier."""
    from dpkit.schema.names import names

    keep_ids = names(keep_ids, "keep", header)
    if keep is None:
        return (keep_ids, ignore, *declared)
    kept = set(names(keep, "columns", header))
    keep_ids = [*keep_ids, *(c for c in header if c in kept and c not in keep_ids)]
    ignore = [*names(ignore, "ignore", header), *(c for c in header if c not in kept and c != target)]
    # a declaration of a column the run leaves out is moot (checked against the header all the same)
    return (keep_ids, ignore, *([c for c in names(v, p, header) if c in kept or c == target]
                                for v, p in zip(declared, ("numeric", "categorical", "integer", "date"), strict=True)))


def _profiles(summaries: dict[str, Any], metas: Sequence[ColumnMeta], tokens: Any, vocab: Any,
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The exact profiles domain discovery noises: each categorical column's value counts, each
    numeric, date or timestamp column's number summary (private: only noised downstream)."""
    from dpkit.domain import profile
    from dpkit.domain.metadata import numeric_summary

    cats = {m.name: profile.categories(summaries[m.name], tokens, vocab) for m in metas if m.kind == "categorical"}
    nums = {m.name: profile.numbers(numeric_summary(summaries[m.name], tokens), tokens)
            for m in metas if m.kind == "numeric"}
    nums |= {m.name: profile.times(summaries[m.name], tokens, m.kind) for m in metas
             if m.kind in ("date", "timestamp")}
    return cats, nums


def _warn_named_ids(metas: Sequence[ColumnMeta]) -> None:
    """One warning naming the columns the public name rule left out (the names are public)."""
    ids = [m.name for m in metas if m.kind == "ignore" and m.why == "named like an identifier"]
    if ids:
        warn(f"column(s) {', '.join(map(repr, ids))} left out: named like an identifier (a public rule on the "
             "name, nothing spent on them); keep='COLUMN' learns one all the same", DpkitWarning, param="keep")


def _summaries(data: Any, header: list[str], target: str | None, declared: Any) -> dict[str, Any]:
    """Every column's summary (:func:`dpkit.domain.profile.summarize`), in header order, but an
    empty one for each column the metadata step skips as ignored (a declared ``ignore`` or, with
    no type declared, a name that looks like an ID: :func:`dpkit.domain.metadata.learn_metadata`)."""
    import numpy as np

    from dpkit.domain import profile
    from dpkit.domain.metadata import named_ids, resolve_declarations

    given = resolve_declarations(header, target, declared)[0]
    skip = {c for c in header if c != target and given.get(c) == "ignore"} | set(named_ids(header, target, declared))
    got = profile.summarize(data, [c for c in header if c not in skip])
    return {c: got[c] if c in got else profile.Summary((), np.zeros(0, dtype=np.int64)) for c in header}


def _target_share(columns: list[str], target: str | None, declared: Any, epsilon: float,
                  options: DomainOptions) -> tuple[float, float]:
    """(the target's ε, the predictors' ε) of the domain split by weight as if every type were
    declared: an undeclared predictor weighs 1, a declared one as :func:`column_weight` says."""
    from dpkit.domain.discover import column_weight, learns
    from dpkit.domain.metadata import ColumnMeta, named_ids, resolve_declarations

    given, _, public_values, public_bounds = resolve_declarations(columns, target, declared)
    by_name = set(named_ids(columns, target, declared))
    weights = {}
    for c in columns:
        kind = given.get(c, "categorical" if c == target else None)
        if kind == "ignore" or c in by_name:
            continue
        m = ColumnMeta(c, kind or "categorical", values=public_values.get(c), bounds=public_bounds.get(c))
        if learns(m, options):
            weights[c] = column_weight(m, options, target) if kind is not None else 1.0
    total = math.fsum(weights.values())
    if target not in weights or total <= 0 or len(weights) == 1:
        return 0.0, epsilon
    target_eps = epsilon * weights[target] / total
    return target_eps, epsilon - target_eps


#: infer_schema()'s parameters, declared once (:mod:`dpkit.api.spec`)
SPEC = spec(
    "taxonomy infer",
    "data target epsilon delta random_state numeric categorical integer date ignore keep missing values bounds "
    "vocabulary levels numeric_weight target_weight empty partition encoding delimiter output report ledger engine "
    "spark_master",
    data=with_doc("data", "path, ReadOptions or pandas.DataFrame\nThe private table: a CSV or Parquet path "
                  "(with ``engine='spark'`` a URI or a directory), a\nReadOptions, a pandas DataFrame or any Arrow "
                  "stream (polars, pyarrow, DuckDB); ``encoding``\nand ``delimiter`` say how to read a CSV path (the "
                  "delimiter is sniffed when None)."),
    target=Param("str, optional\nThe class column (categorical; its rare classes are read as missing)."),
    delta=Param("float\nThe run's δ: refused when not in (0, 1e-3]; a warning when above 1/Ñ (Ñ a noisy "
                "record count).", default=REQUIRED, interval=(0, None)),
    numeric=Param('list of str or "a,b", optional\nColumns declared numeric (public; else their type is learned '
                  "under DP)."),
    categorical=Param('list of str or "a,b", optional\nColumns declared categorical (public).'),
    integer=Param('list of str or "a,b", optional\nNumeric columns declared of whole numbers (public; else learned '
                  "under DP)."),
    date=Param('list of str or "a,b", optional\nColumns declared ISO dates (``YYYY-MM-DD``; public), read as day '
               'numbers (docs/domain-reference.md, "Dates").'),
    ignore=Param('list of str or "a,b", optional\nColumns the schema declares ignore (a sampling weight, an '
                 "identifier): no budget is spent on them."),
    keep=with_doc("keep", 'list of str or "a,b", optional\nColumns named like an identifier (``id``, '
                  "``CustomerId``, ``RowNumber``, …: left out by a public\nrule on the name, with a warning) to "
                  "learn all the same."),
    missing=Param('str or list of str, optional\nThe missing token(s) declared, ``"auto"`` (learned under DP from '
                  "a public list) or\nNone (none).", default="auto"),
    values=Param("dict, optional\nPublic value lists (column → values): taken as given, nothing spent on them."),
    bounds=Param("dict, optional\nPublic bounds (column → (lo, hi)): taken as given, nothing spent on them."),
    vocabulary=Param("str, optional\nA YAML file of public value lists (name → values) added to the package's "
                     "yes/no, 0/1,\nmonths, … (docs/domain-reference.md, \"Public vocabularies\"): their values are "
                     "public\ncandidates of every learned categorical column."),
    levels=Param("int\nLevels of each numeric interval hierarchy of DP medians (0, the default: bounds only).",
                 default=0),
    numeric_weight=Param("float\nA numeric column's share of ε against a categorical one's.", default=1.0,
                         interval=(0, None), flag=""),
    target_weight=Param("float\nThe target's (default 4: its rarest class must clear the threshold).", default=4.0,
                        interval=(0, None), flag=""),
    empty=Param('str, {"error", "ignore"}\nRefuse a predictor none of whose values survives, or declare it '
                "ignore.", default="error", choices=("error", "ignore"), flag=""),
    partition=Param('str, {"laplace", "gaussian", "auto"}\nThe category lists\' selection: per column (Laplace), '
                    "all categorical columns at\nonce (Gaussian: lower thresholds with many columns), or the "
                    "Gaussian when it lowers\nevery column's threshold, from public numbers only (what a forest "
                    'without a schema\nuses; docs/domain-reference.md, "Many columns"); the report\'s '
                    "``parameters.partition``\nnames the one used.", default="laplace",
                    choices=("auto", "laplace", "gaussian")),
    encoding=with_doc("encoding", "str\nThe CSV's text encoding.", default=DEFAULT_ENCODING),
    output=Param("path, optional\nAlso write the schema (YAML) atomically, inside the run (so that a ``ledger`` "
                 "books\nthe run only once it exists).", flag="--output"),
    report=Param("path, optional\nAlso write the report (JSON) atomically, inside the run."),
)


@any_frame()
@renamed("infer_schema")
@SPEC.document
def infer_schema(
    data: DataLike,
    *,
    target: str | None = None,
    epsilon: float,
    delta: float,
    random_state: SeedLike = None,
    numeric: Names = None,
    categorical: Names = None,
    integer: Names = None,
    date: Names = None,
    ignore: Names = None,
    keep: Names = None,
    missing: str | Sequence[str] | None = "auto",
    values: Mapping[str, Sequence[str]] | None = None,
    bounds: Mapping[str, Sequence[float]] | None = None,
    vocabulary: str | None = None,
    levels: int = 0,
    numeric_weight: float = 1.0,
    target_weight: float = 4.0,
    empty: str = "error",
    partition: str = "laplace",
    encoding: str = DEFAULT_ENCODING,
    delimiter: str | None = None,
    output: str | None = None,
    report: str | None = None,
    ledger: LedgerLike = None,
    engine: str | None = None,
    spark_master: str | None = None,
) -> LearnedSchema:
    """Learn ``data``'s schema under (``epsilon``, ``delta``)-DP — one private run.

    Every column's type, whole-number flag and missing tokens not declared are learned under DP
    (docs/domain-reference.md, "Types and missing tokens"), then its categories or bounds
    (docs/domain.md). ``engine="spark"`` (a path): the counts are one Spark aggregation where the
    data lives; the same schema as on numpy for the same key.

    Parameters
    ----------
    {parameters}
    """
    call = dict(locals())  # the arguments, before any import: a keyed run's identity
    from dpkit.domain.discover import DomainOptions
    from dpkit.run import PrivateRun

    d = check_delta(delta)
    if bounds is not None:
        bounds = _public_bounds(bounds)
    if vocabulary is not None:  # read now: a bad file is a usage error before anything is spent
        from dpkit.domain.vocabulary import load

        load(vocabulary)
    options = DomainOptions(numeric_weight=float(numeric_weight), target_weight=float(target_weight),
                            levels=int(levels), empty=empty, partition=partition)
    run = PrivateRun.from_call("taxonomy infer", "domain discovery", call, outputs=[output, report], delta=d)
    with run:
        with _strings(data, {"encoding": encoding, "delimiter": delimiter}, engine, spark_master) as (strings, source, _):
            learned = learn_schema(strings, target=target, epsilon=run.epsilon, delta=d, rng=run.rng,
                                   accountant=run.accountant, numeric=numeric, categorical=categorical,
                                   integer=integer, date=date, ignore=ignore, missing=missing, values=values,
                                   bounds=bounds, options=options, source=source, vocabulary=vocabulary,
                                   keep_ids=keep)
        disc = learned.discovery
        _warn_delta(d, disc.noisy_records)
        text = learned.yaml(source=source, epsilon=run.epsilon, delta=d,
                            seeded_plain=run.seeded and not run.private)
        rep = run.report(*_infer_report(learned, source, target, run.epsilon, d, options))
        if output:
            from dpkit.io.output import atomic_output

            with atomic_output(output) as fh:
                fh.write(text)
        if report:
            from dpkit.report import write_report

            write_report(rep, report)
    base = {f.name: getattr(learned.schema, f.name) for f in fields(Schema)}
    return LearnedSchema(**base, yaml=text, report=rep, noisy_records=disc.noisy_records)


def _infer_report(learned: Learned, source: str, target: str | None, epsilon: float, delta: float,
                  options: DomainOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's ``parameters`` and ``release`` of :func:`infer_schema` (public: what the run
    used, the released schema and the noisy record count)."""
    from dpkit.domain.render import schema_data

    disc = learned.discovery
    params = {"data": source, "target": target, "epsilon": epsilon, "delta": delta, "levels": options.levels,
              "numeric_weight": options.numeric_weight, "target_weight": options.target_weight,
              "partition": disc.partition, "partition_rule": options.partition, "missing": list(learned.tokens),
              "types": {m.name: (m.kind + (" integer" if m.integer else "")) for m in learned.metas},
              "metadata": learned.metadata_report()}
    release = {"schema": {k: v for k, v in schema_data(learned.schema, []).items()},
               "noisy_records": disc.noisy_records}
    return params, release


def _warn_delta(delta: float, noisy_records: int | None) -> None:
    """Warn when δ > 1/Ñ (Ñ a noisy record count, post-processing; never the exact N)."""
    if noisy_records is not None and delta > 1 / max(noisy_records, 1):
        warn(
            f"delta={delta:g} is above 1/N for this data (N ≈ {noisy_records}, a noisy count): "
            "a value held by one record is released with probability up to delta; use delta well "
            "below 1/N (e.g. 1e-6)", DpkitWarning)


# --------------------------------------------------------------------------- runs without a schema

class DomainPlan(NamedTuple):
    """How a run without a schema learns its domain: δ, its share of ε, the columns it
    leaves out (``ignore``) and, for a forest's ``columns``, the only predictors it learns."""

    delta: float
    share: float
    ignore: Names = None
    keep: Names = None
    #: public value lists (column → values), e.g. the target's classes: nothing spent on them
    values: Mapping[str, Sequence[str]] | None = None
    #: the declared metadata (numeric, categorical, integer, date: columns; missing: tokens)
    declared: Mapping[str, Any] | None = None
    #: the learned schema's missing_policy: ``keep`` (publish: a missing value is a value) or
    #: ``drop`` (forest train: its rows are dropped, as before)
    missing_policy: str = "keep"
    #: every learned numeric or date column keeps its missing bucket / child whatever the noisy
    #: counts said (``missing: structural``: dpkit.domain.metadata.structural_missing)
    structural_missing: bool = True
    #: the category lists' selection (DomainOptions.partition): publish keeps the per-column
    #: Laplace; the forest takes "auto" (docs/domain-reference.md, "Many columns")
    partition: str = "laplace"
    #: a file of public vocabularies added to the package's (dpkit.domain.vocabulary)
    vocabulary: str | None = None
    #: columns named like an identifier to learn all the same (``keep=``)
    keep_ids: Names = None
    #: public bounds (column → (lo, hi)): nothing spent on them
    bounds: Mapping[str, Sequence[float]] | None = None


#: the metadata a run without a schema may be told (public; dpkit.domain.metadata)
DECLARATIONS = ("numeric", "categorical", "integer", "date", "missing")


def _public_bounds(bounds: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """``bounds=`` as (lo, hi) per column: a pair, or ``"lo:hi"`` text (``--bounds COL=LO:HI``),
    parsed by the one parser of cluster's bounds."""
    from dpkit.algorithms.cluster.common import parse_bounds

    out = {}
    for col, given in bounds.items():
        lows, highs = parse_bounds(given if isinstance(given, str) else [list(given)])
        if len(lows) != 1:
            raise DpkitUsageError(f"bounds takes one lo:hi per column, got {col}={given!r}", param="bounds")
        out[col] = (lows[0], highs[0])
    return out


def no_schema(schema: Schema | None, delta: Any, domain_share: Any, target: str | None,
              engine: str | None, ignore: Names = None, keep: Names = None,
              values: Mapping[str, Sequence[str]] | None = None, vocabulary: str | None = None, *,
              keep_ids: Names = None, bounds: Mapping[str, Sequence[float]] | None = None,
              **declared: Any) -> DomainPlan | None:
    """``None`` when a schema is given (then ``domain_share``/``ignore``/``keep``/``values``/
    ``bounds``/``vocabulary`` and the declarations ``numeric``/``categorical``/``integer``/``date``/
    ``missing`` must not be, and a ``delta`` is checked and left unused: the domain is public,
    nothing else in these runs spends a δ, and a script that passes the same ``--delta`` to every
    run works with or without a schema); else the run's :class:`DomainPlan`, checked before
    anything is read or spent."""
    from dpkit.engine import engine_name

    unknown = sorted(set(declared) - set(DECLARATIONS))
    if unknown:
        raise DpkitUsageError(f"unknown declaration(s) {', '.join(unknown)}", param=unknown[0])
    if schema is not None:
        if delta is not None:
            check_delta(delta)  # a malformed δ is still a usage error
        for name, value in (("domain_share", domain_share), ("ignore", ignore), ("keep", keep_ids),
                            ("values", values), ("bounds", bounds), ("vocabulary", vocabulary),
                            *declared.items()):
            if value is not None:
                hint = {"ignore": "; declare the column 'type: ignore' in the schema",
                        "keep": "; a schema declares every column itself",
                        "values": "; a schema lists its values itself",
                        "bounds": "; a schema gives its bounds itself"}.get(
                            name, "; a schema declares it itself" if name in DECLARATIONS else "")
                raise DpkitUsageError(f"{name} applies only without a schema (the domain is then learned){hint}",
                                      param=name)
        return None
    if delta is None:
        raise DpkitUsageError("without a schema the domain is learned under (epsilon, delta)-DP: give delta= "
                              "(e.g. 1e-6), or a schema", param="delta")
    d = check_delta(delta)
    share = check_share(DOMAIN_SHARE if domain_share is None else domain_share)
    if not target:
        raise DpkitUsageError("target is required without a schema", param="target")
    engine_name(engine)  # an unknown engine is refused here too, before anything is read
    if bounds is not None:
        bounds = _public_bounds(bounds)
    if vocabulary is not None:  # read now: a bad file is a usage error before anything is spent
        from dpkit.domain.vocabulary import load

        load(vocabulary)
    return DomainPlan(d, share, ignore, keep, values, {k: v for k, v in declared.items() if v is not None},
                      vocabulary=None if vocabulary is None else os.fspath(vocabulary),
                      keep_ids=keep_ids, bounds=bounds)


def learned_schema_path(output: str | None) -> str | None:
    """Where a no-schema run writes the schema it learned: beside its output, ``<stem>.schema.yaml``."""
    if output is None or output == "-" or "://" in output:
        return None
    return os.path.splitext(output)[0] + ".schema.yaml"


@dataclass
class DomainStep:
    """What :func:`learn_domain` learned inside a run: the schema, the data encoded against it,
    the YAML text (with its provenance header), and the run's (δ, share of ε) for it."""

    schema: Schema
    frame: Any
    text: str
    delta: float
    share: float

    #: per column, what was declared and what was learned, with its spend (the report's)
    metadata: dict[str, Any] = field(default_factory=dict)

    def record(self, parameters: dict[str, Any], path: str | None) -> None:
        """Name the step in the report's ``parameters``, and write the learned schema to
        ``path`` (atomically, inside the run: the ledger books the run once it exists)."""
        parameters.update(domain_share=self.share, delta=self.delta, metadata=self.metadata)
        if path is not None:
            from dpkit.io.output import atomic_output

            with atomic_output(path) as fh:
                fh.write(self.text)


def learn_domain(data: DataLike, run: Any, learn: DomainPlan, target: str, reading: dict[str, Any], *,
                 engine: str | None = None, spark_master: str | None = None, path: str | None = None,
                 epsilon: float) -> DomainStep:
    """Learn the schema of ``data`` inside ``run`` (``epsilon``, the run's budget plan's domain
    part, and δ) and encode the data against it (its used columns: the target's predictors and
    the target).

    A predictor none of whose values clears the threshold is left out (declared ignore) with a
    warning naming it and the threshold: a run must not fail on a column it can do without
    (``dpkit taxonomy infer`` refuses instead, as a schema is being written for review). The
    target is never left out: with fewer than two classes released the run is refused.
    ``path``: where the run writes the learned schema, the name load warnings give it.

    The data is read once on either engine, as a string frame (each column's codes and its
    distinct strings; on Spark its rows stay on the executors): the discovery's exact counts
    are counts of those codes, and the codes are then encoded against the learned schema by a
    load's own encoder (:meth:`~dpkit.engine.string_frame.NumpyStringFrame.encode`,
    :meth:`~dpkit.engine.spark.strings.SparkStringFrame.encode`), so what the step adds to
    memory grows with the distinct values, not the rows. Both engines see the same distinct
    values in the same order, so a keyed run learns the same schema on either.
    """
    from dpkit.domain.discover import DomainOptions

    delta, share, eps = learn.delta, learn.share, epsilon
    declared = dict(learn.declared or {})
    declared["missing"] = declared.get("missing", "auto")  # not declared: learned under DP
    with _strings(data, reading, engine, spark_master) as (strings, source, first):
        learned = learn_schema(strings, target=target, epsilon=eps, delta=delta, rng=run.rng,
                               accountant=run.accountant, ignore=learn.ignore, keep=learn.keep,
                               keep_ids=learn.keep_ids, bounds=learn.bounds,
                               values=learn.values, source=source, **declared,
                               options=DomainOptions(empty="ignore", missing_policy=learn.missing_policy,
                                                     partition=learn.partition),
                               structural_missing=learn.structural_missing, vocabulary=learn.vocabulary)
        _warn_left_out(learned)
        _warn_delta(delta, learned.discovery.noisy_records)
        schema = learned.schema if path is None else dataclasses.replace(learned.schema, path=path)
        order = [c for c in schema.used_columns() if c in schema.predictors(target) or c == target]
        # the codes already read, encoded against the learned schema (no second read): on Spark
        # where they are cached, on numpy by the columnar encoder
        frame = strings.encode(schema, order, first_line=first)
    text = learned.yaml(source=source, epsilon=eps, delta=delta, seeded_plain=not run.private)
    return DomainStep(schema, frame, text, delta, share, learned.metadata_report())


def _warn_left_out(learned: Learned) -> None:
    """One warning naming the predictors left out for want of a value above the threshold."""
    out = [n for n in learned.discovery.notes if n.left_out and n.kind == "categorical"]
    if out:
        taus = sorted({n.threshold for n in out if n.threshold is not None})
        warn(
            f"column(s) {', '.join(repr(n.name) for n in out)} left out: no value is held by enough records "
            f"to be released (threshold {', '.join(map(str, taus))} records); raise epsilon or domain_share to "
            "keep them, or write a schema; a column of identifiers (its values rarely repeat) is better left out "
            "with ignore=, which spends nothing on it", DpkitWarning)
    few = [n for n in learned.discovery.notes if n.left_out and n.kind == "numeric"]
    if few:
        # decided on a noisy count of each column's numbers (dpkit.domain.discover.FEW_VALUES): its
        # presence is a DP outcome, and it names no count
        warn(f"numeric column(s) {', '.join(repr(n.name) for n in few)} left out: too few values to learn "
             "bounds from (judged on a noisy count); give public bounds with bounds= (nothing is spent on them) "
             "to keep them", DpkitWarning, param="bounds")

