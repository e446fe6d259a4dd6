"""Utility evaluation as library calls (``dpkit evaluate ...``): read the files, score them.

These read the raw data: they are for the data owner, not a private release, and spend no ε.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from dpkit.api.frames import any_frame
from dpkit.console import owner_records
from dpkit.defaults import DEFAULT_ENCODING
from dpkit.errors import DataError, DpkitUsageError
from dpkit.types import DataLike, Reading, SchemaLike, later
from dpkit.validate import renamed

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from dpkit.algorithms.kanon.checks import KAnonymityCheck
else:  # the same names for typing.get_type_hints, imported when it evaluates them
    np = later("numpy")
    pd = later("pandas")
    KAnonymityCheck = later("dpkit.algorithms.kanon.checks", "KAnonymityCheck")

def numeric_columns(df: pd.DataFrame, columns: list[str], name: str,
                    times: dict[str, str] | None = None) -> np.ndarray:
    """The columns of ``df`` as an (n, d) float array; one-line errors naming file/line/column.

    A column in ``times`` (column -> ``date``/``timestamp``) is read as ``dpkit cluster`` reads
    a date column: ISO text as days (seconds) since 1970-01-01 (:func:`dpkit.schema.dates.parse_array`).
    """
    import numpy as np
    import pandas as pd

    from dpkit.console import private
    from dpkit.schema.dates import expected, parse_array

    missing = [c for c in columns if c not in df.columns]
    if missing:
        from dpkit.console import have_columns

        raise DataError(f"{name}: column(s) {', '.join(map(repr, missing))} not in the header {have_columns(df.columns)}")
    out = np.empty((len(df), len(columns)))
    for j, c in enumerate(columns):
        kind = (times or {}).get(c)
        if kind is not None:
            v = parse_array(df[c], kind)
            what = expected(kind)
        else:
            v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
            what = "a finite number"
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(private(f"{name}:{i + 2}: column {c!r} has {df[c].iloc[i]!r}, not {what}",
                                    f"{name}: column {c!r} has a value that is not {what}"))
        out[:, j] = v
    return out


def centroid_columns(cdf: pd.DataFrame, columns: list[str], name: str) -> tuple[np.ndarray, dict[str, str]]:
    """The centroids' columns as a (k, d) float array, and the time kind of each column the file
    writes as ISO text: ``dpkit cluster`` writes a date column's coordinate as ``YYYY-MM-DD``
    (a timestamp's as ``YYYY-MM-DDTHH:MM:SS``; :func:`dpkit.api.cluster._as_dates`), so the file
    says which columns are dates. Each value is a number or an ISO date/timestamp, one kind a
    column; anything else is a one-line error naming the file, line and column (the centroids
    are a release: their values may be quoted)."""
    import numpy as np
    import pandas as pd

    from dpkit.schema.dates import parse

    missing = [c for c in columns if c not in cdf.columns]
    if missing:
        from dpkit.console import have_columns

        raise DataError(f"{name}: column(s) {', '.join(map(repr, missing))} not in the header {have_columns(cdf.columns)}")
    times: dict[str, str] = {}
    for c in columns:
        nums = pd.to_numeric(cdf[c], errors="coerce").to_numpy(dtype=float)
        kinds = set()
        for i, (raw, x) in enumerate(zip(cdf[c], nums, strict=True)):
            text = str(raw).strip()
            if np.isfinite(x):
                kinds.add("numbers")
            elif parse(text, "timestamp") is not None:
                kinds.add("dates")
                # a time after the day (format_time writes one for every timestamp) makes it one
                times[c] = "timestamp" if len(text) > len("YYYY-MM-DD") else times.get(c, "date")
            else:
                raise DataError(f"{name}:{i + 2}: column {c!r} has {raw!r}, neither a finite number nor an ISO date "
                                "(YYYY-MM-DD) — give the centroids as dpkit cluster writes them")
            if len(kinds) > 1:
                raise DataError(f"{name}:{i + 2}: column {c!r} has {raw!r} among "
                                f"{'dates' if np.isfinite(x) else 'numbers'} — one kind a column, as dpkit cluster "
                                "writes them")
    return numeric_columns(cdf, columns, name, times), times


@any_frame()
@owner_records()
def evaluate_clustering(data: DataLike, centroids: str, *, columns: list[str] | None = None,
                        labels: str | None = None, compare: str | None = None, reference: bool = True,
                        **reading: Unpack[Reading]) -> dict[str, Any]:
    """NICV of ``centroids`` on ``data`` (and of non-private k-means with the same k, their ratio),
    the F-measure against the ``labels`` column, and RCP against the ``compare`` centroids
    (DPQT paper, §6.1; :func:`dpkit.evaluate.clustering.evaluate_centroids`).

    Centroid files are read as ``dpkit cluster`` writes them (UTF-8, commas); ``reading``
    (``encoding``, ``delimiter``, …) describes ``data`` only, so a TSV or Latin-1 data file still
    pairs with dpkit's own output. ``columns`` default to the centroids' columns but ``cluster``.
    A centroid column of ISO dates (as ``dpkit.cluster(..., date=[...])`` writes a date column)
    makes that data column a date column, read as its day numbers, as the run clustered it.
    """
    from dpkit.engine.inputs import DATAFRAME, check_reading, is_dataframe, read_options
    from dpkit.evaluate.clustering import evaluate_centroids
    from dpkit.io.table import read_csv, read_table

    cdf = read_csv(centroids)
    # the label column is "cluster", or "cluster_not_private" for a run that was not private
    cols = list(columns) if columns else [c for c in cdf.columns if c not in ("cluster", "cluster_not_private")]
    if not cols:
        raise DpkitUsageError("no columns to evaluate: name them", param="columns")
    if is_dataframe(data):  # in memory: its columns as they are (numbers are read as numbers below)
        df, name = data, DATAFRAME
    else:
        opts = read_options(data, **check_reading(reading, "evaluate_clustering"))
        # only the columns used, by Arrow as codes of their distinct strings (not a Python string a
        # cell); the whole table, exactly, when the header lacks one (the errors name what it has)
        df = read_table(opts, categorical=True, columns=[*cols, *([labels] if labels else [])])
        name = opts.name
    # the centroids say which columns are dates (ISO text, as cluster writes them); the data's
    # are read the same way, as the days the run clustered
    cents, times = centroid_columns(cdf, cols, centroids)
    points = numeric_columns(df, cols, name, times)
    other = None
    if compare:
        other, other_times = centroid_columns(read_csv(compare), cols, compare)
        differ = [c for c in cols if other_times.get(c) != times.get(c)]
        if differ:
            raise DataError(f"{compare}: column {differ[0]!r} is "
                            f"{'not ' if times.get(differ[0]) else ''}a date column as in {centroids} — compare "
                            "centroids written the same way")
    if labels is not None and labels not in df.columns:
        raise DpkitUsageError(f"labels: column {labels!r} is not in {name} (columns: {', '.join(df.columns)})",
                              param="labels")
    return evaluate_centroids(points, cents, labels=df[labels].to_numpy() if labels else None, other=other,
                              reference=reference)


@any_frame()
@owner_records()
def evaluate_kanon(data: DataLike, *, quasi_identifiers: list[str] | None = None, from_report: str | None = None,
                   k: int | None = None, sensitive: str | None = None, l: int | None = None,  # noqa: E741
                   test: str | None = None, target: str | None = None, positive: str | None = None,
                   schema: str | None = None, **reading: Unpack[Reading]) -> KanonEvaluation:
    """k-anonymity metrics of a table (``dpkit evaluate kanon``): k, ℓ, class sizes, discernibility,
    C_AVG (LeFevre et al. 2006), the suppression a ``from_report`` release made, and with ``test``
    the utility of an SVM and an entropy tree trained on ``data`` (as XGB-KA, Wang & Wan, scores it).

    ``from_report`` (a ``kanon-select`` report) supplies the quasi-identifiers, k, the sensitive
    column and ℓ that are not given; ``test`` is mapped through its generalization.
    """
    from dpkit.algorithms.kanon.checks import check_columns, check_k_l
    from dpkit.engine.inputs import DATAFRAME, check_reading, is_dataframe, read_options
    from dpkit.io.table import read_table

    rep: dict[str, Any] | None = None
    if from_report is not None:
        from dpkit.report import read_report

        rep = read_report(from_report)
        if rep.get("privacy", {}).get("model") != "k-anonymity":
            raise DataError(f"{from_report}: not a kanon-select report (privacy model is not k-anonymity)")
        params = rep.get("parameters", {})
        if quasi_identifiers is None:
            quasi_identifiers = list(rep.get("release", {}).get("selected", []))
        k = k if k is not None else rep["privacy"].get("k")
        sensitive = sensitive or params.get("sensitive")
        l = l if l is not None else params.get("l")  # noqa: E741
    if quasi_identifiers is None:
        raise DpkitUsageError("give quasi_identifiers= (the columns) or a kanon-select report",
                              param="quasi_identifiers")
    check_k_l(k, l, sensitive, need_k=False)  # given or from the report; before the data is read
    if is_dataframe(data):  # in memory, as check_kanon takes it
        df, name = data, DATAFRAME
    else:
        opts = read_options(data, **check_reading(reading, "evaluate_kanon"))
        df = read_table(opts)  # every column: the --test utility trains on the target too
        name = opts.name
    out = KanonEvaluation(check_columns(df, name, quasi_identifiers, k=k, sensitive=sensitive, l=l))
    if rep is not None and "suppression" in rep.get("release", {}):
        out.extra["suppression"] = rep["release"]["suppression"]
    out.extra["average_class_size"] = out.check.records / out.check.classes
    if test is not None:
        out.extra["classifier"] = _kanon_utility(df, quasi_identifiers, test, rep, target, positive, schema, reading)
    return out


@dataclass
class KanonEvaluation:
    """:func:`evaluate_kanon`'s answer: the check, and ``average_class_size`` (C_AVG·k),
    ``suppression`` and ``classifier`` when known."""

    check: KAnonymityCheck
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.check.to_dict() | self.extra

    def lines(self) -> list[str]:
        """One fact per line, as ``dpkit evaluate kanon`` prints them."""
        return _kanon_lines(self.check.lines(), self.extra)


def _kanon_lines(lines: list[str], result: dict[str, Any]) -> list[str]:
    lines = list(lines)
    if "suppression" in result:
        sup = result["suppression"]
        lines.insert(2, f"suppressed: {sup['records']} records ({100 * sup['fraction']:.2f}%, "
                        f"at most {100 * sup['max_fraction']:g}% allowed)")
    lines.insert(3, f"average class size: {result['average_class_size']:.4g}")
    if "classifier" in result:
        u = result["classifier"]
        pos = f" (positive class {u['positive']!r})" if u.get("positive") is not None else " (macro)"
        lines.append(f"classifier utility on {u['test_records']} test records{pos}; "
                     f"majority class alone: accuracy {u['majority_accuracy']:.4f}")
        for name in ("svm", "entropy_tree"):
            m = u[name]
            lines.append(f"  {name:>12}: accuracy {m['accuracy']:.4f}   precision {m['precision']:.4f}   "
                         f"recall {m['recall']:.4f}")
    return lines


def _kanon_utility(df: pd.DataFrame, qis: list[str], test_path: str, rep: dict[str, Any] | None,
                   target: str | None, positive: str | None, schema_path: str | None,
                   reading: dict[str, Any]) -> dict[str, Any]:
    """Train on the release, test on ``test_path`` mapped through the report's generalization."""
    from pathlib import Path

    from dpkit.algorithms.kanon.apply import apply_release
    from dpkit.algorithms.kanon.frame import require_columns
    from dpkit.algorithms.kanon.utility import classifier_utility
    from dpkit.io.table import read_csv

    params = (rep or {}).get("parameters", {})
    target = target or params.get("target")
    if target is None:
        raise DpkitUsageError("target= is required with a test split (or a kanon-select report naming "
                              "the target)", param="target")
    require_columns(df, [target], "target", "DATA")
    test = read_csv(test_path, encoding=reading.get("encoding") or DEFAULT_ENCODING, delimiter=reading.get("delimiter"))
    require_columns(test, [*qis, target], "test", test_path)
    if rep is not None and params.get("generalize"):
        schema = None
        schema_file = schema_path or params.get("schema")
        if schema_file:
            if not Path(schema_file).is_file():
                raise DataError(f"the schema {schema_file} named by the report is not found from here; pass schema=",
                                param="schema")
            from dpkit.schema.parse import load_schema

            schema = load_schema(schema_file, allow_draft=True)
        release = dict(rep.get("release", {}))
        release["selected"] = list(qis)
        test = apply_release(test, release, schema, target, source=test_path)
    return classifier_utility(df, test, list(qis), target, positive=positive)


@any_frame("test", "train", "predictions", "baseline", "baseline_test")
@renamed("evaluate_classifier")
@owner_records()
def evaluate_classifier(test: DataLike, *, target: str, train: DataLike | None = None,
                        predictions: DataLike | None = None, dpkit_model: str | None = None,
                        baseline: DataLike | None = None, baseline_test: DataLike | None = None,
                        schema: SchemaLike | None = None, model: str = "tree", positive: str | None = None,
                        weight_column: str | None = None, random_state: int = 0,
                        roc_curve: bool = False) -> dict[str, Any]:
    """Accuracy, balanced accuracy, precision/recall/F1, ROC AUC and the confusion matrix of a
    classifier trained on ``train`` (e.g. a release, scored as the MAXGDDP and DiffGen papers score
    theirs), of ``predictions`` (aligned with ``test``), or of a ``dpkit_model`` forest, on
    ``test`` (``dpkit evaluate classify``; :func:`dpkit.evaluate.classify.score_tables`).

    Exactly one of ``train``, ``predictions`` and ``dpkit_model``. ``baseline`` and
    ``baseline_test`` (the raw splits) add the same classifier trained on raw data and the
    majority-class floor. Inputs are paths, :class:`~dpkit.io.source.ReadOptions` or pandas
    DataFrames. ``random_state``: the seed of the classifier trained on ``train`` (``seed``
    before 0.5, deprecated). ``roc_curve``: also the ROC curve's points of a two-class task
    (``roc_curve``, ``baseline_roc_curve``: the positive class's false and true positive rates).
    """
    from dpkit.engine.inputs import DATAFRAME, is_dataframe, labels_as_text, read_options
    from dpkit.evaluate.classify import (
        dpkit_model_predictor,
        read_predictions,
        score_tables,
        scores_from_columns,
    )
    from dpkit.io.table import read_table

    given = [n for n, v in (("train", train), ("predictions", predictions), ("dpkit_model", dpkit_model))
             if v is not None]
    if len(given) != 1:
        raise DpkitUsageError("give exactly one of train=, predictions= or dpkit_model=" +
                              (f" (got {', '.join(n + '=' for n in given)})" if given else ""))
    if baseline_test is not None and baseline is None:
        raise DpkitUsageError("baseline_test= needs baseline= (the raw training split)", param="baseline")
    if baseline is not None and baseline_test is None:
        # scoring the raw model on the generalized test split (values it never saw) gave a
        # baseline below the majority class: the baseline needs the raw test split
        raise DpkitUsageError("baseline= needs baseline_test= (the raw test split; test= is the generalized one) "
                              "— give the same file twice if the test split is raw", param="baseline_test")

    def read(data: DataLike) -> tuple[Any, str]:
        if is_dataframe(data):  # its labels as a CSV's (a release's classes are text: 1 is "1")
            return labels_as_text(data, target), DATAFRAME
        opts = read_options(data)
        return read_table(opts), opts.name

    from dpkit.engine.inputs import schema_of

    sch, _ = schema_of(schema, allow_draft=True)  # a path or a Schema (e.g. ``release.schema``)
    test_df, test_name = read(test)
    train_df, train_name = read(train) if train is not None else (None, "<train>")
    pred = proba = None
    if predictions is not None:
        pred_df, pred_name = read(predictions)
        pred = read_predictions(pred_df, target, len(test_df), pred_name)
        proba = scores_from_columns(pred_df, len(test_df))  # forest predict --proba's p_<class> columns
    base, base_name = read(baseline) if baseline is not None else (None, "")
    base_test, base_test_name = read(baseline_test) if baseline_test is not None else (None, "")
    result = score_tables(
        train_df, test_df, target, model=model, schema=sch, positive=positive, weight_column=weight_column,
        seed=random_state, baseline_train=base, baseline_test=base_test, predictions=pred, proba=proba,
        predictor=dpkit_model_predictor(dpkit_model, source=test_name) if dpkit_model else None,
        sources=(train_name, test_name, base_name, base_test_name), curve=roc_curve,
    )
    if dpkit_model:
        result["model"] = "dpkit-forest"
    return result
