"""A Spark DataFrame is registered and identified by its content (issue 37 item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dpkit
from dpkit.ledger import fingerprint

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
IRIS = REPO / "sample_data" / "iris" / "iris.csv"


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from dpkit.engine.spark.session import session

    return session("local[1]")


def test_spark_dataframe_by_content(spark, tmp_path) -> None:
    df = spark.read.csv(str(IRIS), header=True, inferSchema=True)
    digest = fingerprint(df)
    assert digest == fingerprint(df.orderBy("species", "sepal_length_cm"))  # row order is not data
    assert digest != fingerprint(df.limit(149))  # a record removed
    swapped = df.replace("setosa", "virginica").limit(150)
    assert digest != fingerprint(swapped)
    book = dpkit.Ledger(tmp_path / "l.db")
    book.register("iris", df, cap=1)
    with pytest.raises(dpkit.LedgerError, match="already registered"):
        book.register("again", df.orderBy("petal_width_cm"), cap=1)
