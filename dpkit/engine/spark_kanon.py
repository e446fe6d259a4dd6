"""`dpkit kanon-select --engine spark`: XGB-KA with every scan a Spark job (docs/spark.md).

The numpy path (:mod:`dpkit.anonymity.select`) reads the table into this process. Here Spark
reads it, and the driver receives aggregates only:

- the rows kept per partition (row positions, rows dropped for a missing value);
- per column: the number of distinct values, values outside the taxonomy or not numbers
  (the first such row, for the numpy engine's one-line message), values clipped;
- the target's classes (the labels of the ranking);
- XGB-KA's ranking: ``xgboost.spark.SparkXGBClassifier`` trains on the executors (one
  worker, rows in position order: the numpy engine's gains, bit for bit, as long as the
  training rows fit one worker) and returns the model; the ``--rank-sample`` rows are the
  numpy engine's (the same ``rng.choice`` of positions, drawn on the driver: positions
  only, at most ``--rank-sample`` of them); Greedy-Hamdist's from exact (value × class) products
  summed on Spark;
- Algorithm 1's k-anonymity test (Wang & Wan, Algorithm 2): for each trial, a Spark
  group-by count over the kept columns and the candidate, reduced to its smallest class
  (and smallest distinct-ℓ) on the executors — one number per trial;
- the final classes as (class size, number of classes) pairs.

Equivalence is exact string equality of the values as written (as on the numpy path), so
the schema-encoded :class:`~dpkit.engine.spark_frame.SparkFrame` does not fit: a column
without a schema, or "40" and "40.0", or a clipped number would merge classes. This module
works on the stripped strings Spark reads and shares the reader, the session and the error
plumbing of :mod:`dpkit.engine.spark_frame`.

The output rows are formatted on the executors by Python's ``csv`` module (the numpy
engine's bytes) and written by Spark as part files; for a local file the driver then
concatenates the part files, streaming, into the output (atomically).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.console import private
from dpkit.errors import DataError, DpkitWarning

#: training rows above which SparkXGBClassifier runs on several workers (distributed
#: quantile sketch: the ranking may then differ from the numpy engine's; docs/spark.md)
ONE_WORKER_ROWS = 1_000_000
_PID, _SEEN, _IDX, _KEEP = "__pid", "__seen", "__idx", "__keep"
_POS, _ORIG = "__pos", "__orig"


@dataclass
class SparkSelection:
    """What the CLI needs: the report's release section and the candidates."""

    release: dict[str, Any]
    candidates: list[str]
    selected: list[str]
    output_columns: list[str]
    n_rows: int


class _Table:
    """The kept rows on Spark (stripped strings, persisted) with their 0-based positions."""

    def __init__(self, df: Any, fields: dict[str, str], n_rows: int) -> None:
        self.df = df
        self.fields = fields
        self.n_rows = n_rows


def _strings(values: Any) -> Any:
    """An Arrow column as the numpy reader's values: strings, stripped, '' for empty."""
    s = values.to_pandas().astype(object)
    s = s.where(s.notna(), "")
    return s.map(lambda v: v.strip() if isinstance(v, str) else str(v).strip())


def read_table(raw: Any, names: list[str], columns: list[str], used: list[str], schema: Any, source: str) -> _Table:
    """Read ``columns`` on Spark, drop (or refuse) rows with a missing token in ``used``.

    Two jobs over the data: rows kept/dropped per partition (positions, the missing-value
    policy), then the kept rows persisted for the selection's aggregations.
    """
    import pyarrow as pa
    from pyspark.sql import functions as F

    from dpkit.engine.spark_frame import _collect

    fields = {c: f"s{i}" for i, c in enumerate(columns)}
    raw = raw.select(*[F.col(f"`{raw.columns[names.index(c)]}`").alias(fields[c]) for c in columns])
    tokens = set(schema.missing_tokens) if schema is not None and schema.missing is not None else set()
    check = [i for i, c in enumerate(columns) if c in used]

    def annotate(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        pid = TaskContext.get().partitionId()
        seen = kept = 0
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            cols = [_strings(batch.column(i)) for i in range(len(columns))]
            keep = np.ones(n, dtype=bool)
            if tokens:
                for i in check:
                    keep &= ~cols[i].isin(tokens).to_numpy()
            idx = np.full(n, -1, dtype=np.int64)
            idx[keep] = np.arange(kept, kept + int(keep.sum()))
            arrays = [pa.array(c.to_numpy(dtype=object), pa.string()) for c in cols] + [
                pa.array(np.full(n, pid, dtype=np.int32)), pa.array(np.arange(seen, seen + n, dtype=np.int64)),
                pa.array(idx), pa.array(keep)]
            seen += n
            kept += int(keep.sum())
            yield pa.RecordBatch.from_arrays(arrays, names=[*fields.values(), _PID, _SEEN, _IDX, _KEEP])

    ddl = ", ".join([f"{f} string" for f in fields.values()]
                    + [f"{_PID} int", f"{_SEEN} long", f"{_IDX} long", f"{_KEEP} boolean"])
    annotated = raw.mapInArrow(annotate, ddl).persist()
    rows = _collect(annotated.groupBy(_PID).agg(
        F.count(F.lit(1)).alias("seen"), F.sum(F.col(_KEEP).cast("long")).alias("kept"),
        F.min(F.when(~F.col(_KEEP), F.col(_SEEN))).alias("first")), kind="read")
    parts = max((r[_PID] for r in rows), default=-1) + 1
    seen = np.zeros(parts, dtype=np.int64)
    kept = np.zeros(parts, dtype=np.int64)
    first = {}
    for r in rows:
        seen[r[_PID]], kept[r[_PID]] = int(r["seen"]), int(r["kept"] or 0)
        if r["first"] is not None:
            first[r[_PID]] = int(r["first"])
    seen_at = np.concatenate([[0], np.cumsum(seen)[:-1]]).astype(np.int64)
    kept_at = np.concatenate([[0], np.cumsum(kept)[:-1]]).astype(np.int64)
    dropped = int(seen.sum() - kept.sum())
    if dropped:
        if schema.missing_policy == "error":
            pid = min(first)
            r = int(seen_at[pid] + first[pid])
            raise DataError(
                f"{private(f'{source}:{r + 2}', source)}: a missing value ({schema.missing!r}) in the columns used; "
                f"set missing_policy: drop in {schema.path} to drop such rows"
            )
        warnings.warn(
            private(
                f"{source}: dropped {dropped} row(s) with a missing value ({schema.missing!r}) in the columns used",
                f"{source}: dropped rows with a missing value ({schema.missing!r}) in the columns used",
            ),
            DpkitWarning,
            stacklevel=2,
        )
    n = int(kept.sum())
    if n == 0:
        raise DataError(f"{source}: no rows left after dropping rows with missing values" if dropped
                        else f"{source}: has a header but no data rows")
    pos = F.element_at(F.array(*[F.lit(int(o)) for o in kept_at]), F.col(_PID) + 1) + F.col(_IDX)
    orig = F.element_at(F.array(*[F.lit(int(o)) for o in seen_at]), F.col(_PID) + 1) + F.col(_SEEN)
    df = (annotated.filter(F.col(_KEEP)).select(*fields.values(), pos.alias(_POS), orig.alias(_ORIG))
          .persist())
    table = _Table(df, fields, n)
    table.annotated = annotated  # unpersisted once ``df`` is computed (by the first scan)
    return table


def _release_parent(table: _Table) -> None:
    parent = getattr(table, "annotated", None)
    if parent is not None:
        parent.unpersist()
        table.annotated = None


# --------------------------------------------------------------------------- column checks


def check_columns(table: _Table, candidates: list[str], schema: Any, source: str) -> dict[str, Any]:
    """One job: per candidate, its distinct values and whether every one is a finite number;
    with a schema, the numpy path's data errors (first offending row) and clipping warnings.

    Returns ``{column: {"distinct", "kind", "error", "warning"}}`` (the caller raises and
    warns in the numpy path's order); the driver gets a few rows per column: at most five
    offending values per column and Arrow batch (what the message shows).
    """
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import functions as F

    from dpkit.data.schema import CategoricalColumn
    from dpkit.engine.spark_frame import _collect

    cols = list(candidates)
    fields = [table.fields[c] for c in cols]
    leaves = {}
    bounds = {}
    for j, c in enumerate(cols):
        col = schema.columns[c] if schema is not None else None
        if isinstance(col, CategoricalColumn):
            leaves[j] = set(col.leaf_code)
        elif col is not None:
            bounds[j] = (float(col.lo), float(col.hi))

    def scan(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            orig = batch.column(len(fields)).to_numpy(zero_copy_only=False)
            out: dict[str, list] = {k: [] for k in ("j", "kind", "value", "n", "row")}

            def emit(j: int, kind: str, value: str | None, n: int, row: int, out: dict = out) -> None:
                for k, v in zip(("j", "kind", "value", "n", "row"), (j, kind, value, n, row), strict=True):
                    out[k].append(v)

            for j in range(len(fields)):
                values = batch.column(j).to_pandas().astype(object)
                if j in leaves:
                    bad = ~values.isin(leaves[j]).to_numpy()
                    if bad.any():
                        # the first five bad values of the batch, in order, with their first row
                        shown = pd.unique(values[bad])[:5]
                        for v in shown:
                            emit(j, "taxonomy", v, 0, int(orig[np.flatnonzero(bad & (values == v).to_numpy())[0]]))
                        if "" in set(values[bad]):
                            emit(j, "empty", None, 1, int(orig[0]))
                    continue
                nums = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
                finite = np.isfinite(nums)
                if not finite.all():
                    i = int(np.flatnonzero(~finite)[0])
                    emit(j, "nonfinite", values.iloc[i], int((~finite).sum()), int(orig[i]))
                if j in bounds:
                    lo, hi = bounds[j]
                    out_of = int(((nums < lo) | (nums > hi)).sum())
                    if out_of:
                        emit(j, "clipped", None, out_of, int(orig[0]))
            if out["j"]:
                yield pa.RecordBatch.from_pydict({
                    "j": pa.array(out["j"], pa.int64()), "kind": pa.array(out["kind"], pa.string()),
                    "value": pa.array(out["value"], pa.string()), "n": pa.array(out["n"], pa.int64()),
                    "row": pa.array(out["row"], pa.int64())})

    found_rows = table.df.select(*fields, _ORIG).mapInArrow(scan, "j long, kind string, value string, n long, row long")
    # the offending values only when a taxonomy is broken (an error: at most five per batch);
    # otherwise one row per (column, kind): the count and the value at the first such row
    stats = (found_rows.filter(F.col("kind") == "taxonomy").groupBy("j", "kind", "value")
             .agg(F.sum("n").alias("n"), F.min("row").alias("row"))
             .unionByName(found_rows.filter(F.col("kind") != "taxonomy").groupBy("j", "kind")
                          .agg(F.min_by("value", "row").alias("value"), F.sum("n").alias("n"),
                               F.min("row").alias("row"))))
    distinct = table.df.agg(*[F.countDistinct(f).alias(f"d{j}") for j, f in enumerate(fields)])
    got = _collect(stats, kind="check")
    _release_parent(table)
    counts = _collect(distinct, kind="check")[0] if fields else {}
    found: dict[tuple[int, str], list] = {}
    for r in got:
        found.setdefault((int(r["j"]), r["kind"]), []).append(r)
    info: dict[str, Any] = {}
    for j, c in enumerate(cols):
        problem: DataError | None = None
        note = None
        taxonomy = sorted(found.get((j, "taxonomy"), []), key=lambda r: r["row"])
        nonfinite = sorted(found.get((j, "nonfinite"), []), key=lambda r: r["row"])
        if taxonomy:
            shown = ", ".join(repr(r["value"]) for r in taxonomy[:5])
            fix = ("declare a missing token (missing: ...) in the schema for empty values"
                   if (j, "empty") in found else "add them to the schema or fix the data")
            problem = DataError(private(
                f"{source}:{taxonomy[0]['row'] + 2}: column {c!r} has value(s) not in the taxonomy of "
                f"{schema.path} ({shown}); {fix}",
                f"{source}: column {c!r} has value(s) not in the taxonomy of {schema.path}; {fix}",
            ))
        elif j in bounds and nonfinite:
            v = nonfinite[0]["value"]
            what = "is empty (declare a missing token in the schema)" if v == "" else f"has {v!r}, not a finite number"
            problem = DataError(private(f"{source}:{nonfinite[0]['row'] + 2}: numeric column {c!r} {what}",
                                        f"{source}: numeric column {c!r} has a value that is not a finite number"))
        clipped = sum(int(r["n"]) for r in found.get((j, "clipped"), []))
        if clipped:
            lo, hi = bounds[j]
            note = private(
                f"{source}: clipped {clipped} value(s) of {c!r} to the public bounds [{lo:g}, {hi:g}] of "
                f"{schema.path} (for the ranking only; the output keeps the values as written)",
                f"{source}: clipped values of {c!r} to the public bounds [{lo:g}, {hi:g}] "
                f"of {schema.path} (for the ranking only; the output keeps the values as written)",
            )
        kind = ("categorical" if j in leaves else "bounded" if j in bounds
                else "numeric" if not nonfinite else "codes")
        info[c] = {"distinct": int(counts[f"d{j}"]), "kind": kind, "error": problem, "warning": note}
    return info


# --------------------------------------------------------------------------- ranking


def _classes(table: _Table, target: str) -> tuple[list[str], np.ndarray]:
    """The target's classes (sorted, as ``factorize(sort=True)``) and their record counts."""
    from dpkit.engine.spark_frame import _collect

    f = table.fields[target]
    got = sorted((r[0], int(r[1])) for r in _collect(table.df.groupBy(f).count(), kind="classes"))
    return [g[0] for g in got], np.array([g[1] for g in got], dtype=np.int64)


def xgboost_gains_spark(
    table: _Table, candidates: list[str], info: dict[str, Any], schema: Any, target: str,
    classes: list[str], *, seed: int, rank_sample: int | None,
) -> tuple[dict[str, float], int]:
    """XGB-KA's ranking on the executors (``xgboost.spark.SparkXGBClassifier``).

    The rows are the numpy engine's: every row, or the ``rank_sample`` positions that
    :class:`~dpkit.anonymity.greedy.KAnonymitySelector` draws (``rng.choice`` of positions on
    the driver; no row is read there). They reach one executor in position order, so the
    model — and the gains — are the numpy engine's as long as the training rows stay under
    :data:`ONE_WORKER_ROWS`; above, XGBoost trains on several workers (distributed sketch).
    """
    import logging

    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from xgboost.spark import SparkXGBClassifier

    from dpkit.anonymity.xgb_ka import DEFAULT_DEPTH, DEFAULT_TREES
    from dpkit.engine.spark_frame import _collect

    n = table.n_rows
    rows = None
    if rank_sample and n > rank_sample:
        # plain numpy randomness, as KAnonymitySelector.fit: k-anonymity, not DP
        rng = np.random.default_rng(int(seed))
        rows = np.sort(rng.choice(n, size=int(rank_sample), replace=False))
    label_of = {c: i for i, c in enumerate(classes)}
    tf = table.fields[target]
    df = table.df
    if rows is not None:
        chosen = rows

        def pick(batches: Iterator[Any], chosen: np.ndarray = chosen) -> Iterator[Any]:
            for batch in batches:
                pos = batch.column(batch.schema.get_field_index(_POS)).to_numpy(zero_copy_only=False)
                at = np.searchsorted(chosen, pos)
                hit = (at < len(chosen)) & (chosen[np.minimum(at, len(chosen) - 1)] == pos)
                if hit.any():
                    yield batch.filter(pa.array(hit))

        sample = df.mapInArrow(pick, df.schema)
        present = sorted(r[0] for r in _collect(sample.select(tf).distinct(), kind="rank"))
        if len(present) < 2:  # a very rare class left out of the sample: every record
            sample, present = df, list(classes)
    else:
        sample, present = df, list(classes)
    # XGBoost wants the classes numbered 0..C-1: renumber those the rows hold (sorted)
    y_of = {c: i for i, c in enumerate(sorted(present, key=label_of.__getitem__))}
    # non-schema categorical candidates: codes numbered in first-seen order over all rows
    # (pandas.factorize's numbering on the numpy path), computed on Spark and joined
    for c in candidates:
        if info[c]["kind"] == "codes":
            f = table.fields[c]
            first = df.groupBy(f).agg(F.min(_POS).alias("p"))
            codes = first.select(f, (F.row_number().over(Window.orderBy("p")) - 1).alias(f"{f}_code"))
            sample = sample.join(codes, on=f, how="left")
    cols = list(candidates)
    kinds = [info[c]["kind"] for c in cols]
    leaf = {}
    bounds = {}
    for c in cols:
        col = schema.columns[c] if schema is not None else None
        if info[c]["kind"] == "categorical":
            leaf[c] = dict(col.leaf_code)
        elif info[c]["kind"] == "bounded":
            bounds[c] = (float(col.lo), float(col.hi))
    read = [table.fields[c] + ("_code" if k == "codes" else "") for c, k in zip(cols, kinds, strict=True)]
    names = [f"f{i}" for i in range(len(cols))]

    def typed(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            out = {}
            for i, (c, k) in enumerate(zip(cols, kinds, strict=True)):
                values = batch.column(i).to_pandas()
                if k == "categorical":
                    out[names[i]] = values.map(leaf[c]).to_numpy(dtype=float)
                elif k == "codes":
                    out[names[i]] = values.to_numpy(dtype=float)
                else:
                    nums = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
                    out[names[i]] = np.clip(nums, *bounds[c]) if c in bounds else nums
            out["label"] = batch.column(len(cols)).to_pandas().map(y_of).to_numpy(dtype=np.int64)
            out["pos"] = batch.column(len(cols) + 1).to_numpy(zero_copy_only=False)
            yield pa.RecordBatch.from_pydict({k: pa.array(v) for k, v in out.items()})

    ddl = ", ".join([f"{x} double" for x in names] + ["label long", "pos long"])
    train = sample.select(*read, tf, _POS).mapInArrow(typed, ddl)
    m = n if rows is None or sample is df else len(rows)
    workers = 1 if m <= ONE_WORKER_ROWS else max(1, int(table.df.sparkSession.sparkContext.defaultParallelism))
    # one worker: the rows in position order in one partition (XGBoost's barrier stage
    # refuses a coalesce in its lineage, hence a shuffle to one partition and a sort)
    train = train.repartition(workers).sortWithinPartitions("pos")
    logging.getLogger("XGBoost-PySpark").setLevel(logging.WARNING)
    model = SparkXGBClassifier(
        features_col=names, label_col="label", num_workers=workers, n_estimators=DEFAULT_TREES,
        max_depth=DEFAULT_DEPTH, tree_method="hist", max_cat_to_onehot=1,
        random_state=int(seed) % (2**31), feature_types=["c" if k in ("categorical", "codes") else "q" for k in kinds],
        verbosity=0, verbose=False,
    )
    start = time.perf_counter()
    try:
        with _quiet_tracker():
            fitted = model.fit(train)
    except Exception as exc:
        from dpkit.engine.spark_frame import _data_error

        err = _data_error(exc)
        if err is not None:
            raise err from None
        raise
    from dpkit.engine.spark_frame import STATS

    STATS.setdefault("xgboost", []).append(time.perf_counter() - start)
    score = fitted.get_booster().get_score(importance_type="gain")
    return {c: float(score.get(f"f{i}", 0.0)) for i, c in enumerate(cols)}, m


@contextmanager
def _quiet_tracker() -> Iterator[None]:
    """Drop the XGBoost tracker's "Task 0 got rank 0" line (written by its native code to
    this process's stderr, fd 2, whatever the verbosity); replay anything else written."""
    import os
    import re
    import sys
    import tempfile

    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to keep quiet
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
            rest = [ln for ln in text.splitlines() if not re.search(r"Task \d+ got rank \d+", ln)]
            if rest:
                sys.stderr.write("\n".join(rest) + "\n")


def hamming_scores_spark(table: _Table, candidates: list[str], target: str, classes: list[str],
                         totals: np.ndarray) -> dict[str, float]:
    """Greedy-Hamdist's scores from exact sums on Spark: Σ_v n_a(v)·n_b(v) per class pair.

    :func:`dpkit.anonymity.hamdist.pair_difference`'s formula; the sums of products are
    integers (exact below 2^53, as the numpy path's float products), so the scores are the
    numpy path's floats. One job for every candidate.
    """
    from pyspark.sql import functions as F

    from dpkit.engine.spark_frame import _collect

    if not candidates:
        return {}
    tf = table.fields[target]
    a_idx, b_idx = np.triu_indices(len(classes), k=1)
    # one job: (candidate, value) pairs exploded, counted per class, then Σ_v n_a(v)·n_b(v)
    pairs = F.explode(F.array(*[F.struct(F.lit(j).alias("j"), F.col(table.fields[c]).alias("v"))
                                for j, c in enumerate(candidates)])).alias("t")
    by_value = (table.df.select(pairs, F.col(tf).alias("y")).select("t.*", "y").groupBy("j", "v")
                .agg(*[F.sum((F.col("y") == F.lit(v)).cast("long")).alias(f"n{i}") for i, v in enumerate(classes)]))
    union = by_value.groupBy("j").agg(*[F.sum(F.col(f"n{a}") * F.col(f"n{b}")).alias(f"p{a}_{b}")
                                        for a, b in zip(a_idx, b_idx, strict=True)])
    got = {int(r["j"]): r for r in _collect(union, kind="rank")}
    t = totals.astype(float)
    scores = {}
    for j, c in enumerate(candidates):
        same = np.array([float(got[j][f"p{a}_{b}"] or 0) for a, b in zip(a_idx, b_idx, strict=True)])
        scores[c] = float(np.mean(1.0 - same / (t[a_idx] * t[b_idx]))) if len(same) else 0.0
    return scores


# --------------------------------------------------------------------------- greedy


def _smallest(table: _Table, kept: list[str], trials: list[str], sensitive: str | None) -> list[tuple[int, int | None]]:
    """For each of ``trials``: the smallest equivalence class over ``kept`` + it (and the
    smallest distinct-ℓ of ``sensitive``) — one Spark job (one shuffle) for all of them.

    Each row is exploded into one (trial, class key) pair per trial — the key the array of
    its values on ``kept`` + the trial's column, compared as written — the pairs are counted
    by Spark (partial counts per partition first), and each trial's classes are reduced to
    their minimum on the executors: the driver gets one row per trial.
    """
    from pyspark.sql import functions as F

    from dpkit.engine.spark_frame import _collect

    base = [F.col(table.fields[x]) for x in kept]
    pairs = [F.struct(F.lit(j).alias("j"), F.array(*base, F.col(table.fields[c])).alias("key"),
                      *([F.col(table.fields[sensitive]).alias("s")] if sensitive is not None else []))
             for j, c in enumerate(trials)]
    aggs = [F.count(F.lit(1)).alias("n")] + ([F.countDistinct("s").alias("l")] if sensitive is not None else [])
    out = [F.min("n").alias("n"), (F.min("l") if sensitive is not None else F.lit(None).cast("long")).alias("l")]
    classes = table.df.select(F.explode(F.array(*pairs)).alias("t")).select("t.*").groupBy("j", "key").agg(*aggs)
    got = {int(r["j"]): r for r in _collect(classes.groupBy("j").agg(*out), kind="greedy")}
    return [(int(got[j]["n"]), None if got[j]["l"] is None else int(got[j]["l"])) for j in range(len(trials))]


def _size_pairs(table: _Table, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(class size, number of classes of that size), for the report: never one row per class."""
    from dpkit.engine.spark_frame import _collect

    if not columns:
        return np.array([table.n_rows], dtype=np.int64), np.array([1], dtype=np.int64)
    fs = [table.fields[c] for c in columns]
    rows = _collect(table.df.groupBy(*fs).count().groupBy("count").count().toDF("size", "classes"), kind="greedy")
    pairs = sorted((int(r["size"]), int(r["classes"])) for r in rows)
    return np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64)


def _histogram(sizes: np.ndarray, classes: np.ndarray, k: int) -> list[dict[str, int]]:
    """:func:`dpkit.anonymity.checks.size_histogram` of the classes, from (size, count) pairs."""
    from dpkit.anonymity.checks import _EDGES

    edges = sorted(set(_EDGES) | {int(k)})
    top = int(sizes.max())
    while edges[-1] <= top:
        edges.append(edges[-1] * 10)
    lo = np.asarray(edges[:-1], dtype=np.int64)
    idx = np.searchsorted(lo, sizes, side="right") - 1
    n_classes = np.bincount(idx, weights=classes, minlength=len(lo)).astype(np.int64)
    records = np.bincount(idx, weights=sizes * classes, minlength=len(lo)).astype(np.int64)
    return [
        {"min": int(lo[i]), "max": int(edges[i + 1] - 1), "classes": int(n_classes[i]), "records": int(records[i])}
        for i in range(len(lo))
        if n_classes[i]
    ]


# --------------------------------------------------------------------------- the command


def kanon_select_spark(
    options: Any,
    *,
    output: str,
    delimiter: str,
    target: str,
    k: int,
    quasi_identifiers: list[str] | None = None,
    schema: Any = None,
    ranker: str = "xgboost",
    keep: list[str] | None = None,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741
    require_features: bool = False,
    seed: int | None = None,
    rank_sample: int | None = None,
    source: str = "<data>",
    master: str | None = None,
    spark: Any = None,
) -> SparkSelection:
    """:func:`dpkit.anonymity.select.kanon_select` on Spark, and the output written by Spark.

    The same candidates, checks, messages, ranking (see :func:`xgboost_gains_spark`),
    greedy pass and report as the numpy path; the output rows never reach the driver
    through Spark (see :func:`write_rows`).
    """
    import pandas as pd

    from dpkit.anonymity.frame import prepare
    from dpkit.anonymity.greedy import DEFAULT_RANK_SAMPLE, KAnonymitySelector, Trial
    from dpkit.anonymity.select import SCORE_NAMES
    from dpkit.engine.spark_frame import _read, session

    keep = list(keep or [])
    if rank_sample is None:
        rank_sample = DEFAULT_RANK_SAMPLE
    if options.path == "-":
        from dpkit.errors import DpkitUsageError

        raise DpkitUsageError("--engine spark reads files or URIs, not stdin ('-')")
    spark = spark or session(master)
    from dpkit.engine.spark_write import check_output

    check_output(spark, output)  # a cluster master cannot write to this machine's disk: say so first
    try:
        raw, names = _read(spark, options)
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{source}: cannot read with Spark: {msg}") from None
    # the column roles and the schema's header checks, with the numpy path's messages: on
    # the header alone (no rows), so no data-dependent check fires here
    header = pd.DataFrame({c: pd.Series([], dtype=object) for c in names})
    candidates = prepare(header, target=target, quasi_identifiers=quasi_identifiers, keep=keep,
                         sensitive=sensitive, schema=schema, source=source).candidates
    used = list(dict.fromkeys([*candidates, target] + ([sensitive] if sensitive else [])))
    carried = [c for c in names if c in set(used) | set(keep)]
    table = read_table(raw, names, carried, used, schema, source)
    n = table.n_rows
    info = check_columns(table, candidates + ([sensitive] if sensitive and sensitive not in candidates else []),
                         schema if schema is not None else None, source)
    ids = [c for c in candidates if n >= 2 and info[c]["distinct"] == n]
    if ids:
        if quasi_identifiers is not None:
            raise DataError(
                f"column {ids[0]!r} has a different value in every record (an identifier): it "
                "cannot be a quasi-identifier of a k-anonymous table; drop it from --quasi-identifiers"
            )
        warnings.warn(
            f"left out identifier-like column(s) {', '.join(map(repr, ids))} (a different value in "
            "every record): identifiers are never released",
            DpkitWarning,
            stacklevel=2,
        )
        candidates = [c for c in candidates if c not in ids]
    for c in candidates:
        if info[c]["error"] is not None:
            raise info[c]["error"]
        if info[c]["warning"]:
            warnings.warn(info[c]["warning"], DpkitWarning, stacklevel=2)

    selector = KAnonymitySelector(k, ranker=ranker, l=l, random_state=seed, rank_sample=rank_sample)
    selector._validate(n, sensitive)  # the numpy path's messages (-k larger than the table, …)
    classes, totals = _classes(table, target)
    if len(classes) < 2:
        raise DataError(
            f"the target has one class ({classes[0]!r}) in every record: there is nothing "
            "to rank the features by; choose another target"
        )
    sens_distinct = info[sensitive]["distinct"] if sensitive else None
    if sensitive is not None and l is not None and sens_distinct < l:
        raise DataError(
            f"the sensitive column has only {sens_distinct} distinct value(s): no table can be "
            f"{l}-diverse on it; choose --l ≤ {sens_distinct}"
        )
    start = time.perf_counter()
    if ranker == "xgboost":
        scores, _ = xgboost_gains_spark(table, candidates, info, schema, target, classes,
                                        seed=0 if seed is None else int(seed), rank_sample=rank_sample)
    else:
        scores = hamming_scores_spark(table, candidates, target, classes, totals)
    rank_seconds = time.perf_counter() - start
    position = {c: i for i, c in enumerate(candidates)}
    ranking = sorted(candidates, key=lambda c: (-scores[c], position[c]))

    start = time.perf_counter()
    chosen: list[str] = []
    trials: list[Trial] = []
    current_l = sens_distinct
    # Algorithm 1, one Spark job per feature kept (plus one): every remaining candidate is
    # tried against the features kept so far at once; the trials up to the first that passes
    # are exactly the sequential pass's (same kept set), the rest are tried again after it
    remaining = list(ranking)
    while remaining:
        results = _smallest(table, chosen, remaining, sensitive)
        for name, (smallest, smallest_l) in zip(list(remaining), results, strict=True):
            remaining.remove(name)
            ok = smallest >= k and (l is None or smallest_l is None or smallest_l >= l)
            trials.append(Trial(name, float(scores.get(name, 0.0)), ok, smallest, smallest_l))
            if ok:
                chosen.append(name)
                current_l = smallest_l
                break
    sizes, counts = _size_pairs(table, chosen)
    select_seconds = time.perf_counter() - start

    selected = [c for c in candidates if c in set(chosen)]
    if not selected:
        what = f"{k}-anonymous" + (f" and {l}-diverse" if l else "")
        if require_features:
            raise DataError(
                f"no quasi-identifier can be kept with the table {what} "
                "(--require-features); lower -k or name other --quasi-identifiers"
            )
        if candidates:
            warnings.warn(
                f"no quasi-identifier can be kept with the table {what}: writing the target "
                "(and kept columns) only; pass --require-features to refuse instead",
                DpkitWarning,
                stacklevel=2,
            )
    by_name = {t.feature: t for t in trials}
    entries = []
    for rank, name in enumerate(ranking, start=1):
        t = by_name[name]
        entry: dict[str, Any] = {"rank": rank, "feature": name, "score": scores[name], "selected": t.kept}
        if not t.kept:
            entry["smallest_class_if_added"] = t.smallest_class
            if t.smallest_l is not None:
                entry["smallest_l_if_added"] = t.smallest_l
        entries.append(entry)
    release: dict[str, Any] = {
        "score": SCORE_NAMES[ranker],
        "candidates": list(candidates),
        "ranking": entries,
        "selected": selected,
        "selection_order": list(chosen),
        "rejected": [
            {"feature": t.feature, "smallest_class": t.smallest_class}
            | ({"smallest_l": t.smallest_l} if t.smallest_l is not None else {})
            for t in trials if not t.kept
        ],
        "identifier_like_left_out": list(ids),
        "equivalence_classes": {
            "classes": int(counts.sum()),
            "smallest": int(sizes.min()),
            "largest": int(sizes.max()),
            "histogram": _histogram(sizes, counts, k),
        },
        "seconds": {"ranking": round(rank_seconds, 4), "greedy": round(select_seconds, 4)},
    }
    if sensitive is not None:
        release["l_diversity"] = {"sensitive": sensitive, "l": int(current_l), "l_required": l, "kind": "distinct"}
    wanted = set(selected) | {target, *keep} | ({sensitive} if sensitive else set())
    out_cols = [c for c in names if c in wanted]
    write_rows(table, out_cols, output, delimiter)
    table.df.unpersist()
    return SparkSelection(release=release, candidates=list(candidates), selected=selected,
                          output_columns=out_cols, n_rows=n)


# --------------------------------------------------------------------------- writing

def write_rows(table: _Table, columns: list[str], output: str, delimiter: str) -> None:
    """Write the kept rows' ``columns`` (in read order) with the Spark row writer of
    ``generalize`` and ``--assign`` (:func:`dpkit.engine.spark_write.write_rows`): each Arrow
    batch is formatted on the executors with ``write_csv``'s settings (the numpy engine's
    bytes), Spark writes the part files, and a local output is their ordered concatenation,
    written atomically; a URI or ``DIR/`` stays Spark's directory of part files, and
    ``.parquet`` a Parquet directory (docs/spark.md, "Row-level outputs").
    """
    import pandas as pd

    from dpkit.engine.spark_write import write_rows as spark_write_rows

    fields = [table.fields[c] for c in columns]
    ordered = table.df.select(*fields)  # the kept rows in read order: partition by partition

    def render(batch: Any) -> Any:
        return pd.DataFrame({c: batch.column(i).to_pandas() for i, c in enumerate(columns)}, columns=columns)

    spark_write_rows(ordered.sparkSession, ordered, render, columns, output, delimiter=delimiter)
