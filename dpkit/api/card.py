"""``dpkit.report_card``: a run's release card (``dpkit report``), an HTML page of its report.

Gathers what :func:`dpkit.card.render` draws — the report, the public domain of the schema it
names, a ledger's total for the data set — and, when the owner gives test rows, the
evaluation of the release on them (:func:`dpkit.evaluate_classifier` and its siblings). The
card's privacy content is the report's, which the accountant built; the test rows' figures
are exact statistics of private data, and the card says so in a banner.
"""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from dpkit.errors import DataError, DpkitError, DpkitUsageError
from dpkit.types import DataLike, LedgerLike, SchemaLike, later

if TYPE_CHECKING:
    import pandas as pd
else:  # the same name for typing.get_type_hints, imported when it evaluates it
    pd = later("pandas")


class Reported(Protocol):
    """A result with its run's report (:class:`~dpkit.Release`, :class:`~dpkit.Forest`,
    :class:`~dpkit.Clustering`, :class:`~dpkit.KAnonymousTable`)."""

    report: dict[str, Any] | None


class CardOptions(TypedDict, total=False):
    """What a result's ``card()`` passes on to :func:`report_card`."""

    test: DataLike | None
    target: str | None
    release: str | os.PathLike[str] | None
    baseline: DataLike | None
    schema: SchemaLike | None
    ledger: LedgerLike
    dataset: str | None


#: the categories of one column a distribution chart draws (the most common in the release first)
MAX_BARS = 12
#: the rows a notebook's card shows
HEAD_ROWS = 5


def _report(report: Any) -> tuple[dict[str, Any], str | None, Any]:
    """(the report dict, its path if it came from one, the result object if one was given)."""
    if isinstance(report, dict):
        return report, None, None
    if isinstance(report, str | os.PathLike):
        from dpkit.report import read_report

        return read_report(report), os.fspath(report), None
    if hasattr(report, "report"):
        if report.report is None:
            raise DpkitUsageError("this result has no report (a forest read back from its model file): "
                                  "give the training run's report", param="report")
        return report.report, None, report
    raise DpkitUsageError(f"report must be a path, a report dict or a result, got {type(report).__name__}",
                          param="report")


def _check_shape(rep: dict[str, Any], where: str | None) -> None:
    """The report's sections of the kind :mod:`dpkit.report` writes (objects and lists), or a
    one-line error naming the first that is not."""
    kinds = {"privacy": dict, "parameters": dict, "release": dict, "spends": list, "spends_by_tree": list}
    for key, kind in kinds.items():
        if key in rep and rep[key] is not None and not isinstance(rep[key], kind):
            raise DataError(f"{where or '<report>'}: not a report this dpkit can draw ({key!r} is not "
                            f"{'an object' if kind is dict else 'a list'})")


def _schema(rep: dict[str, Any], where: str | None, obj: Any, schema: Any) -> Any:
    """The schema given, the result's own, or the one the report names if it is found from here
    (None otherwise: the card then shows the domain the report itself holds)."""
    from dpkit.engine.inputs import schema_of

    if schema is not None:
        return schema_of(schema, allow_draft=True)[0]
    if getattr(obj, "schema", None) is not None:
        return obj.schema
    from dpkit.api.generalize import _named_schema

    params = rep.get("parameters") or {}
    if not params.get("schema"):
        return None
    try:
        return schema_of(_named_schema(params, where or "<report>"), allow_draft=True)[0]
    except DpkitError:  # not found from here, or not readable: the card draws what the report holds
        return None


def domain_of(schema: Any) -> dict[str, dict[str, Any]]:
    """Each column of a schema as the card's domain table reads it (public: the schema)."""
    out: dict[str, dict[str, Any]] = {}
    if schema is None:
        return out
    tokens = [t for t in ([schema.missing] if schema.missing else []) + list(schema.missing_tokens or ()) if t]
    shown = ", ".join(map(repr, dict.fromkeys(tokens))) or "an empty cell"
    policy = {"drop": f"{shown}: the record is dropped", "error": f"{shown}: refused",
              "keep": f"{shown}: kept as a value of the column"}.get(schema.missing_policy)
    for name, col in schema.columns.items():
        kind = getattr(col, "kind", "")
        d: dict[str, Any] = {"kind": kind}
        if kind == "numeric":
            d["bounds"] = [col.lo, col.hi]
            d["missing"] = bool(getattr(col, "missing", False)) or None
        elif kind == "categorical":
            d["values"] = list(col.leaves)
            d["other"] = col.other
            if col.missing_leaf:
                d["missing_text"] = f"kept as {col.missing_leaf!r}"
        if policy and kind != "ignore" and "missing_text" not in d:
            d["missing_text"] = policy
        out[name] = d
    return out


def _ledger(ledger: Any, dataset: str | None) -> dict[str, Any] | None:
    if ledger is None:
        return None
    from dpkit.ledger import Ledger

    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    statuses = book.status()
    if dataset is not None:
        found = [s for s in statuses if s.name == dataset]
        if not found:
            raise DataError(f"{getattr(book, 'path', ledger)}: no data set named {dataset!r} in the ledger "
                            f"({', '.join(s.name for s in statuses) or 'none registered'})", param="dataset")
    elif len(statuses) == 1:
        found = statuses
    else:
        raise DpkitUsageError(f"the ledger holds {len(statuses)} data sets: name one "
                              f"({', '.join(s.name for s in statuses[:8])})", param="dataset")
    return found[0].to_dict()


def _beside(where: str | None, suffixes: tuple[str, ...]) -> str | None:
    """The output a command wrote beside its report (``X.report.json`` → ``X.csv`` …), if any."""
    if not where or not where.endswith(".report.json"):
        return None
    stem = where[: -len(".report.json")]
    for s in suffixes:
        if os.path.isfile(stem + s):
            return stem + s
    return None


def _need(path: str | None, what: str) -> str:
    if path is None:
        raise DpkitUsageError(f"the {what} to evaluate on the test rows is not beside the report: give release=",
                              param="release")
    return path


def _curves(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, name, auc in (("roc_curve", "this release", "roc_auc"), ("baseline_roc_curve", "raw-data baseline",
                                                                       "baseline_roc_auc")):
        c = metrics.get(key)
        if c:
            out.append({"name": name, "fpr": c["fpr"], "tpr": c["tpr"], "auc": metrics.get(auc)})
    return out


def _distributions(release: Any, test: Any, columns: list[str]) -> dict[str, dict[str, Any]]:
    """Each column's share of records per value in the release and in the (generalized) test rows."""
    out = {}
    for c in columns:
        if c not in release.columns or c not in test.columns:
            continue
        a = release[c].astype(str).value_counts(normalize=True)
        b = test[c].astype(str).value_counts(normalize=True)
        labels = list(dict.fromkeys([*a.index, *b.index]))[:MAX_BARS]
        out[c] = {"labels": labels, "release": [float(a.get(v, 0.0)) for v in labels],
                  "test": [float(b.get(v, 0.0)) for v in labels]}
    return out


def _classify(rep: dict[str, Any], where: str | None, obj: Any, schema: Any, test: Any, target: str,
              release: Any, baseline: Any) -> dict[str, Any]:
    """A publish release or a forest, scored on the test rows (and the raw baseline)."""
    from dpkit.api.evaluate import evaluate_classifier
    from dpkit.io.table import read_table

    command = rep.get("command")
    raw_test = os.fspath(test) if isinstance(test, str | os.PathLike) else test  # a path: messages name it
    common = {"target": target, "baseline": baseline, "baseline_test": raw_test if baseline is not None else None,
              "roc_curve": True}
    ev: dict[str, Any] = {"kind": "classifier"}
    if command == "publish":
        from dpkit.api.generalize import generalize

        if obj is not None and release is None:
            rows = obj._rows().astype(str)
        else:
            rows = read_table(_options(release or _need(_beside(where, (".csv", ".parquet", ".pq")), "release")))
        if schema is None:
            raise DpkitUsageError("the schema the report names is not found from here: give schema=", param="schema")
        gen = generalize(raw_test, rep, schema=schema)
        metrics = evaluate_classifier(gen, train=rows, schema=schema, **common)
        ev["distributions"] = _distributions(rows, gen, [*(rep.get("release") or {}).get("cut", {}), target])
        ev["model"] = "a decision tree trained on the release"
    else:  # forest train
        if obj is not None and release is None:
            preds = obj.predictions(raw_test, proba=True)
            metrics = evaluate_classifier(raw_test, predictions=preds.astype({target: str}), schema=schema, **common)
        else:
            model = release or _need(_model_beside(rep, where), "model")
            metrics = evaluate_classifier(raw_test, dpkit_model=os.fspath(model), schema=schema, **common)
        ev["model"] = "the forest"
    metrics["records"] = int(sum(map(sum, metrics.get("confusion_matrix") or [])))
    ev["metrics"] = metrics
    ev["roc"] = _curves(metrics)
    ev["positive"] = metrics.get("positive")
    return ev


def _model_beside(rep: dict[str, Any], where: str | None) -> str | None:
    named = (rep.get("release") or {}).get("model")
    if named and where:
        candidate = os.path.join(os.path.dirname(os.path.abspath(where)), os.path.basename(str(named)))
        if os.path.isfile(candidate):
            return candidate
    return _beside(where, (".json",))


def _options(data: Any) -> Any:
    from dpkit.engine.inputs import read_options

    return read_options(data)


def _cluster(rep: dict[str, Any], test: Any, target: str | None) -> dict[str, Any]:
    """NICV (and its ratio to non-private k-means) and the F-measure against ``target`` of the
    report's centroids on the test rows."""
    import pandas as pd

    from dpkit.api.evaluate import evaluate_clustering

    cols = list((rep.get("parameters") or {}).get("columns") or [])
    cents = (rep.get("release") or {}).get("centroids") or []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "centroids.csv")
        pd.DataFrame(cents, columns=cols).to_csv(path, index=False)
        metrics = evaluate_clustering(test, path, columns=cols, labels=target)
    metrics = {k: v for k, v in metrics.items() if isinstance(v, int | float)}
    return {"kind": "clustering", "metrics": metrics, "names": ("these centroids", "—", "—"),
            "model": "the centroids"}


def cluster_sizes(rep: dict[str, Any], histogram: pd.DataFrame) -> list[float] | None:
    """Each centroid's noisy size: the noisy counts of the released buckets (``*_lo``, ``*_hi``,
    ``count``) whose centres lie nearest to it — post-processing of the release (the centroids
    themselves are the weighted k-means of these buckets)."""
    import numpy as np

    cols = list((rep.get("parameters") or {}).get("columns") or [])
    cents = np.asarray((rep.get("release") or {}).get("centroids") or [], dtype=float)
    count = [c for c in histogram.columns if str(c).startswith("count")]
    if not cols or cents.size == 0 or not count or any(f"{c}_lo" not in histogram.columns for c in cols):
        return None
    centres = np.column_stack([(histogram[f"{c}_lo"].to_numpy(float) + histogram[f"{c}_hi"].to_numpy(float)) / 2
                               for c in cols])
    nearest = ((centres[:, None, :] - cents[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    sizes = np.bincount(nearest, weights=histogram[count[0]].to_numpy(float), minlength=len(cents))
    return [round(float(x), 1) for x in sizes]


def _read_histogram(path: str) -> pd.DataFrame:
    """The noisy buckets as ``dpkit cluster --histogram`` writes them: numbers, or a one-line error."""
    import pandas as pd

    from dpkit.io.table import read_csv

    df = read_csv(path)
    for c in df.columns:
        values = pd.to_numeric(df[c], errors="coerce")
        if values.isna().any():
            raise DataError(f"{path}: column {c!r} is not numbers — give the noisy buckets as a clustering "
                            "writes its histogram")
        df[c] = values
    return df


def _kanon(rep: dict[str, Any], where: str | None, obj: Any, test: Any, target: str, release: Any) -> dict[str, Any]:
    """The utility of an SVM and an entropy tree trained on the k-anonymous rows (XGB-KA's score)."""
    from dpkit.api.evaluate import evaluate_kanon
    from dpkit.report import write_report

    rows = obj._rows() if obj is not None and release is None else (
        release or _need(_beside(where, (".csv", ".parquet", ".pq")), "release"))
    with tempfile.TemporaryDirectory() as tmp:
        path = where or os.path.join(tmp, "kanon.report.json")
        if where is None:
            write_report(rep, path)
        if not isinstance(test, str | os.PathLike):  # evaluate_kanon reads its test rows from a file
            test_path = os.path.join(tmp, "test.csv")
            test.to_csv(test_path, index=False)
            test = test_path
        out = evaluate_kanon(rows, from_report=path, test=os.fspath(test), target=target).to_dict()
    u = out.get("classifier") or {}
    metrics = {}
    for name in ("svm", "entropy_tree"):
        for k, v in (u.get(name) or {}).items():
            metrics[f"{name} {k}"] = v
    ev = {"kind": "kanon", "metrics": {}, "extra": {**{k: round(v, 4) if isinstance(v, float) else v
                                                       for k, v in metrics.items()},
                                                    "majority class accuracy": u.get("majority_accuracy"),
                                                    "test records": u.get("test_records")}}
    return ev


def report_card(report: str | os.PathLike[str] | dict[str, Any] | Reported,
                output: str | os.PathLike[str] | None = None, *, test: DataLike | None = None,
                target: str | None = None, release: str | os.PathLike[str] | None = None,
                baseline: DataLike | None = None, schema: SchemaLike | None = None, ledger: LedgerLike = None,
                dataset: str | None = None, embed: bool = False, title: str | None = None,
                head: pd.DataFrame | None = None) -> str:
    """The release card of a run: one self-contained HTML page (inline CSS and SVG, no script,
    nothing fetched) built from its report (docs/report.md).

    ``report``: a report's path, its dict, or a result (:class:`~dpkit.Release`,
    :class:`~dpkit.Forest`, :class:`~dpkit.Clustering`, :class:`~dpkit.KAnonymousTable`).
    ``output``: also write the page there, atomically. ``test`` and ``target``: the owner's
    test rows, on which the release is evaluated (a decision tree trained on a publish release,
    the forest, the centroids, the k-anonymous rows) — exact statistics of private data, under a
    banner that says so. ``release``: the released file (default: the one beside the report);
    for a clustering, its noisy buckets (``--histogram``'s file), which give each centroid its
    noisy size; ``baseline``: the raw training rows, for the raw-data baseline. ``schema``: default the
    result's or the one the report names. ``ledger`` (and ``dataset`` when it holds several):
    the ε spent on the data set across runs. ``embed``: a ``<div>`` for a notebook rather than
    a page; ``head``: a DataFrame whose first rows the card shows (a notebook's card). Returns
    the HTML.
    """
    from dpkit.card import render

    rep, where, obj = _report(report)
    _check_shape(rep, where)
    if test is not None and not (isinstance(test, str | os.PathLike) or hasattr(test, "columns")):
        raise DpkitUsageError("test must be a path or a DataFrame", param="test")
    if baseline is not None and test is None:
        raise DpkitUsageError("baseline needs test (the test rows it is scored on)", param="baseline")
    sch = _schema(rep, where, obj, schema)
    led = _ledger(ledger, dataset)
    evaluation = None
    command = rep.get("command")
    if test is not None:
        target = target or (rep.get("parameters") or {}).get("target") or (rep.get("release") or {}).get("target")
        if command in ("publish", "forest train"):
            if not target:
                raise DpkitUsageError("target is required with test", param="target")
            evaluation = _classify(rep, where, obj, sch, test, target, release, baseline)
        elif command == "cluster":
            evaluation = _cluster(rep, test, target)
        elif command == "kanon-select":
            evaluation = _kanon(rep, where, obj, test, target, release)
        else:
            raise DpkitUsageError(f"a {command!r} report has no test evaluation", param="test")
        evaluation["source"] = os.path.basename(os.fspath(test)) if isinstance(test, str | os.PathLike) else None
    sizes = None
    if command == "cluster":
        hist = getattr(obj, "histogram", None)
        if hist is None and release is not None:
            hist = _read_histogram(os.fspath(release))
        sizes = cluster_sizes(rep, hist) if hist is not None else None
    name = title or (f"dpkit {type(obj).__name__}: release card" if obj is not None else None)
    extra = ""
    if head is not None:
        from dpkit.card.page import table

        extra = (f"<h2 id='rows'>First {min(HEAD_ROWS, len(head))} of {len(head):,} rows</h2>"
                 + table([str(c) for c in head.columns], head.head(HEAD_ROWS).astype(str).to_numpy().tolist(),
                         row_header=False))
    try:
        page = render(rep, domain=domain_of(sch) or None, evaluation=evaluation, ledger=led, sizes=sizes,
                      source=os.path.basename(where) if where else None, title=name, embed=embed, extra_html=extra)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        # a report dpkit wrote always draws: this one was edited, or is of another format
        raise DataError(f"{where or '<report>'}: not a report this dpkit can draw (report_version "
                        f"{rep.get('report_version')!r}; {type(exc).__name__}: {exc})") from None
    if output is not None:
        from dpkit.io.output import atomic_output

        with atomic_output(os.fspath(output)) as fh:
            fh.write(page)
    return page
