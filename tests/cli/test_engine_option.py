"""--engine / $DPKIT_ENGINE: what the Spark engine refuses before starting Spark (docs/spark.md)."""

from __future__ import annotations

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


def test_assign_refused_on_spark(tmp_path):
    code, err = invoke(cluster_args(tmp_path, "--bounds", "0:1e6,0:1e6", "--assign", tmp_path / "a.csv",
                                    "--engine", "spark"))
    assert code == 2 and "--assign writes one row per input row" in err
    assert not (tmp_path / "c.csv").exists()


def test_data_bounds_refused_on_spark_via_env(tmp_path):
    code, err = invoke(cluster_args(tmp_path, "--allow-data-bounds"), env={"DPKIT_ENGINE": "spark"})
    assert code == 2 and "--allow-data-bounds runs on --engine numpy only" in err


def test_generalize_refused_on_spark(tmp_path):
    code, err = invoke(["generalize", ADULT, "--cut", tmp_path / "r.json", "-o", tmp_path / "g.csv",
                        "--engine", "spark"])
    assert code == 2 and "generalize writes one row per input row" in err


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
