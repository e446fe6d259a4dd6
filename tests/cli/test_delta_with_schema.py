"""`--delta` with `--schema` is accepted and unused (issue 43 papercut): the domain is public,
nothing in a run with a schema spends a δ, and a script that passes the same flags to every run
works with or without a schema. The report says the run is ε-DP (δ 0)."""

from __future__ import annotations

import json

import pandas as pd

import dpkit
from dpkit.cli import cli
from dpkit.cli.boundary import run

DATA = "sample_data/adult/train.csv"
SCHEMA = "taxonomies/adult.yaml"


def test_publish_with_a_schema_takes_delta_and_spends_none(tmp_path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "r.csv"
    code = run(cli, ["publish", DATA, "--schema", SCHEMA, "--target", "income", "--epsilon", "1", "--delta", "1e-6",
                     "--levels", "3", "-o", str(out), "-q"])
    assert code == 0, capsys.readouterr().err
    privacy = json.loads((tmp_path / "r.report.json").read_text())["privacy"]
    assert privacy["model"] == "epsilon-dp" and privacy["delta"] == 0
    assert not (tmp_path / "r.schema.yaml").exists()  # nothing learned


def test_forest_train_with_a_schema_takes_delta(tmp_path, capsys) -> None:  # noqa: ANN001
    code = run(cli, ["forest", "train", DATA, "--schema", SCHEMA, "--target", "income", "--epsilon", "1",
                     "--delta", "1e-6", "--trees", "2", "--depth", "2", "-o", str(tmp_path / "m.json"), "-q"])
    assert code == 0, capsys.readouterr().err


def test_the_library_takes_delta_with_a_schema() -> None:
    df = pd.read_csv(DATA, dtype=str, nrows=3000)
    release = dpkit.publish(df, schema=SCHEMA, target="income", epsilon=1.0, delta=1e-6, levels=2,
                            random_state="0x5e1ea5ed70ca11e2b0de0c3a7e5a1f00")
    assert release.report["privacy"]["delta"] == 0
