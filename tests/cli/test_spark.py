"""The Spark engine gives the numpy engine's release, byte for byte (docs/spark.md).

One SparkSession for the whole test session, on ``local-cluster[2,1,1024]`` (two executor
JVMs, as on a real cluster) unless ``$DPKIT_TEST_SPARK_MASTER`` names another master. Small
input splits force several partitions per file, so row positions cross partition borders.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dpkit.cli import cli as main

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data/adult/train.csv"
S1 = ROOT / "sample_data/clustering/s1.csv"
SCHEMA = ROOT / "taxonomies/adult.yaml"


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("the Spark engine needs Java")
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = os.environ.get("DPKIT_TEST_SPARK_MASTER", "local-cluster[2,1,1024]")
    session = (
        SparkSession.builder.master(master).appName("dpkit-tests")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.files.maxPartitionBytes", str(512 * 1024))  # several splits per file
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.task.maxFailures", "1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


_PARQUET: dict[Path, Path] = {}


def csv_as_parquet(path: Path) -> Path:
    return _PARQUET[path]


@pytest.fixture(scope="session")
def parquet(tmp_path_factory):
    import pandas as pd

    out = tmp_path_factory.mktemp("pq")
    paths = {}
    for name, src in (("adult", ADULT), ("s1", S1)):
        df = pd.read_csv(src, dtype=str, keep_default_na=False)
        p = out / f"{name}.parquet"
        df.to_parquet(p, index=False)
        paths[name] = p
        _PARQUET[src] = p
    return paths


def _invoke(args: list[str]) -> tuple[int, str]:
    """Through dpkit's error boundary, as the shell would: (exit code, stderr)."""
    from dpkit.cli.boundary import run as boundary_run

    runner = CliRunner()
    with runner.isolation() as (_, err, _):
        code = boundary_run(main, [str(a) for a in args])
    return code, err.getvalue().decode(errors="replace")


def _run(args: list[str]) -> None:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _release(report: Path) -> dict:
    data = json.loads(report.read_text())
    data["release"].pop("model", None)  # the model's path
    if "not_private_outputs" in data["release"]:  # paths: each engine writes to its own directory
        data["release"]["not_private_outputs"] = [Path(p).name for p in data["release"]["not_private_outputs"]]
    return {k: data[k] for k in ("privacy", "spends", "release")}


def _both(tmp_path: Path, spark, make_args, out_name: str, data_csv: Path, data_pq: Path | None) -> None:
    """Run on numpy (CSV), Spark (CSV) and Spark (Parquet); outputs must be the same bytes.

    ``data_pq=None`` runs Spark on the Parquet copy only (the costly commands: time)."""
    outs = {}
    runs = [("numpy", "numpy", data_csv), ("spark-csv", "spark", data_csv), ("spark-parquet", "spark", data_pq)]
    if data_pq is None:
        runs = [("numpy", "numpy", data_csv), ("spark-parquet", "spark", csv_as_parquet(data_csv))]
    for tag, engine, data in runs:
        d = tmp_path / tag
        d.mkdir()
        _run([*make_args(data, d / out_name), "--engine", engine, "--seed", "7"])
        outs[tag] = d
    base = outs["numpy"]
    for tag in [t for t in outs if t != "numpy"]:
        for f in sorted(base.iterdir()):
            other = outs[tag] / f.name
            if f.name.endswith(".report.json"):
                assert _release(f) == _release(other), f"{tag}: {f.name} differs"
            else:
                assert f.read_bytes() == other.read_bytes(), f"{tag}: {f.name} differs"


def test_publish_is_the_same_on_spark(tmp_path, spark, parquet):
    def args(data, out):
        return ["publish", data, "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                "--levels", "6", "-o", out, "-q"]

    _both(tmp_path, spark, args, "released.csv", ADULT, None)  # Parquet (CSV: the forest test)


def test_forest_is_the_same_on_spark(tmp_path, spark, parquet):
    def args(data, out):
        return ["forest", "train", data, "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                "--trees", "4", "--depth", "2", "--columns", "age,education,sex,hours-per-week",
                "-o", out, "-q"]

    _both(tmp_path, spark, args, "model.json", ADULT, parquet["adult"])  # CSV and Parquet


def test_forest_keeping_missing_numbers_is_the_same_on_spark(tmp_path, spark):
    """missing_policy: keep, '?' in age for 30 % of the rows: the missing child (a NaN routed by
    dpkit.engine.keys.Route, its counts from the node's totals) is the same on both engines."""
    import pandas as pd

    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False).iloc[:4000]
    df.loc[np.random.default_rng(0).random(len(df)) < 0.3, "age"] = "?"
    data = tmp_path / "holes.csv"
    df.to_csv(data, index=False)
    schema = tmp_path / "keep.yaml"
    schema.write_text(SCHEMA.read_text().replace("missing_policy: drop", "missing_policy: keep"))

    def args(data, out):
        return ["forest", "train", data, "--schema", schema, "--target", "income", "--epsilon", "2",
                "--trees", "2", "--depth", "2", "--columns", "age,education,sex", "--features-per-node", "all",
                "-o", out, "-q"]

    pq = tmp_path / "holes.parquet"
    df.to_parquet(pq, index=False)
    _both(tmp_path, spark, args, "model.json", data, pq)
    model = json.loads((tmp_path / "numpy" / "model.json").read_text())
    assert model["features"][0]["missing"] == "branch"


@pytest.mark.parametrize("algorithm", ["dpqt", "dpkmeans"])
def test_cluster_is_the_same_on_spark(tmp_path, spark, parquet, algorithm):
    def args(data, out):
        extra = ["--histogram", out.parent / "hist.csv"] if algorithm == "dpqt" else ["--iterations", "2"]
        return ["cluster", data, "--columns", "x,y", "-k", "15", "--epsilon", "1", "--bounds", "0:1e6,0:1e6",
                "--algorithm", algorithm, "-o", out, *extra]

    _both(tmp_path, spark, args, "centroids.csv", S1, parquet["s1"])


def test_cluster_learning_its_bounds_is_the_same_on_spark(tmp_path, spark, parquet):
    """No --bounds, no --schema: the bounds are learned where the data lives (issue 22), from the
    same exact profile as on numpy, and the cached points clipped to them."""
    def args(data, out):
        return ["cluster", data, "--columns", "x,y", "-k", "15", "--epsilon", "1", "--histogram",
                out.parent / "hist.csv", "-o", out, "-q"]

    _both(tmp_path, spark, args, "centroids.csv", S1, parquet["s1"])


def test_cluster_learning_its_bounds_reads_its_input_once(spark, monkeypatch):
    """The learned box clips the cached points (SparkFrame.clipped): one load_spark per run,
    where a second read encoded the input again; the centres and warnings are numpy's."""
    import warnings

    import dpkit
    import dpkit.engine.spark.read as spark_read

    kw = {"columns": ["x", "y"], "k": 15, "epsilon": 1.0, "seed": "0x3f9a2c71d4e8b6059a1c7e3d2b8f4a60"}
    got = {}
    real, calls = spark_read.load_spark, []
    monkeypatch.setattr(spark_read, "load_spark", lambda *a, **k: calls.append(1) or real(*a, **k))
    for engine in ("numpy", "spark"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = dpkit.cluster(str(S1), engine=engine, **kw)
        # as a set: the library's two Spark passes may repeat a notice the CLI prints once
        got[engine] = (result.centroids[result.columns].to_numpy(), sorted({str(w.message) for w in caught
                                                                           if not _third_party(w)}))
    assert len(calls) == 1
    assert np.array_equal(got["numpy"][0], got["spark"][0])
    assert got["numpy"][1] == got["spark"][1]  # no clipping warning on either: np.clip is silent


def test_frame_primitives_agree(spark):
    """Every primitive, including row positions across partitions (RowHash)."""
    from dpkit.engine import load
    from dpkit.engine.keys import Col, RowHash
    from dpkit.io.source import ReadOptions
    from dpkit.schema.parse import load_schema

    schema = load_schema(SCHEMA)
    cols = ["age", "workclass", "income"]
    with pytest.warns(Warning):
        a = load(ReadOptions(str(ADULT)), schema, cols)
    with pytest.warns(Warning):
        b = load(ReadOptions(str(ADULT)), schema, cols, engine="spark")
    assert a.count() == b.count()
    keys, shape = [RowHash(99, 5), Col("income")], (5, 2)
    assert np.array_equal(a.counts(keys, shape), b.counts(keys, shape))
    for x, y in zip(a.value_counts("age", keys, shape), b.value_counts("age", keys, shape), strict=True):
        assert np.array_equal(x, y)
    for x, y in zip(a.sums(["age"], keys, shape), b.sums(["age"], keys, shape), strict=True):
        assert np.array_equal(x, y)
    a2, b2 = a.with_column("n", RowHash(3, 4)), b.with_column("n", RowHash(3, 4))
    for x, y in zip(a2.cells([Col("n"), Col("workclass")], (4, 9)), b2.cells([Col("n"), Col("workclass")], (4, 9)),
                    strict=True):
        assert np.array_equal(x, y)


def test_bad_value_gives_the_numpy_message(tmp_path, spark):
    bad = tmp_path / "bad.csv"
    lines = ADULT.read_text().splitlines()[:50]
    parts = lines[20].split(",")
    parts[1] = " Martian"  # workclass: not in the taxonomy
    lines[20] = ",".join(parts)
    bad.write_text("\n".join(lines) + "\n")
    for verbose in ([], ["-v"]):  # the log's form (no raw value) and the data owner's (-v)
        msgs = []
        for engine in ("numpy", "spark"):
            code, err = _invoke(["publish", bad, "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                                 "-o", tmp_path / f"{engine}.csv", "--engine", engine, *verbose])
            assert code != 0 and ("Traceback" not in err or verbose)  # -v adds the traceback
            msgs.append(err.strip().splitlines()[-1])
            assert not (tmp_path / f"{engine}.csv").exists()
        assert msgs[0] == msgs[1]
        if verbose:
            assert "bad.csv:21:" in msgs[1] and "Martian" in msgs[1]
        else:
            assert "bad.csv" in msgs[1] and "Martian" not in msgs[1]


def test_quoted_csv_is_read_by_spark_and_agrees(tmp_path, spark):
    """A local file with quotes is not cut into byte ranges: Spark's CSV reader reads it."""
    from dpkit.engine import load
    from dpkit.engine.keys import Col
    from dpkit.io.source import ReadOptions
    from dpkit.schema.parse import load_schema

    lines = ADULT.read_text().splitlines()[:400]
    lines[5] = ",".join(f'"{v}"' for v in lines[5].split(","))
    path = tmp_path / "quoted.csv"
    path.write_text("\n".join(lines) + "\n")
    schema = load_schema(SCHEMA)
    cols = ["age", "workclass", "income"]
    with pytest.warns(Warning):
        a = load(ReadOptions(str(path), delimiter=","), schema, cols)
    with pytest.warns(Warning):
        b = load(ReadOptions(str(path), delimiter=","), schema, cols, engine="spark")
    assert a.count() == b.count()
    keys, shape = [Col("workclass"), Col("income")], (len(schema.columns["workclass"].leaves), 2)
    assert np.array_equal(a.counts(keys, shape), b.counts(keys, shape))
    assert b.df.count() == b.count()  # the row view of the packed batches


@pytest.mark.parametrize("command", ["publish", "forest"])
def test_no_schema_run_is_the_same_on_spark(tmp_path, spark, command):
    """Without --schema the domain is learned where the data lives (issue 22): the Spark run
    learns the same schema and writes the same release as the numpy run, byte for byte."""
    outs = {}
    for engine in ("numpy", "spark"):
        d = tmp_path / engine
        d.mkdir()
        head = (["publish", ADULT, "-o", d / "out.csv", "--ignore", "fnlwgt"] if command == "publish" else
                ["forest", "train", ADULT, "-o", d / "out.json", "--trees", "3", "--depth", "2",
                 "--columns", "age,education,sex,hours-per-week"])
        _run([*head, "--target", "income", "--epsilon", "1", "--delta", "1e-6", "--engine", engine,
              "--seed", "0x3f9a2c71d4e8b6059a1c7e3d2b8f4a60", "-q"])
        outs[engine] = d
    names = sorted(p.name for p in outs["numpy"].iterdir())
    assert "out.schema.yaml" in names and names == sorted(p.name for p in outs["spark"].iterdir())
    for name in names:
        a, b = outs["numpy"] / name, outs["spark"] / name
        if name.endswith(".report.json"):
            assert _release(a) == _release(b), name
            assert any(s["step"].startswith("domain: categories of") for s in json.loads(b.read_text())["spends"])
        elif name == "out.json":  # the model names the learned schema's path: each engine wrote its own
            text = {e: (outs[e] / name).read_text().replace(str(outs[e]), "OUT") for e in outs}
            assert text["numpy"] == text["spark"]
        else:
            assert a.read_bytes() == b.read_bytes(), name


def test_no_schema_run_reads_its_input_once(spark, monkeypatch):
    """The run encodes the string frame it learned the schema from (issue 22): a second read
    of the input (load_spark, what it did before) fails here, and the release is numpy's."""
    import warnings

    import dpkit
    import dpkit.engine.spark.read as spark_read

    key = "0x3f9a2c71d4e8b6059a1c7e3d2b8f4a60"
    kw = {"target": "income", "epsilon": 1.0, "delta": 1e-6, "ignore": ["fnlwgt"], "seed": key}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        numpy_release = dpkit.publish(str(ADULT), engine="numpy", **kw)

        def second_read(*args, **kwargs):
            raise AssertionError("the input was read a second time")

        monkeypatch.setattr(spark_read, "load_spark", second_read)
        spark_release = dpkit.publish(str(ADULT), engine="spark", **kw)
    assert spark_release.table.equals(numpy_release.table)


def _adult_head(tmp_path: Path, header: bool, bad_row: int | None = None) -> tuple[Path, list[str]]:
    """The first 3,000 records of Adult (several Spark partitions), optionally without the
    header, and with a non-number in ``age`` at data row ``bad_row``."""
    lines = ADULT.read_text().splitlines()[:3001]
    names = [c.strip() for c in lines[0].split(",")]
    rows = lines[1:]
    if bad_row is not None:
        fields = rows[bad_row].split(",")
        fields[0] = " forty"
        rows[bad_row] = ",".join(fields)
    path = tmp_path / f"adult-{header}-{bad_row}.csv"
    path.write_text("\n".join([lines[0], *rows] if header else rows) + "\n")
    return path, names


STRING_COLS = ["age", "workclass", "capital-gain", "income"]


def test_string_frame_encodes_as_a_load_does(tmp_path, spark):
    """SparkStringFrame.encode (a run without a schema, issue 22) gives load's frame and its
    warnings, from the cached codes."""
    import warnings

    from dpkit.engine import load
    from dpkit.engine.keys import Col
    from dpkit.engine.spark.strings import load_spark_strings
    from dpkit.io.source import ReadOptions
    from dpkit.schema.parse import load_schema

    schema = load_schema(SCHEMA)
    path, _ = _adult_head(tmp_path, header=True)
    opts = ReadOptions(str(path), delimiter=",")
    got = {}
    for engine, make in (("load", lambda: load(opts, schema, STRING_COLS)),
                         ("strings", lambda: load_spark_strings(opts, None).encode(schema, STRING_COLS))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got[engine] = (make(), sorted(str(w.message) for w in caught if not _third_party(w)))
    (a, wa), (b, wb) = got["load"], got["strings"]
    assert wa == wb and any("dropped rows" in w for w in wa)
    assert a.count() == b.count()
    keys, shape = [Col("workclass"), Col("income")], (len(schema.columns["workclass"].leaves), 2)
    assert np.array_equal(a.counts(keys, shape), b.counts(keys, shape))
    assert np.array_equal(a.sums(["age"], keys, shape)[1], b.sums(["age"], keys, shape)[1])


@pytest.mark.parametrize("header", [True, False])
def test_string_frame_errors_name_the_line(tmp_path, spark, header):
    """A bad value far past the first partition: the numpy engine's message and line."""
    import warnings

    from dpkit.console import set_verbose, verbose
    from dpkit.engine import load
    from dpkit.engine.spark.strings import load_spark_strings
    from dpkit.errors import DataError
    from dpkit.io.source import ReadOptions
    from dpkit.schema.parse import load_schema

    schema = load_schema(SCHEMA)
    path, names = _adult_head(tmp_path, header, bad_row=2500)
    opts = ReadOptions(str(path), delimiter=",", header=header, column_names=None if header else tuple(names))
    was = verbose()
    set_verbose(True)  # messages with their line (-v)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(DataError) as numpy_error:
                load(opts, schema, STRING_COLS)
            with pytest.raises(DataError) as spark_error:
                load_spark_strings(opts, None).encode(schema, STRING_COLS, first_line=2 if header else 1)
    finally:
        set_verbose(was)
    assert f":{2500 + (2 if header else 1)}:" in str(numpy_error.value)
    assert str(spark_error.value) == str(numpy_error.value)


@pytest.mark.parametrize("partition", ["laplace", "gaussian"])
def test_taxonomy_infer_is_the_same_on_spark(tmp_path, spark, partition):
    """`taxonomy infer --epsilon --engine spark` learns the numpy engine's schema (same key),
    with either partition selection."""
    for engine in ("numpy", "spark"):
        _run(["taxonomy", "infer", ADULT, "--target", "income", "--epsilon", "0.5", "--delta", "1e-6",
              "--seed", "0x3f9a2c71d4e8b6059a1c7e3d2b8f4a60", "--engine", engine, "-o", tmp_path / f"{engine}.yaml",
              "--partition", partition, "-q"])
    # the category lists' line names the partition selection's noise (the metadata's line may
    # name the discrete Gaussian with either: from ~9 columns it is the lower threshold)
    lists = [line for line in (tmp_path / "spark.yaml").read_text().splitlines() if "the category lists" in line]
    assert len(lists) == 1 and ("discrete Gaussian" in lists[0]) == (partition == "gaussian"), lists
    assert (tmp_path / "numpy.yaml").read_bytes() == (tmp_path / "spark.yaml").read_bytes()
    assert _release(tmp_path / "numpy.report.json") == _release(tmp_path / "spark.report.json")


def _third_party(w) -> bool:  # noqa: ANN001
    """A warning PySpark or py4j raise themselves (pyspark 3.5's distutils deprecation and the
    socket it leaves open, 4.x's pandas-3 notice): not dpkit's, and only ever on the Spark side."""
    return issubclass(w.category, ResourceWarning) or any(
        part in str(w.filename) for part in ("pyspark", "py4j", "distutils"))
