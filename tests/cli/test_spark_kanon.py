"""`kanon-select --engine spark` (docs/spark.md): the numpy engine's release from Spark jobs.

On ``local-cluster[2,1,1024]`` (the session fixture of test_spark.py; small input splits, so
the rows cross partition borders). XGB-KA's ranking on one XGBoost worker, the rows in the
numpy engine's order, gives its gains bit for bit: output and report must be the same bytes.
On several workers (distributed sketch) the ranking may differ; the output must still be
k-anonymous (checked by pycanon, a library independent of dpkit's counting).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from test_spark import ADULT, SCHEMA, _invoke, parquet, spark  # noqa: F401 — the session fixtures

from dpkit.cli import cli as main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark")]


def _kanon(args: list) -> None:
    result = CliRunner().invoke(main, ["kanon-select", *[str(a) for a in args]], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _release(report: Path) -> dict:
    data = json.loads(report.read_text())
    data["release"].pop("seconds")  # timings
    return data


def _same(tmp_path: Path, data_numpy: Path, data_spark: Path, args: list) -> Path:
    """numpy and Spark write the same output bytes and report; returns the Spark output."""
    outs = {}
    for engine, data in (("numpy", data_numpy), ("spark", data_spark)):
        out = tmp_path / f"{engine}.csv"
        _kanon([data, *args, "-o", out, "--engine", engine, "-q"])
        outs[engine] = out
    assert outs["numpy"].read_bytes() == outs["spark"].read_bytes()
    assert _release(tmp_path / "numpy.report.json") == _release(tmp_path / "spark.report.json")
    return outs["spark"]


def test_xgb_ka_is_the_same_on_spark(tmp_path, pycanon):
    """XGB-KA with the schema, the --rank-sample draw (the same positions), ℓ-diversity."""
    out = _same(tmp_path, ADULT, ADULT, ["--schema", SCHEMA, "--target", "income", "-k", "5", "--rank-sample",
                                         "4000", "--seed", "3", "--sensitive", "occupation", "-l", "2"])
    rel = json.loads((tmp_path / "spark.report.json").read_text())["release"]
    qis = rel["selected"]
    assert qis
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert pycanon.k_anonymity(df, qis) >= 5
    assert pycanon.l_diversity(df, qis, ["occupation"]) >= 2


def test_hamming_from_parquet_without_schema(tmp_path, parquet):  # noqa: F811 — the imported fixture
    """Greedy-Hamdist without a schema ("?" an ordinary value), Spark reading Parquet."""
    _same(tmp_path, ADULT, parquet["adult"], ["--target", "income", "-k", "10", "--ranker", "hamming",
                                              "--keep", "fnlwgt"])


def test_ranking_on_every_row_is_the_same_on_spark(tmp_path, pycanon):
    """--rank-sample 0: XGBoost trains in this process on every row, taken from Spark in position
    order; without a schema the non-numeric columns' categories are numbered on Spark (first
    seen, over every row) as pandas.factorize numbers them: the same ranking, bytes and report."""
    small = tmp_path / "adult-3000.csv"
    small.write_text("".join(ADULT.read_text().splitlines(keepends=True)[:3001]))
    out = _same(tmp_path, small, small, ["--target", "income", "-k", "10", "--rank-sample", "0"])
    rel = json.loads((tmp_path / "spark.report.json").read_text())["release"]
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(df) == 3000 and rel["selected"]
    assert pycanon.k_anonymity(df, rel["selected"]) >= 10
    assert rel["equivalence_classes"]["smallest"] == pycanon.k_anonymity(df, rel["selected"])


def test_errors_are_the_numpy_messages(tmp_path):
    lines = ADULT.read_text().splitlines()[:60]
    parts = lines[30].split(",")
    parts[1] = "Martian"  # workclass: not in the taxonomy
    lines[30] = ",".join(parts)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    ids = tmp_path / "ids.csv"
    ids.write_text("id,sex,income\n" + "".join(f"{i},{'MF'[i % 2]},{'ab'[i % 3 == 0]}\n" for i in range(40)))
    cases = [
        [bad, "--schema", SCHEMA, "--target", "income", "-k", "2", "-v"],
        [bad, "--schema", SCHEMA, "--target", "income", "-k", "2"],
        [ids, "--target", "income", "-k", "2", "--qi", "id,sex"],
        [ids, "--target", "income", "-k", "50"],
    ]
    for args in cases:
        msgs = []
        for engine in ("numpy", "spark"):
            out = tmp_path / f"{engine}.csv"
            code, err = _invoke(["kanon-select", *args, "-o", out, "--engine", engine])
            assert code == 1 and not out.exists()
            msgs.append(err.strip().splitlines()[-1])
        assert msgs[0] == msgs[1], msgs
    assert "bad.csv:31:" in msgs[0] or "larger than the table" in msgs[0]
