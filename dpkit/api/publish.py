"""``dpkit.publish``: a differentially private generalized release of a classification table.

One private run (:class:`~dpkit.run.PrivateRun`) around one publisher (MAXGDDP, Fu, Zhang & Ding
2018, or the DiffGen baseline; :mod:`dpkit.algorithms.publish`), returning a :class:`Release`: the noisy
(cut × class) table, its report, and what to do with them (write them, map other data onto
the cut). ``dpkit publish`` is this function and a print.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from dpkit.algorithms.publish import DEFAULT_ALGORITHM
from dpkit.api.card import CardOptions
from dpkit.api.frames import any_frame
from dpkit.api.spec import Param, spec
from dpkit.errors import DpkitUsageError, DpkitWarning, warn
from dpkit.types import (
    DataLike,
    GeneralizeOptions,
    LedgerLike,
    PublishOptions,
    SchemaLike,
    SeedLike,
    later,
)
from dpkit.validate import renamed

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.algorithms.publish.sparse import NoisyTable
    from dpkit.schema.parse import Schema
else:  # the same names for typing.get_type_hints, imported when it evaluates them
    pd = later("pandas")
    Schema = later("dpkit.schema.parse", "Schema")
    NoisyTable = later("dpkit.algorithms.publish.sparse", "NoisyTable")

#: how a report names a schema learned in the run and written nowhere (yet)
LEARNED = "<learned>"
#: the share of released records that may be noise before a run warns
NOISE_WARNING = 0.5


@dataclass
class Release:
    """The result of :func:`publish`: the released table and its report.

    ``report`` is exactly the JSON the command line writes (``docs/formats.md``). ``table`` is
    one row per released record (generalized values: taxonomy nodes and ``[lo,hi)``
    intervals), built when first asked for; :meth:`write` writes it without building it.
    """

    report: dict[str, Any]
    noisy: NoisyTable = field(repr=False)
    schema: Schema = field(repr=False)
    columns: list[str] = field(default_factory=list)
    _table: Any = field(default=None, init=False, repr=False)
    #: the caller's kind of dataframe ("polars", or None: pandas), set at the door (dpkit.api.frames)
    _kind: str | None = field(default=None, init=False, repr=False)
    #: the domain learned in the run when no output path took its schema (the report names it
    #: "<learned>"): :meth:`write_report` writes it beside the report, so that the report alone
    #: generalizes later data (:func:`dpkit.generalize`)
    _domain: Any = field(default=None, init=False, repr=False)
    _noise_share: float = field(default=0.0, init=False, repr=False)
    _postprocessing_seed: int | None = field(default=None, init=False, repr=False)

    @property
    def expected_noise_share(self) -> float:
        """The share of the released records that are expected to be noise (the report's
        ``release.expected_noise_share``, which is rounded to 4 places); a release warns above 0.5."""
        return self._noise_share

    @property
    def postprocessing_seed(self) -> int | None:
        """An integer seed for randomized post-processing of this release (a classifier trained
        on it: ``DecisionTreeClassifier(random_state=release.postprocessing_seed)``), drawn from
        the run's generator once the release was made: the same ``seed`` gives the same one.
        It tells nothing about the noise — of a keyed or unseeded run it is the next output of
        a ChaCha20 stream, and a plain integer seed makes no promise anyway — and what is
        computed from the release alone stays ε-DP (post-processing)."""
        return self._postprocessing_seed

    @property
    def table(self) -> pd.DataFrame:
        """The released records, one row each, columns in the input's order: each predictor an
        ordered categorical of its cut (intervals low to high, taxonomy nodes in the cut's
        order), the target a categorical of its classes, numbers where every label is a number.
        :meth:`write` writes the same labels as text. A polars frame for a run on polars."""
        from dpkit.api.frames import in_kind

        return in_kind(self._rows(), self._kind)

    @property
    def counts(self) -> pd.DataFrame:
        """The released cells, one row each with a ``count`` column (what ``counts=True`` writes).
        A polars frame for a run on polars."""
        from dpkit.api.frames import in_kind

        return in_kind(self._typed(self.noisy.to_frame(counts=True, columns=self.columns)), self._kind)

    def _rows(self) -> pd.DataFrame:
        """:attr:`table` as pandas, built once (what the card reads)."""
        if self._table is None:
            self._table = self._typed(self.noisy.to_frame(columns=self.columns))
        return self._table

    def _typed(self, df: pd.DataFrame) -> pd.DataFrame:
        from dpkit.api.display import typed

        cut = self.noisy.cut
        labels = {**{c: list(v) for c, v in cut.labels().items()}, cut.target: list(self.noisy.class_labels)}
        return typed(df, labels, ordered=cut.columns)

    def __repr__(self) -> str:
        from dpkit.api.display import privacy_line, text

        rel = self.report.get("release", {})
        return text(f"<dpkit.Release {self.report.get('algorithm', '')}: {rel.get('released_records', 0):,} records "
                    f"× {len(self.columns)} columns, target {rel.get('target')!r}>",
                    [privacy_line(self.report), f"columns: {', '.join(self.columns)}",
                     f"cut: {rel.get('cells', 0):,} cells" + (f"; expected noise share {rel['expected_noise_share']:.0%}"
                                                              if "expected_noise_share" in rel else "")])

    def card(self, path: str | os.PathLike[str] | None = None, **options: Unpack[CardOptions]) -> str:
        """The release card of this run (:func:`dpkit.report_card`, docs/report.md): one HTML
        page, returned, and written to ``path`` when given. ``options``: ``test`` and
        ``target`` (the owner's test rows), ``baseline``, ``ledger``, ``dataset``, ``schema``."""
        from dpkit.api.card import report_card

        return report_card(self, path, **options)

    def _repr_html_(self) -> str:
        from dpkit.api.card import report_card

        return report_card(self, embed=True, head=self._rows())

    @property
    def cut(self) -> dict[str, Any]:
        """The released generalization (a taxonomy cut per categorical column, intervals per
        numeric one), as in the report."""
        return self.report["release"]["cut"]

    def write(self, path: str | os.PathLike, *, counts: bool = False, delimiter: str = ",") -> None:
        """Write the release atomically: CSV, or Parquet for a ``.parquet``/``.pq`` path;
        ``-`` is stdout. ``counts``: one row per cell with a ``count`` column."""
        from dpkit.algorithms.publish.sparse import write_release

        write_release(self.noisy, os.fspath(path), counts=counts, columns=self.columns, delimiter=delimiter)

    def write_report(self, path: str | os.PathLike) -> None:
        """Write :attr:`report` as JSON, atomically. A release whose schema was learned in the
        run and not yet written (no ``output``) also writes that schema beside the report,
        ``<report stem>.schema.yaml`` as ``dpkit publish -o`` does beside its output, and the
        report names it: the report then generalizes other data on its own."""
        from dpkit.api.domain import learned_schema_path
        from dpkit.report import write_report

        path = os.fspath(path)
        params = self.report.get("parameters", {})
        where = learned_schema_path(path) if self._domain is not None and params.get("schema") == LEARNED else None
        if where is not None:
            self._domain.record(params, where)  # the one writer of a learned schema
            params["schema"] = where
        try:
            write_report(self.report, path)
        except BaseException:
            if where is not None:  # no schema left behind without the report that names it
                params["schema"] = LEARNED
                _remove(where)
            raise

    def generalize(self, data: DataLike, **options: Unpack[GeneralizeOptions]) -> pd.DataFrame:
        """``data`` mapped onto this release's cut (:func:`dpkit.generalize`); spends nothing."""
        from dpkit.api.generalize import generalize

        return generalize(data, self, schema=self.schema, **options)


#: publish()'s parameters, declared once (:mod:`dpkit.api.spec`; ``**options``: the publisher's)
SPEC = spec(
    "publish",
    "data schema epsilon target algorithm delta domain_share ignore keep values vocabulary bounds numeric "
    "categorical integer date missing random_state ledger engine spark_master output report counts "
    "output_delimiter encoding delimiter header column_names on_invalid",
    algorithm=Param('str, {"maxgddp", "diffgen"}\nThe publisher: MAXGDDP, or the DiffGen baseline.',
                    default=DEFAULT_ALGORITHM, choices=("maxgddp", "diffgen")),
    output=Param("path, optional\nAlso write the release (CSV or Parquet) atomically, inside the run: the "
                 "ledger then\nbooks the run complete only once it and the report exist.", flag="--output"),
    report=Param("path, optional\nAlso write the report (JSON), atomically, inside the run."),
    counts=Param("bool\n``output`` holds one row per cell with a ``count`` column.", default=False),
)


@any_frame(back=True)
@renamed("publish")
@SPEC.document
def publish(
    data: DataLike,
    *,
    schema: SchemaLike | None = None,
    epsilon: float,
    target: str | None = None,
    algorithm: str = DEFAULT_ALGORITHM,
    delta: float | None = None,
    domain_share: float | None = None,
    ignore: str | list[str] | None = None,
    keep: str | list[str] | None = None,
    values: dict[str, list[str]] | None = None,
    vocabulary: str | None = None,
    bounds: dict[str, tuple[float, float]] | None = None,
    numeric: str | list[str] | None = None,
    categorical: str | list[str] | None = None,
    integer: str | list[str] | None = None,
    date: str | list[str] | None = None,
    missing: str | list[str] | None = None,
    random_state: SeedLike = None,
    ledger: LedgerLike = None,
    engine: str | None = None,
    spark_master: str | None = None,
    output: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    counts: bool = False,
    output_delimiter: str = ",",
    encoding: str | None = None,
    delimiter: str | None = None,
    header: bool = True,
    column_names: list[str] | None = None,
    on_invalid: str = "error",
    **options: Unpack[PublishOptions],
) -> Release:
    """Release an ε-differentially private, generalized copy of a classification table.

    Specializes every predictor from its taxonomy root (numbers: from the schema's public
    bounds), choosing each step privately, then releases the noisy (cut × class) contingency
    table (MAXGDDP, Fu, Zhang & Ding 2018, Algorithm 1; docs/publish.md).

    Parameters
    ----------
    {parameters}
    **options
        The publisher's options, with its defaults (``dpkit.algorithms.publish.maxgddp.MaxGDDP``):
        ``levels`` ("auto" or h), ``raw``, ``allocation``, ``selection_share``, ``selector``, ``score``,
        ``grid``; DiffGen takes ``levels`` and ``raw`` and ignores the rest, with a warning.

    Returns
    -------
    Release
    """
    call = dict(locals())  # the arguments, before any import: a keyed run's identity
    if bounds is None:  # counted only when given (a keyed run's bytes from before bounds=)
        del call["bounds"]
    from dpkit.algorithms.publish import MAXGDDP_ONLY, OPTIONS, make_model
    from dpkit.api.pipeline import Pipeline, output_paths
    from dpkit.privacy import derive_seed
    from dpkit.validate import keywords

    # every keyword, None-valued too (publish(..., missing=None) is a mistake, not a default)
    keywords(options, OPTIONS, "publish", named=_NAMED)
    pipe = Pipeline("publish", call)
    if pipe.learn is not None:
        # publish keeps the learned missing flag: a structural bucket on every numeric column is an
        # empty cell of the release where nothing is missing (docs/domain-reference.md, "Missing
        # values"); the forest's missing child is free and keeps it
        pipe.learn = pipe.learn._replace(structural_missing=False)
    else:
        target = _target(pipe.schema, pipe.schema_name, target)
        pipe.schema = pipe.schema.for_target(target)  # under keep, the class column has no (missing) leaf
    if algorithm == "diffgen":
        ignored = [k for k in MAXGDDP_ONLY if options.get(k) is not None]
        if ignored:
            warn(f"{', '.join(ignored)} apply to maxgddp only; diffgen ignores them", DpkitWarning)
    # the options are checked before the run: a bad one spends nothing and books nothing
    model = make_model(algorithm, epsilon, options)
    model.check()
    out, rep = output_paths(output, report)
    # without an output to write it beside, the report takes the learned schema (Release.write_report)
    pipe.start(algorithm, target=target, columns=_columns, output=out, report=rep, learned_beside_report=True)
    with pipe:
        model.epsilon = pipe.epsilon
        model.fit(pipe.frame, target, accountant=pipe.accountant, rng=pipe.rng)
        # drawn next, after every draw of the release, so it changes none of them
        postprocessing_seed = derive_seed(pipe.rng)
        doc = pipe.report(_parameters(model, algorithm, pipe.schema_name, target, pipe.run.epsilon, counts),
                          _release_section(model, pipe.columns, target))
        _warn_noise(model, doc)
        release = Release(doc, model.release_, pipe.schema, pipe.columns)
        release._noise_share, release._postprocessing_seed = float(model.noise_share_), postprocessing_seed
        if pipe.domain is not None and pipe.learned_path is None:
            release._domain = pipe.domain
        _write(release, out, rep, counts=counts, delimiter=output_delimiter)
    return release


def _warn_noise(model: Any, doc: dict[str, Any]) -> None:
    """Warn when more than :data:`NOISE_WARNING` of the released records are expected noise."""
    if model.noise_share_ > NOISE_WARNING:
        warn(f"about {model.noise_share_:.0%} of the released records are expected to be noise "
             f"({doc['release']['cells']:.3g} cells at epsilon {model.epsilon_counts_:.3g} for the "
             "counts); use the automatic depth (levels auto), fewer levels or a larger epsilon",
             DpkitWarning)


def _write(release: Release, out: str | None, rep: str | None, *, counts: bool, delimiter: str) -> None:
    """The release and its report, each when asked for; a release without its report is not left behind."""
    if out is not None:
        release.write(out, counts=counts, delimiter=delimiter)
    if rep is not None:
        try:
            release.write_report(rep)
        except BaseException:
            _remove(out)
            raise


def _columns(schema: Schema, target: str) -> list[str]:
    """The columns a release reads: the schema's predictors of ``target`` and the target, in
    the schema's order."""
    return [c for c in schema.used_columns() if c in schema.predictors(target) or c == target]


def _target(schema: Schema, schema_name: str | None, target: str | None) -> str:
    target = target or schema.target
    if not target:
        raise DpkitUsageError(f"target is required: schema {schema_name} declares no target", param="target")
    if schema.column(target).kind != "categorical":
        raise DpkitUsageError(f"target {target!r} must be a categorical column of {schema_name}", param="target")
    return target


def _parameters(model: Any, algorithm: str, schema_name: str | None, target: str, epsilon: float,
                counts: bool) -> dict[str, Any]:
    """The report's ``parameters``: the values the run actually used (public)."""
    parameters: dict[str, Any] = {
        "schema": schema_name,
        "target": target,
        "epsilon": epsilon,
        "levels": model.levels,
        "algorithm": algorithm,
        "counts": bool(counts),
        "raw": model.postprocess == "raw",
    }
    if algorithm == "maxgddp":
        parameters.update(allocation=model.allocation, selection_share=float(model.selection_share),
                          selector=model.selector, grid=int(model.grid), score=model.score)
    return parameters


def _release_section(model: Any, order: list[str], target: str) -> dict[str, Any]:
    """The report's ``release``: the cut and the public facts of the noisy table."""
    rel = model.release_
    plan = model.depth_
    return {
        "cut": model.cut_.to_json(),
        "columns": order,
        "target": target,
        "classes": rel.class_labels,
        "selections": [s.to_json() for s in model.selections_],
        **({"score": model.score_} if hasattr(model, "score_") else {}),
        "epsilon_counts": model.epsilon_counts_,
        "cells": model.cut_.n_cells() * len(rel.class_labels),
        "released_records": rel.n_records,
        "depth": {"levels": "auto" if plan.n_hat is not None else plan.levels,
                  "schedule_levels": plan.levels, "max_cells": plan.max_cells,
                  "noisy_records": plan.n_hat, "epsilon_noisy_records": plan.epsilon_n},
        "suppression_threshold": model.threshold_,
        # classes the threshold would have erased, kept with all their cells (only when any)
        **({"kept_classes": model.kept_classes_} if getattr(model, "kept_classes_", None) else {}),
        "expected_noise_share": round(model.noise_share_, 4),
    }


def _remove(path: str | None) -> None:
    import contextlib

    if path and path != "-":
        with contextlib.suppress(OSError):
            os.unlink(path)


#: publish()'s named parameters (for the closest-keyword hint of an unknown one)
_NAMED = tuple(p for p in __import__("inspect").signature(publish).parameters if p != "options")
