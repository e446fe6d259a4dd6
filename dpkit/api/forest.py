"""``dpkit.forest``: a differentially private random forest (DiffPRFs, Mu, Ding, Song & Lu 2016).

One private run around :class:`dpkit.algorithms.forest.dprf.DiffPRFs`, returning a :class:`Forest`: the
model (the DP release: it can be shared and applied to any data without further budget), its
report, and prediction. ``dpkit forest train`` is :func:`forest`; ``dpkit forest predict`` is
:func:`load_forest` and :meth:`Forest.predictions`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from dpkit.api.card import CardOptions
from dpkit.api.frames import any_frame
from dpkit.api.spec import Param, spec
from dpkit.console import owner_records
from dpkit.defaults import DEFAULT_DECISION
from dpkit.engine.inputs import (
    DATAFRAME,
    check_columns,
    check_reading,
    dates_as_text,
    is_dataframe,
    read_options,
)
from dpkit.errors import DpkitUsageError, DpkitWarning, warn
from dpkit.types import DataLike, ForestOptions, LedgerLike, Reading, SchemaLike, SeedLike, later
from dpkit.validate import renamed

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.algorithms.forest.model import ForestModel
    from dpkit.schema.parse import Schema
else:  # the same names for typing.get_type_hints, imported when it evaluates them
    pd = later("pandas")
    ForestModel = later("dpkit.algorithms.forest.model", "ForestModel")
    Schema = later("dpkit.schema.parse", "Schema")

#: forest options besides ε, by library name -> the estimator's (``DiffPRFs.__init__``) name
OPTIONS = {"n_estimators": "n_trees", "max_depth": "max_depth", "features_per_node": "features_per_node",
           "utility": "utility", "sampling": "sampling", "size_share": "size_share", "leaf_factor": "leaf_factor"}


@dataclass
class Forest:
    """A trained DP forest: :attr:`model` (what :meth:`write` writes) and :attr:`report` (the JSON
    of its training run; None for a forest read back with :func:`load_forest`, whose privacy
    statement is the model file's own ``privacy`` block, :attr:`privacy`)."""

    model: ForestModel
    report: dict[str, Any] | None = None

    @property
    def classes(self) -> list[str]:
        return list(self.model.classes)

    @property
    def labels(self) -> list[Any]:
        """The classes as :meth:`predict` returns them: values of the training DataFrame's
        target dtype when it was int, bool or float (``[0, 1]``), else the class texts."""
        from dpkit.algorithms.forest.model import typed_labels

        return typed_labels(self.model)

    @property
    def target(self) -> str:
        return self.model.target

    @property
    def privacy(self) -> dict[str, Any]:
        return dict(self.model.privacy or {})

    def _privacy_line(self) -> str:
        from dpkit.api.display import privacy_line

        if self.report is not None:
            return privacy_line(self.report)
        p = self.privacy  # a model read back: its own privacy block
        return privacy_line({"privacy": {**p, "epsilon_spent": p.get("epsilon_spent"),
                                         "delta": p.get("delta", 0)}}) if p else "no privacy statement"

    def _domains(self) -> dict[str, list[str]]:
        from dpkit.api.display import _g

        return {f.name: (list(f.categories) if f.kind == "categorical" else [f"[{_g(f.lo)}, {_g(f.hi)}]"])
                for f in self.model.features}

    def __repr__(self) -> str:
        from dpkit.api.display import _names, text

        m = self.model
        return text(f"<dpkit.Forest DiffPRFs: {len(m.trees)} trees ({sum(len(t) for t in m.trees):,} nodes), "
                    f"target {m.target!r}, "
                    f"classes {_names(list(m.classes), 6)}>",
                    [self._privacy_line(), f"features ({len(m.features)}): {_names([f.name for f in m.features])}"])

    def card(self, path: str | os.PathLike[str] | None = None, **options: Unpack[CardOptions]) -> str:
        """The release card of this run (:func:`dpkit.report_card`, docs/report.md): one HTML
        page, returned, and written to ``path`` when given. ``options``: ``test`` and
        ``target`` (the owner's test rows), ``baseline``, ``ledger``, ``dataset``, ``schema``."""
        from dpkit.api.card import report_card

        return report_card(self, path, **options)

    def _repr_html_(self) -> str:
        from dpkit.api.display import card

        if self.report is not None:
            from dpkit.api.card import report_card

            return report_card(self, embed=True)
        m = self.model
        facts = {"algorithm": "DiffPRFs (Mu et al. 2016)", "privacy": self._privacy_line(), "target": m.target,
                 "classes": ", ".join(map(str, m.classes)), "trees": len(m.trees),
                 "nodes": sum(len(t) for t in m.trees), "features": len(m.features)}
        return card("dpkit Forest", facts, self.report, self._domains(), domains_title="Public domain of each feature")

    def _features(self, data: Any, reading: dict[str, Any], keep: list[str] | None = None) -> Any:
        """(the model's feature matrix of ``data``, the index its rows keep); with ``keep``, also
        those input columns (as read, strings) — ``(matrix, index, DataFrame)``. A DataFrame's
        rows keep its own index (so that ``test["pred"] = forest.predict(test)`` lines up); a
        file's are numbered from 0."""
        from dpkit.io.source import first_line
        from dpkit.io.table import read_table

        if is_dataframe(data):
            df, source, first = dates_as_text(check_columns(data)), DATAFRAME, 0
        else:
            opts = read_options(data, **reading)
            df, source, first = read_table(opts), opts.name, first_line(opts)
        X = self.model.encode_frame(df, source=source, first_line=first)
        if keep is None:
            return X, df.index
        missing = [c for c in keep if c not in df.columns]
        if missing:
            raise DpkitUsageError(f"{source}: column(s) {', '.join(map(repr, missing))} to keep are not in its header "
                                  f"({', '.join(map(str, list(df.columns)[:8]))}{', ...' if len(df.columns) > 8 else ''})",
                                  param="keep")
        return X, df.index, df[keep].astype(str)

    @any_frame(back=True)
    @owner_records()
    def predict_proba(self, data: DataLike, **reading: Unpack[Reading]) -> pd.DataFrame:
        """One ``p_<class>`` column per class: the mean of the trees' leaf class probabilities
        (a value equal to the schema's missing token follows the branch with the most noisy
        records). ``data``: a path, ReadOptions or DataFrame (read as :func:`dpkit.publish` reads);
        the rows are ``data``'s, in its order, with a DataFrame's index. The columns are named
        ``p_<class>`` whatever the target's dtype (``p_0``/``p_1`` for a 0/1 int target, as for
        text classes and as ``dpkit forest predict --proba`` writes them); :attr:`labels` lists the
        classes in the target's dtype, in the columns' order."""
        import pandas as pd

        X, index = self._features(data, check_reading(reading, "predict_proba"))
        probs = self.model.predict_proba(X)
        return pd.DataFrame(probs, index=index, columns=pd.Index([f"p_{c}" for c in self.model.classes], dtype=object))

    @any_frame(back=True)
    @owner_records()
    def predict(self, data: DataLike, *, decision: str = DEFAULT_DECISION, **reading: Unpack[Reading]) -> pd.Series:
        """The predicted class of every row, as a Series named after the target, with ``data``'s
        index (a DataFrame's own; 0, 1, ... for a file); of the training target's dtype when it
        was a DataFrame's int, bool or float column (:attr:`labels`), else text."""
        return self.predictions(data, decision=decision, **check_reading(reading, "predict", ("decision",)))[self.model.target]

    @any_frame(back=True)
    def predictions(self, data: DataLike, *, proba: bool = False, decision: str = DEFAULT_DECISION,
                    output: str | os.PathLike | None = None, output_delimiter: str = ",",
                    keep: list[str] | str | None = None, **reading: Unpack[Reading]) -> pd.DataFrame:
        """What ``dpkit forest predict`` writes: the predicted class (column named after the
        target) and, with ``proba``, one ``p_<class>`` column per class rounded to 6 decimals;
        rows in input order, with a DataFrame's own index. Spends nothing (the model is already private). ``decision``:
        ``argmax``, ``balanced`` (each class's probability over its prior, estimated from the
        model's noisy leaf counts) or ``threshold:P`` (:meth:`ForestModel.decide`); warns when
        99 % of the predictions are one class. ``keep``: input columns (a list or a comma
        list, e.g. an id) written first, as read, so the predictions join back on them.
        ``output``: also write it (CSV or Parquet, atomically)."""
        import numpy as np
        import pandas as pd

        from dpkit.evaluate.imbalance import one_class_warning

        check_reading(reading, "predictions", ("proba", "decision", "output", "output_delimiter", "keep"))
        self.model.decide(np.zeros((0, len(self.model.classes))), decision)  # a bad rule fails before reading
        if isinstance(keep, str):
            keep = [c.strip() for c in keep.split(",") if c.strip()]
        kept = None
        if keep:
            if self.model.target in keep or any(c.startswith("p_") for c in keep) and proba:
                raise DpkitUsageError(f"keep names a column the predictions write ({', '.join(keep)})", param="keep")
            X, index, kept = self._features(data, reading, list(dict.fromkeys(keep)))
        else:
            X, index = self._features(data, reading)
        probs = self.model.predict_proba(X)
        labels = self.model.decide(probs, decision)
        warning = one_class_warning(labels, hint=None if decision == "balanced" else "try decision='balanced'")
        if warning:
            warn(DpkitWarning(warning, param="decision"))
        if self.model.target_dtype is not None:  # the caller's labels (0/1, not '0'/'1'); the CSV text is the same
            typed = dict(zip(self.model.classes, self.labels, strict=True))
            labels = pd.array([typed[c] for c in labels], dtype=self.model.target_dtype)
        out = pd.DataFrame({self.model.target: labels}, index=index)
        if kept is not None:
            out = pd.concat([kept, out], axis=1)
        if proba:
            for i, c in enumerate(self.model.classes):
                out[f"p_{c}"] = np.round(probs[:, i], 6)
        if output is not None:
            from dpkit.io.output import write_csv

            write_csv(out, os.fspath(output), delimiter=output_delimiter)
        return out

    def write(self, path: str | os.PathLike) -> None:
        """Write the model as JSON, atomically (:func:`load_forest` and ``dpkit forest predict``
        read it), as every result's ``write`` writes its release."""
        from dpkit.algorithms.forest.model import save_model

        save_model(self.model, os.fspath(path))

    def save(self, path: str | os.PathLike) -> None:
        """Deprecated: :meth:`write` (removed in dpkit 0.8)."""
        from dpkit.validate import deprecated

        deprecated("Forest.save()", "Forest.write()")
        self.write(path)

    def write_report(self, path: str | os.PathLike) -> None:
        from dpkit.report import write_report

        if self.report is None:
            raise DpkitUsageError("this forest was read from a model file: it has no training report",
                                  param="report")
        write_report(self.report, os.fspath(path))


def load_forest(path: str | os.PathLike) -> Forest:
    """A forest written by :meth:`Forest.write` or ``dpkit forest train`` (``-``: stdin)."""
    from dpkit.algorithms.forest.model import load_model

    return Forest(load_model(os.fspath(path)))


#: forest()'s parameters, declared once (:mod:`dpkit.api.spec`; ``**options``: DiffPRFs')
SPEC = spec(
    "forest train",
    "data schema epsilon target n_estimators max_depth columns random_state ledger engine spark_master output "
    "report config encoding delimiter header column_names on_invalid delta domain_share ignore keep values "
    "vocabulary bounds numeric categorical integer date missing",
    n_estimators=Param('int or "auto", optional\nThe number of trees t (default, or "auto": chosen with the '
                       "depth from noisy class counts,\n5 % of ε — :func:`dpkit.algorithms.forest.dprf.plan_shape`; "
                       "DiffPRFs' paper used 25).\n``trees``, its name before 0.5, is deprecated.", flag="--trees"),
    max_depth=Param('int or "auto", optional\nThe maximum depth d (default, or "auto": chosen with the number '
                    "of trees; the paper used 5).\n``depth``, its name before 0.5, is deprecated.", flag="--depth"),
    columns=Param("list of str, optional\nThe predictors (default: every non-ignored schema column but the "
                  "target); without a\nschema the domain is learned of those columns and the target only."),
    output=Param("path, optional\nAlso write the model (JSON) atomically, inside the run.", flag="--output"),
    report=Param("path, optional\nAlso write the report (JSON), atomically, inside the run."),
)


@any_frame()
@renamed("forest")
@SPEC.document
def forest(
    data: DataLike,
    *,
    schema: SchemaLike | None = None,
    epsilon: float,
    target: str | None = None,
    n_estimators: int | str | None = None,
    max_depth: int | str | None = None,
    columns: list[str] | None = None,
    random_state: SeedLike = None,
    ledger: LedgerLike = None,
    engine: str | None = None,
    spark_master: str | None = None,
    output: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    config: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    header: bool = True,
    column_names: list[str] | None = None,
    on_invalid: str = "error",
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
    **options: Unpack[ForestOptions],
) -> Forest:
    """Train an ε-differentially private random forest (DiffPRFs) on ``data``.

    Numeric attributes are split with the continuous exponential mechanism (no
    pre-discretization), categorical ones into one child per value of the schema; each tree
    gets a disjoint random part of the records and all of ε by default (docs/forest.md).
    Without a schema (or with one that says ``missing_policy: keep``) a row with a missing value
    is kept: a numeric split's missing child, a ``(missing)`` leaf (docs/forest.md, "Missing
    values"); the report's ``release.missing_values`` says where each feature's go.

    Parameters
    ----------
    {parameters}
    **options
        ``features_per_node`` (an integer, "sqrt" or "all"), ``utility`` ("balanced", "max",
        "info-gain", "gini"), ``sampling`` ("disjoint", "none"), ``size_share``, ``leaf_factor``; defaults
        are ``DiffPRFs.__init__``'s.

    Returns
    -------
    Forest
    """
    call = dict(locals())  # the arguments, before any import: a keyed run's identity
    if bounds is None:  # counted only when given (a keyed run's bytes from before bounds=)
        del call["bounds"]
    from dpkit.algorithms.forest.model import target_dtype
    from dpkit.api.pipeline import Pipeline, output_paths
    from dpkit.validate import keywords

    keywords(options, OPTIONS, "forest", named=FOREST_NAMED)  # before anything is read or spent
    # under missing_policy: keep (a schema that says so, and every learned one) a row with a missing
    # value is kept: a numeric split's missing child, a categorical (missing) leaf (dpkit.algorithms.forest.dprf)
    pipe = Pipeline("forest train", call, domain={"keep": columns})  # the domain of the predictors only
    predictors: list[str] = list(columns) if columns else []
    if pipe.learn is not None:
        # a wide table's categories by the joint Gaussian where it halves the thresholds: the forest
        # gained on every wide table measured; publish lost there and keeps the Laplace
        # (docs/domain-reference.md, "Many columns")
        pipe.learn = pipe.learn._replace(partition="auto")
    else:
        target, predictors = _target_and_predictors(pipe.schema, pipe.schema_name, target, predictors)
    estimator = _estimator(epsilon, {**options, "n_estimators": n_estimators, "max_depth": max_depth}, predictors)
    out, rep = output_paths(output, report)
    pipe.start("diffprfs", target=target, columns=lambda schema, target: [*(predictors or schema.predictors(target)),
                                                                         target], output=out, report=rep)
    with pipe:
        estimator.epsilon = pipe.epsilon
        if pipe.learn is not None:
            target, predictors = _target_and_predictors(pipe.schema, pipe.schema_name, target, predictors)
        estimator.fit(pipe.frame, target, accountant=pipe.accountant, rng=pipe.rng, features=predictors)
        model = estimator.model_
        parameters = {"data": pipe.path, "schema": pipe.schema_name, "target": target, "columns": predictors,
                      **estimator.get_params(), "config": config}
        model.parameters = {k: v for k, v in parameters.items() if k not in ("data", "config")}
        if target in pipe.dtypes:  # the dtype the caller gave the target (public)
            model.target_dtype = target_dtype(pipe.dtypes[target], model.classes)
        report = pipe.report(parameters, _release(model, estimator, out, pipe.schema))
        return _written(Forest(model), report, pipe.run, estimator.spends_by_tree_, out, rep)


def _written(result: Forest, report: dict[str, Any], run: Any, spends_by_tree: Any, out: str | None,
             rep: str | None) -> Forest:
    """The trained forest with its report, its model and report written when asked for (inside
    the run). The model file says what the report says: a plain-seed model is marked "model:
    none", as every output of a run that is not private."""
    privacy = report["privacy"]
    result.model.privacy = {"model": privacy["model"], "guarantee": privacy["guarantee"],
                            "epsilon_budget": run.epsilon, "epsilon_spent": run.accountant.spent,
                            "seeded": run.seeded, "neighbours": privacy["neighbours"]}
    if out is not None:
        result.write(out)
    result.report = report
    result.report["spends_by_tree"] = spends_by_tree
    if rep is not None:
        result.write_report(rep)
    return result


def _estimator(epsilon: Any, options: dict[str, Any], predictors: list[str]) -> Any:
    """The DiffPRFs estimator of the options given (None: its default), checked before the run."""
    from dpkit.algorithms.forest.dprf import DiffPRFs, resolve_features_per_node

    estimator = DiffPRFs(epsilon=epsilon, **{OPTIONS[k]: v for k, v in options.items() if v is not None})
    if predictors:
        resolve_features_per_node(estimator.features_per_node, len(predictors))
    return estimator


def _target_and_predictors(schema: Schema, name: str | None, target: str | None,
                           predictors: list[str]) -> tuple[str, list[str]]:
    """The target (default: the schema's) and the predictors (default: the schema's for it),
    each checked against the schema."""
    target = target or schema.target
    if not target:
        raise DpkitUsageError(f"target is required ({name} names no target)", param="target")
    schema.column(target)
    for c in predictors:
        schema.column(c)
    return target, predictors or schema.predictors(target)


def _release(model: ForestModel, estimator: Any, out: str | None, schema: Schema) -> dict[str, Any]:
    """The report's ``release`` of a forest: the model file, its size and shape (public)."""
    release = {"model": out, "format_version": model.to_dict()["format_version"], "trees": len(model.trees),
               "nodes": sum(len(t) for t in model.trees), "leaves": sum(n.is_leaf for t in model.trees for n in t),
               # how the shape was chosen: "auto" from noisy class counts (released, DP) or as given
               "shape": estimator.shape_}
    if schema.missing_policy == "keep":  # only then: a schema that says nothing keeps its bytes
        release["missing_values"] = kept_missing(model)
    return release


def kept_missing(model: ForestModel) -> dict[str, Any]:
    """What the report says of a ``missing_policy: keep`` forest: where each feature's missing
    values go (:attr:`dpkit.algorithms.forest.model.Feature.missing`; features without one are left out) and
    the noisy number of records the trees hold (the roots' noisy sizes: every record is in one
    root under disjoint sampling, in each under ``none`` — rows with a missing value kept, no exact
    count released)."""
    roots = [int(t[0].size) for t in model.trees]
    disjoint = model.parameters.get("sampling", "disjoint") == "disjoint"
    return {"policy": "keep", "noisy_records": sum(roots) if disjoint else round(sum(roots) / max(len(roots), 1)),
            "features": {f.name: f.missing for f in model.features if f.missing is not None}}


#: forest()'s named parameters (for the closest-keyword hint of an unknown one)
FOREST_NAMED = tuple(p for p in __import__("inspect").signature(forest).parameters if p != "options")
