"""--engine / $DPKIT_ENGINE: what the Spark engine refuses before starting Spark (docs/spark.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run

ROOT = Path(__file__).resolve().parents[2]
S1 = ROOT / "sample_data/clustering/s1.csv"
ADULT = ROOT / "sample_data/adult/train.csv"
SCHEMA = ROOT / "taxonomies/adult.yaml"


def invoke(args, env=None):
    runner = CliRunner()
    with runner.isolation(env=env) as (_, err, _):
        code = boundary_run(cli, [str(a) for a in args])
    return code, err.getvalue().decode(errors="replace")


def cluster_args(tmp_path, *extra):
    return ["cluster", S1, "--columns", "x,y", "-k", "3", "--epsilon", "1", "-o", tmp_path / "c.csv", *extra]


def test_generalize_kanon_report_refused_on_spark(tmp_path):
    report = tmp_path / "k.report.json"
    report.write_text(json.dumps({"dpkit_version": "0.2", "command": "kanon-select", "parameters": {"generalize": True}, "release": {}}))
    code, err = invoke(["generalize", ADULT, "--cut", report, "-o", tmp_path / "g.csv", "--engine", "spark"])
    assert code == 2 and "a kanon-select report is applied on the numpy engine only" in err and "(--engine)" in err
    assert not (tmp_path / "g.csv").exists()


@pytest.mark.parametrize("args", [
    ["taxonomy", "validate", SCHEMA, "-"],
])
def test_stdin_refused_on_spark_before_spark_starts(args):
    code, err = invoke([*args, "--engine", "spark"])
    assert code == 2 and "not stdin" in err


def test_row_outputs_refused_where_executors_cannot_write(tmp_path):
    """A local -o with a cluster master: the executors would write to their own disks."""
    from types import SimpleNamespace

    from dpkit.engine.spark.write import check_output
    from dpkit.errors import DataError, DpkitUsageError

    yarn = SimpleNamespace(sparkContext=SimpleNamespace(master="yarn"))
    for out in (str(tmp_path / "a.csv"), "-", str(tmp_path / "parts") + "/"):
        with pytest.raises(DpkitUsageError, match="executors cannot write"):
            check_output(yarn, out)
    check_output(yarn, "hdfs://nn/out/assign/")  # a shared URI: a directory of part files
    check_output(yarn, (tmp_path / "a.csv").as_uri())  # file:// = a mount every executor shares
    local = SimpleNamespace(sparkContext=SimpleNamespace(master="local-cluster[2,1,1024]"))
    check_output(local, str(tmp_path / "a.csv"))
    (tmp_path / "there").mkdir()
    with pytest.raises(DataError, match="already exists"):
        check_output(local, str(tmp_path / "there") + "/")
    with pytest.raises(DataError, match="does not exist"):
        check_output(local, str(tmp_path / "nope" / "a.csv"))


def test_output_kinds():
    from dpkit.engine.spark.write import output_kind

    assert output_kind("a.csv") == "file" and output_kind("-") == "file"
    assert output_kind("file:///x/a.csv") == "file"
    assert output_kind("out/") == "dir" and output_kind("s3a://b/out") == "dir"
    assert output_kind("a.parquet") == "parquet" and output_kind("hdfs://nn/a.parquet/") == "parquet"


def test_stdin_refused_on_spark(tmp_path):
    code, err = invoke(["publish", "-", "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                        "-o", tmp_path / "r.csv", "--engine", "spark"])
    assert code == 2 and "not stdin" in err


def test_missing_pyspark_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    code, err = invoke(["publish", ADULT, "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                        "-o", tmp_path / "r.csv", "--engine", "spark"])
    assert code == 2 and "pip install 'dpkit[spark]'" in err and "Traceback" not in err


def test_unknown_engine_is_a_usage_error(tmp_path):
    code, err = invoke(["publish", ADULT, "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                        "-o", tmp_path / "r.csv", "--engine", "duckdb"])
    assert code == 2


@pytest.mark.parametrize("engine", [None, "numpy"])
def test_numpy_is_the_default(tmp_path, engine):
    extra = ["--engine", engine] if engine else []
    code, err = invoke(cluster_args(tmp_path, "--bounds", "0:1e6,0:1e6", "--seed", "1", *extra))
    assert code == 0, err
