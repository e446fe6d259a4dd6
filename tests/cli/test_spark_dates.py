"""Date columns on the Spark engine (issue 36 item 4): the executors parse dates with the numpy
engine's parse function (a date column takes the exact encoder), so a keyed run writes the same
bytes on both engines, with a schema and without one."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

KEY = "0x5be1c0d7a93e4f2816c4b0e9d7a3f152"
SCHEMA = """\
target: churn
missing: "?"
missing_policy: drop
columns:
  signup_date: {type: date, bounds: [2019-01-01, 2025-01-01]}
  plan: {type: categorical, values: [basic, pro]}
  churn: {type: categorical, values: ["no", "yes"]}
"""


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("the Spark engine needs Java")
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master(os.environ.get("DPKIT_TEST_SPARK_MASTER", "local[2]"))
               .appName("dpkit-dates").config("spark.ui.enabled", "false")
               .config("spark.sql.files.maxPartitionBytes", str(64 * 1024)).getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()  # test_spark.py builds its own session (another master) with getOrCreate


def _table(path: Path, n: int = 4000) -> None:
    first = dt.date(2019, 1, 1).toordinal()
    lines = ["signup_date,plan,churn"]
    for i in range(n):
        d = dt.date.fromordinal(first + (i * 7919) % 2192)
        text = "?" if i % 97 == 0 else d.isoformat()
        lines.append(f"{text},{'basic' if i % 3 else 'pro'},{'yes' if d.year >= 2022 else 'no'}")
    path.write_text("\n".join(lines) + "\n")


def test_publish_with_a_date_is_the_same_on_spark(tmp_path, spark):
    import dpkit

    data, schema = tmp_path / "t.csv", tmp_path / "s.yaml"
    _table(data)
    schema.write_text(SCHEMA)
    out = {}
    for engine in ("numpy", "spark"):
        o = tmp_path / f"{engine}.csv"
        dpkit.publish(str(data), schema=str(schema), epsilon=1, random_state=KEY, engine=engine, output=str(o))
        out[engine] = o.read_bytes()
    assert out["numpy"] == out["spark"] and b"[2019-01-01," in out["numpy"]


def test_no_schema_date_is_the_same_on_spark(tmp_path, spark):
    import dpkit

    data = tmp_path / "t.csv"
    _table(data)
    out = {}
    for engine in ("numpy", "spark"):
        o = tmp_path / engine / "rel.csv"
        o.parent.mkdir()
        dpkit.publish(str(data), target="churn", epsilon=1, delta=1e-6, date=["signup_date"], random_state=KEY,
                      engine=engine, output=str(o))
        out[engine] = (o.read_bytes(), o.with_suffix(".schema.yaml").read_bytes())
    assert out["numpy"] == out["spark"] and b"type: date" in out["numpy"][1]
