"""``dpkit.kanon_select``: a k-anonymous table by choosing — or generalizing — its quasi-identifiers.

XGB-KA (Wang & Wan: quasi-identifiers ranked by XGBoost gain, kept greedily while the table stays
k-anonymous) or the Greedy-Hamdist baseline, on either engine through a string frame
(:mod:`dpkit.engine.string_frame`); with ``generalize``, a Flash lattice search over the schema's
hierarchies with suppression (numpy engine). This is k-anonymity, not differential privacy:
the report states k, never an ε. ``dpkit kanon-select`` is this function and a print;
``--check-only`` is :func:`check_kanon`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from dpkit.api.card import CardOptions
from dpkit.api.frames import any_frame
from dpkit.api.spec import REQUIRED, Param, spec, with_doc
from dpkit.engine.inputs import (
    DATAFRAME,
    is_dataframe,
    read_dialect,
    read_options,
    schema_of,
    source_path,
)
from dpkit.errors import DataError, DpkitUsageError, warn
from dpkit.types import DataLike, SchemaLike, later
from dpkit.validate import renamed

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.algorithms.kanon.checks import KAnonymityCheck
    from dpkit.schema.parse import Schema
else:  # the same names for typing.get_type_hints, imported when it evaluates them
    pd = later("pandas")
    KAnonymityCheck = later("dpkit.algorithms.kanon.checks", "KAnonymityCheck")
    Schema = later("dpkit.schema.parse", "Schema")


@dataclass
class KAnonymousTable:
    """The result of :func:`kanon_select`: the output rows and the report (k, the ranking, the
    selected or generalized columns, the class-size distribution)."""

    report: dict[str, Any]
    candidates: list[str]
    columns: list[str]
    _frame: Any = field(default=None, repr=False)  # a string frame of the rows (selection)
    _table: Any = field(default=None, repr=False)  # the rows as a DataFrame (generalization)

    @property
    def selected(self) -> list[str]:
        return list(self.report["release"]["selected"])

    #: the caller's kind of dataframe ("polars", or None: pandas), set at the door (dpkit.api.frames)
    _kind: str | None = field(default=None, init=False, repr=False)

    @property
    def table(self) -> pd.DataFrame:
        """The output rows (``category`` columns of the strings written); a polars frame for a
        run on polars."""
        from dpkit.api.frames import in_kind

        return in_kind(self._rows(), self._kind)

    def _rows(self) -> pd.DataFrame:
        """:attr:`table` as pandas, built once (what the card reads)."""
        if self._table is None:
            self._table = self._frame.categories(self.columns)
        return self._table

    def write(self, path: str | os.PathLike, *, delimiter: str = ",") -> None:
        """Write the output (CSV, or Parquet by extension; atomically; ``-`` is stdout). On the
        Spark engine the rows are written by Spark."""
        path = os.fspath(path)
        if self._frame is not None:
            self._frame.write_rows(self.columns, path, delimiter=delimiter)
            return
        from dpkit.io.category_csv import write_categories

        write_categories(self._table, path, delimiter=delimiter)

    def write_report(self, path: str | os.PathLike) -> None:
        from dpkit.report import write_report

        write_report(self.report, os.fspath(path))

    def __repr__(self) -> str:
        from dpkit.api.display import _names, text

        rel = self.report.get("release", {})
        return text(f"<dpkit.KAnonymousTable {self.report.get('algorithm', '')}: "
                    f"k={self.report.get('privacy', {}).get('k')} (k-anonymity, not differential privacy), "
                    f"{len(self.columns)} columns>",
                    [self.summary(), f"columns: {_names(self.columns)}",
                     f"candidates: {_names(list(rel.get('candidates', [])))}"])

    def card(self, path: str | os.PathLike[str] | None = None, **options: Unpack[CardOptions]) -> str:
        """The release card of this run (:func:`dpkit.report_card`, docs/report.md): one HTML
        page, returned, and written to ``path`` when given. ``options``: ``test`` and
        ``target`` (the owner's test rows), ``baseline``, ``ledger``, ``dataset``, ``schema``."""
        from dpkit.api.card import report_card

        return report_card(self, path, **options)

    def _repr_html_(self) -> str:
        from dpkit.api.card import report_card

        return report_card(self, embed=True, head=self._rows())

    def summary(self) -> str:
        """One line: the quasi-identifiers kept (with their levels), what was suppressed, the
        smallest class."""
        rel, doc = self.report["release"], self.report
        k_line = f"smallest class {rel['equivalence_classes']['smallest']} ≥ k={doc['privacy']['k']}"
        if "generalization" in rel:
            levels = rel["generalization"]["levels"]
            chosen = ", ".join(f"{c} ({levels[c]['meaning']})" for c in rel["selected"]) or "none"
            k_line = (f"suppressed {doc['privacy']['suppressed_records']} record(s) "
                      f"({100 * rel['suppression']['fraction']:.2f}% ≤ "
                      f"{100 * doc['parameters']['max_suppression']:g}%); " + k_line)
        else:
            chosen = ", ".join(rel["selected"]) or "none"
        return f"kept {len(rel['selected'])} of {len(rel['candidates'])} quasi-identifiers ({chosen}); {k_line}"


def _used(quasi_identifiers: list[str] | None, schema: Schema | None, target: str, keep: list[str],
          sensitive: str | None) -> list[str] | None:
    """The columns the selection can use (None: every column; the reader skips the others when
    the header has them all)."""
    if quasi_identifiers is None and schema is None:
        return None
    qis = quasi_identifiers if quasi_identifiers is not None else schema.predictors(target)  # type: ignore[union-attr]
    return list(dict.fromkeys([*qis, target, *keep] + ([sensitive] if sensitive else [])))


#: kanon_select()'s parameters, declared once (:mod:`dpkit.api.spec`)
SPEC = spec(
    "kanon-select",
    "data k schema target generalize quasi_identifiers ranker keep sensitive l require_features random_state "
    "rank_sample max_suppression max_lattice engine spark_master output report output_delimiter encoding delimiter "
    "header column_names",
    data=with_doc("data", "path, ReadOptions or pandas.DataFrame\nThe table, read as written: equivalence classes "
                  "are on its strings."),
    k=Param("int\nEvery equivalence class keeps at least ``k`` records.", default=REQUIRED, interval=(0, None),
            flag="-k"),
    schema=Param("Schema or path, optional\nColumn types for the ranker, ignored columns, missing values; "
                 "required with\n``generalize`` (its taxonomies and bounds are the hierarchies)."),
    generalize=Param("bool\nGeneralize along the schema's hierarchies and suppress at most ``max_suppression`` "
                     "of\nthe records (Flash, Kohlmayer et al. 2012) instead of keeping or dropping columns.",
                     default=False),
    quasi_identifiers=Param("list of str, optional\nThe candidates (default: every non-target column, or the "
                            "schema's predictors)."),
    ranker=Param('str, {"xgboost", "hamming"}\nHow the candidates are ranked: XGBoost gain (XGB-KA), or the '
                 "Greedy-Hamdist baseline.", default="xgboost", choices=("xgboost", "hamming")),
    keep=Param("list of str, optional\nColumns copied as they are."),
    sensitive=Param("str, optional\nThe ℓ-diversity column (with ``l``)."),
    l=Param("int, optional\nEvery equivalence class holds at least ``l`` distinct values of ``sensitive``."),
    require_features=Param("bool\nRefuse (a DataError) instead of returning the target-only table when no "
                           "candidate can be kept.", default=False),
    random_state=Param("int, optional\nThe XGBoost ranking's seed (default 0; ``seed`` before 0.5, deprecated).",
                       flag="--seed"),
    rank_sample=Param("int, optional\nAt most how many records the ranking trains on (default 100,000; 0: all)."),
    max_suppression=Param("float, optional\nWith ``generalize``: the largest share of records suppressed "
                          "(default 0.02)."),
    max_lattice=Param("int, optional\nWith ``generalize``: at most how many lattice nodes are searched "
                      "(default 20,000)."),
    output=Param("path, optional\nAlso write the output rows (atomically).", flag="--output"),
    report=Param("path, optional\nAlso write the report (atomically)."),
)


@any_frame(back=True)
@renamed("kanon_select")
@SPEC.document
def kanon_select(
    data: DataLike,
    *,
    k: int,
    schema: SchemaLike | None = None,
    target: str | None = None,
    generalize: bool = False,
    quasi_identifiers: list[str] | None = None,
    ranker: str = "xgboost",
    keep: list[str] | None = None,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741 — the ℓ of ℓ-diversity
    require_features: bool = False,
    random_state: int | None = None,
    rank_sample: int | None = None,
    max_suppression: float | None = None,
    max_lattice: int | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
    output: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    output_delimiter: str = ",",
    encoding: str | None = None,
    delimiter: str | None = None,
    header: bool = True,
    column_names: list[str] | None = None,
) -> KAnonymousTable:
    """A k-anonymous (and, with ``sensitive`` and ``l``, ℓ-diverse) release of ``data``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    KAnonymousTable
    """
    from dpkit.algorithms.kanon.greedy import DEFAULT_RANK_SAMPLE
    from dpkit.run import check_output_paths

    keep = list(keep or [])
    _check(k, l, sensitive, generalize, schema, max_suppression, engine)
    schema_obj, schema_name = schema_of(schema, allow_draft=True)
    target = target or (schema_obj.target if schema_obj is not None else None)
    if target is None:
        raise DpkitUsageError("target is required (the class column), unless the schema names one", param="target")
    out = None if output is None else os.fspath(output)
    rep = None if report is None else os.fspath(report)
    check_output_paths([source_path(data), schema_name], [out, rep])
    rank_sample = DEFAULT_RANK_SAMPLE if rank_sample is None else rank_sample
    used = _used(quasi_identifiers, schema_obj, target, keep, sensitive)
    reading = read_dialect(encoding, delimiter, header, column_names)
    parameters: dict[str, Any] = {
        "k": k, "target": target, "ranker": ranker, "quasi_identifiers": quasi_identifiers, "schema": schema_name,
        "keep": keep, "sensitive": sensitive, "l": l, "require_features": require_features, "seed": random_state,
        "rank_sample": rank_sample,
    }
    if generalize:
        result = _generalize(data, reading, used, k=k, target=target, schema=schema_obj, qis=quasi_identifiers,
                             ranker=ranker, keep=keep, sensitive=sensitive, l=l, require_features=require_features,
                             seed=random_state, rank_sample=rank_sample, max_suppression=max_suppression,
                             max_lattice=max_lattice, parameters=parameters)
    else:
        result = _select(data, reading, used, engine=engine, spark_master=spark_master, out=out, k=k, target=target,
                         schema=schema_obj, qis=quasi_identifiers, ranker=ranker, keep=keep, sensitive=sensitive,
                         l=l, require_features=require_features, seed=random_state, rank_sample=rank_sample,
                         parameters=parameters)
    if out is not None:
        result.write(out, delimiter=output_delimiter)
    if rep is not None:
        result.write_report(rep)
    return result


def _check(k: int, l: int | None, sensitive: str | None, generalize: bool, schema: Any,  # noqa: E741
           max_suppression: float | None, engine: str | None) -> None:
    """:func:`kanon_select`'s parameters that refuse a call before anything is read."""
    from dpkit.algorithms.kanon.checks import check_k_l
    from dpkit.engine import engine_name

    check_k_l(k, l, sensitive)
    if generalize and schema is None:
        raise DpkitUsageError("generalize= needs schema= (its taxonomies and bounds are the hierarchies)",
                              param="schema")
    if max_suppression is not None and not 0 <= max_suppression < 1:
        raise DpkitUsageError(f"max_suppression must be a fraction in [0, 1), got {max_suppression:g}",
                              param="max_suppression")
    if engine_name(engine) == "spark" and generalize:
        raise DpkitUsageError("generalize runs on the numpy engine only for now", param="engine")


def _select(data: Any, reading: dict[str, Any], used: list[str], *, engine: str | None, spark_master: str | None,
            out: str | None, k: int, target: str, schema: Any, qis: Any, ranker: str, keep: list[str],
            sensitive: str | None, l: int | None, require_features: bool, seed: Any, rank_sample: int,  # noqa: E741
            parameters: dict[str, Any]) -> KAnonymousTable:
    """XGB-KA's (or Greedy-Hamdist's) greedy forward selection on either engine: the kept
    columns' rows, and the report."""
    from dpkit.algorithms.kanon.select import ALGORITHMS
    from dpkit.algorithms.kanon.select import kanon_select as select
    from dpkit.engine import engine_name
    from dpkit.engine.string_frame import load_strings
    from dpkit.report import build_kanon_report

    if is_dataframe(data):
        frame_in, source = load_strings(data, used, engine=engine), DATAFRAME
    else:
        opts = read_options(data, **reading)
        if engine_name(engine) == "spark" and out is not None:
            from dpkit.engine.spark.session import session
            from dpkit.engine.spark.write import check_output

            check_output(session(spark_master), out)  # a cluster cannot write here: said before reading
        frame_in, source = load_strings(opts, used, engine=engine, master=spark_master), opts.name
    sel = select(frame_in, target=target, k=k, quasi_identifiers=qis, schema=schema, ranker=ranker, keep=keep,
                 sensitive=sensitive, l=l, require_features=require_features, seed=seed, rank_sample=rank_sample,
                 source=source)
    doc = build_kanon_report(command="kanon-select", algorithm=ALGORITHMS[ranker], k=k, parameters=parameters,
                             release=sel.release)
    if l is not None:
        doc["privacy"]["l"] = l
        doc["privacy"]["sensitive"] = sensitive
    return KAnonymousTable(doc, list(sel.candidates), list(sel.columns), _frame=sel.frame)


def _generalize(data: Any, reading: dict[str, Any], used: list[str] | None, *, k: int, target: str, schema: Any,
                qis: list[str] | None, ranker: str, keep: list[str], sensitive: str | None, l: int | None,  # noqa: E741
                require_features: bool, seed: int | None, rank_sample: int, max_suppression: float | None,
                max_lattice: int | None, parameters: dict[str, Any]) -> KAnonymousTable:
    """The Flash search (numpy engine): the table generalized and suppressed, and its report."""
    from dpkit.algorithms.kanon.generalization import (
        DEFAULT_MAX_NODES,
        DEFAULT_MAX_SUPPRESSION,
        kanon_generalize,
    )
    from dpkit.algorithms.kanon.select import ALGORITHMS
    from dpkit.engine.string_frame import _release_reader_memory
    from dpkit.io.table import read_table
    from dpkit.report import build_kanon_report

    max_suppression = DEFAULT_MAX_SUPPRESSION if max_suppression is None else max_suppression
    max_lattice = DEFAULT_MAX_NODES if max_lattice is None else max_lattice
    if is_dataframe(data):
        df, source = data, DATAFRAME
    else:
        opts = read_options(data, **reading)
        df, source = read_table(opts, categorical=True, columns=used), opts.name
        _release_reader_memory()
    gen = kanon_generalize(
        df, target=target, k=k, schema=schema, quasi_identifiers=qis, ranker=ranker, keep=keep,
        sensitive=sensitive, l=l, max_suppression=max_suppression, max_nodes=max_lattice, seed=seed,
        rank_sample=rank_sample, source=source,
    )
    if require_features and not gen.release["selected"]:
        raise DataError("no quasi-identifier can be kept (require_features); lower k or allow more suppression",
                        param="require_features")
    parameters = {**parameters, "generalize": True, "max_suppression": max_suppression, "max_lattice": max_lattice}
    doc = build_kanon_report(command="kanon-select", algorithm=ALGORITHMS[ranker] + "+flash", k=k,
                             parameters=parameters, release=gen.release)
    if l is not None:
        doc["privacy"]["l"] = l
        doc["privacy"]["sensitive"] = sensitive
    doc["privacy"]["suppressed_records"] = gen.suppressed
    return KAnonymousTable(doc, list(gen.release["candidates"]), list(gen.output.columns), _table=gen.output)


@dataclass
class KAnonymityReport:
    """:func:`check_kanon`'s answer: the check itself and the table's size (private: the
    command line shows it only to the data owner)."""

    check: KAnonymityCheck
    records: int
    source: str = DATAFRAME

    @property
    def satisfied(self) -> bool:
        return self.check.satisfied

    def failure(self) -> str | None:
        """Why the table fails its k (and ℓ), naming the source; None when it passes."""
        c = self.check
        if c.satisfied:
            return None
        parts = []
        if c.k_required is not None and c.k < c.k_required:
            parts.append(f"not {c.k_required}-anonymous (smallest class {c.k})")
        if c.l_required is not None and (c.l or 0) < c.l_required:
            parts.append(f"not {c.l_required}-diverse (ℓ = {c.l})")
        return f"{self.source}: {' and '.join(parts)}"


@any_frame()
def check_kanon(
    data: DataLike,
    quasi_identifiers: list[str],
    *,
    k: int | None = None,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741
    encoding: str | None = None,
    delimiter: str | None = None,
    header: bool = True,
    column_names: list[str] | None = None,
) -> KAnonymityReport:
    """k (the smallest equivalence class), the records in classes below ``k``, and the distinct ℓ
    of ``sensitive``, of a table as it is, on ``quasi_identifiers`` (nothing is selected)."""
    from dpkit.algorithms.kanon.checks import check_columns, check_k_l
    from dpkit.engine.string_frame import _release_reader_memory
    from dpkit.io.table import read_table

    if not quasi_identifiers:
        raise DpkitUsageError("quasi_identifiers is required (the columns to check)", param="quasi_identifiers")
    check_k_l(k, l, sensitive, need_k=False)
    if is_dataframe(data):
        df, source = data, DATAFRAME
    else:
        reading = read_dialect(encoding, delimiter, header, column_names)
        opts = read_options(data, **reading)
        df = read_table(opts, categorical=True, columns=[*quasi_identifiers] + ([sensitive] if sensitive else []))
        source = opts.name
        _release_reader_memory()
    check = check_columns(df, source, quasi_identifiers, k=k, sensitive=sensitive, l=l)
    if k is not None and k > len(df):

        from dpkit.console import private
        from dpkit.errors import DpkitWarning

        warn(DpkitWarning(private(f"k {k} is larger than the table ({len(df)} records)",
                                           f"k {k} is larger than the table"), param="k"))
    return KAnonymityReport(check, len(df), source)
